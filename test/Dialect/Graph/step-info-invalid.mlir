// RUN: amp-opt %s -split-input-file -verify-diagnostics

// graph.step_info is what the Program writer copies into a Program's
// StepInfo: its shape is checked when it is parsed.

// expected-error @+1 {{'func.func' op has graph.step_info that is not a dictionary}}
func.func @train_step() attributes {graph.step_info = "loss"} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has graph.step_info without 'weights'}}
func.func @train_step() attributes {graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "loss", static_scale = 1.0 : f64, working_copies = {}}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has graph.step_info whose 'accumulate' is not an i64 >= 1}}
func.func @train_step() attributes {graph.step_info = {accumulate = 0 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "loss", static_scale = 1.0 : f64, weights = [], working_copies = {}}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has graph.step_info whose 'classes' is not a dictionary of i64}}
func.func @train_step() attributes {graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {y = "ten"}, ignore_index = {}, loss = "loss", static_scale = 1.0 : f64, weights = [], working_copies = {}}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has graph.step_info whose 'weights' is not an array of strings}}
func.func @train_step() attributes {graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "loss", static_scale = 1.0 : f64, weights = [1], working_copies = {}}} {
  return
}

// -----

// expected-error @+1 {{'func.func' op has graph.step_info with an unknown key 'scale'}}
func.func @train_step() attributes {graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "loss", scale = 2.0 : f64, static_scale = 1.0 : f64, weights = [], working_copies = {}}} {
  return
}

// -----

func.func @f() {
  // expected-error @+1 {{'graph.constant' op has graph.step_info but only a function may carry it}}
  %0 = graph.constant {graph.step_info = {}} dense<1.0> : tensor<f32>
  return
}

// -----

// world_size may be left out (1), but a given one is at least 1.
// expected-error @+1 {{'func.func' op has graph.step_info whose 'world_size' is not an i64 >= 1}}
func.func @train_step() attributes {graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "loss", static_scale = 1.0 : f64, weights = [], working_copies = {}, world_size = 0 : i64}} {
  return
}
