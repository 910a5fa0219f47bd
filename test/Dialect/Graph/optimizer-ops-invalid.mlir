// RUN: %amp-opt %s -split-input-file -verify-diagnostics

func.func @sgd_grad_type(%lr: tensor<f32>, %p: tensor<4xf16>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.sgd_update' op grad has type 'tensor<4xf32>' but param has 'tensor<4xf16>' (a gradient has the parameter's type, or f16/bf16 of its shape for an f32 parameter)}}
  %0 = graph.sgd_update %lr, %p, %g : (tensor<f32>, tensor<4xf16>, tensor<4xf32>) -> tensor<4xf16>
  return
}

// -----

func.func @low_grad_shape(%lr: tensor<f32>, %p: tensor<4xf32>, %g: tensor<2x2xbf16>) {
  // expected-error @+1 {{'graph.sgd_update' op grad has type 'tensor<2x2xbf16>' but param has 'tensor<4xf32>'}}
  %0 = graph.sgd_update %lr, %p, %g : (tensor<f32>, tensor<4xf32>, tensor<2x2xbf16>) -> tensor<4xf32>
  return
}

// -----

func.func @scale_without_skip(%lr: tensor<f32>, %p: tensor<4xf32>, %g: tensor<4xf16>, %s: tensor<f32>) {
  // expected-error @+1 {{'graph.sgd_update' op skip must be an i1 scalar, got 'tensor<f32>' (a loss_scale needs a skip before it}}
  %0 = graph.sgd_update %lr, %p, %g loss_scale %s : (tensor<f32>, tensor<4xf32>, tensor<4xf16>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func @scale_not_f32(%lr: tensor<f32>, %p: tensor<4xf32>, %g: tensor<4xf16>, %k: tensor<i1>, %s: tensor<f64>) {
  // expected-error @+1 {{'graph.sgd_update' op operand #4 must be variadic of 0D tensor of 1-bit signless integer values or 0D tensor of 32-bit float values}}
  %0 = graph.sgd_update %lr, %p, %g skip %k loss_scale %s : (tensor<f32>, tensor<4xf32>, tensor<4xf16>, tensor<i1>, tensor<f64>) -> tensor<4xf32>
  return
}

// -----

func.func @lr_not_scalar(%lr: tensor<1xf32>, %p: tensor<4xf32>, %g: tensor<4xf32>) {
  // expected-error @+1 {{'graph.sgd_update' op operand #0 must be 0D tensor of 32-bit float or 64-bit float values, but got 'tensor<1xf32>'}}
  %0 = graph.sgd_update %lr, %p, %g : (tensor<1xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @step_not_i64(%lr: tensor<f32>, %t: tensor<i32>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.momentum_update' op operand #1 must be 0D tensor of 64-bit signless integer values, but got 'tensor<i32>'}}
  %0:2 = graph.momentum_update %lr, %t, %p, %p, %p {alpha = 0.9 : f64, beta = 0.9 : f64} : (tensor<f32>, tensor<i32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @momentum_mode(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.momentum_update' op mode must be "standard" or "nesterov", got "heavy_ball"}}
  %0:2 = graph.momentum_update %lr, %t, %p, %p, %p {alpha = 0.9 : f64, beta = 0.9 : f64, mode = "heavy_ball"} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @momentum_missing_alpha(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.momentum_update' op requires attribute 'alpha'}}
  %0:2 = graph.momentum_update %lr, %t, %p, %p, %p {beta = 0.9 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @momentum_velocity_shape(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>, %v: tensor<2x2xf32>) {
  // expected-error @+1 {{'graph.momentum_update' op velocity has type 'tensor<2x2xf32>' but param has 'tensor<4xf32>'}}
  %0:2 = graph.momentum_update %lr, %t, %p, %p, %v {alpha = 0.9 : f64, beta = 0.9 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<2x2xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_mode(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.adam_update' op mode must be "onnx" or "pytorch", got "keras"}}
  %0:3 = graph.adam_update %lr, %t, %p, %p, %p, %p {mode = "keras"} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_alpha(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.adam_update' op alpha must be in [0, 1], got -5.000000e-01}}
  %0:3 = graph.adam_update %lr, %t, %p, %p, %p, %p {alpha = -0.5 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_epsilon(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.adam_update' op epsilon must be >= 0, got -1}}
  %0:3 = graph.adam_update %lr, %t, %p, %p, %p, %p {epsilon = -1.0 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adam_result_type(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.adam_update' op new_v has type 'tensor<4xf64>' but param has 'tensor<4xf32>'}}
  %0:3 = graph.adam_update %lr, %t, %p, %p, %p, %p : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf64>)
  return
}

// -----

func.func @adagrad_epsilon(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>) {
  // expected-error @+1 {{'graph.adagrad_update' op epsilon must be >= 0, got -1.000000e-03}}
  %0:2 = graph.adagrad_update %lr, %t, %p, %p, %p {epsilon = -0.001 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @adagrad_accumulator(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>, %h: tensor<4xbf16>) {
  // expected-error @+1 {{'graph.adagrad_update' op accumulator has type 'tensor<4xbf16>' but param has 'tensor<4xf32>'}}
  %0:2 = graph.adagrad_update %lr, %t, %p, %p, %h : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

func.func @schedule_kind(%t: tensor<i64>) {
  // expected-error @+1 {{'graph.lr_schedule' op kind must be "constant", "step" or "cosine", got "linear"}}
  %0 = graph.lr_schedule %t {base_lr = 0.1 : f64, kind = "linear"} : (tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @schedule_step_size(%t: tensor<i64>) {
  // expected-error @+1 {{'graph.lr_schedule' op step_size must be >= 1, got 0}}
  %0 = graph.lr_schedule %t {base_lr = 0.1 : f64, kind = "step", step_size = 0 : i64} : (tensor<i64>) -> tensor<f32>
  return
}

// -----

func.func @schedule_result(%t: tensor<i64>) {
  // expected-error @+1 {{'graph.lr_schedule' op result #0 must be 0D tensor of 32-bit float or 64-bit float values, but got 'tensor<1xf32>'}}
  %0 = graph.lr_schedule %t {base_lr = 0.1 : f64} : (tensor<i64>) -> tensor<1xf32>
  return
}

// -----

func.func @all_reduce_one_rank(%g: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'graph.all_reduce_start' op world_size must be >= 2, got 1}}
  %x = graph.all_reduce_start %g {world_size = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %m = graph.all_reduce_wait %x {world_size = 1 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

func.func @all_reduce_nothing() {
  // expected-error @+1 {{'graph.all_reduce_start' op needs at least one gradient}}
  %x = graph.all_reduce_start {world_size = 2 : i64} : () -> tensor<0xf32>
  return
}

// -----

func.func @all_reduce_f64(%g: tensor<3xf64>) {
  // expected-error @+1 {{'graph.all_reduce_start' op operand #0 must be variadic of statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type values}}
  %x = graph.all_reduce_start %g {world_size = 2 : i64} : (tensor<3xf64>) -> tensor<3xf32>
  return
}

// -----

func.func @all_reduce_skip_first(%s: tensor<i1>, %g: tensor<3xf32>) {
  // expected-error @+1 {{'graph.all_reduce_start' op takes its skip flag last, after the gradients}}
  %x = "graph.all_reduce_start"(%s, %g) {world_size = 2 : i64} : (tensor<i1>, tensor<3xf32>) -> tensor<3xf32>
  return
}

// -----

func.func @all_reduce_buffer_size(%a: tensor<2x2xf16>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.all_reduce_start' op the exchange buffer must have 7 elements (the gradients'), got 'tensor<6xf32>'}}
  %x = graph.all_reduce_start %a, %b {world_size = 2 : i64} : (tensor<2x2xf16>, tensor<3xf32>) -> tensor<6xf32>
  %m:2 = graph.all_reduce_wait %x {world_size = 2 : i64} : (tensor<6xf32>) -> (tensor<2x2xf16>, tensor<3xf32>)
  return
}

// -----

func.func @all_reduce_wait_buffer_size(%x: tensor<3xf32>) -> tensor<2x2xf16> {
  // expected-error @+1 {{'graph.all_reduce_wait' op the exchange buffer must have 4 elements (the results'), got 'tensor<3xf32>'}}
  %m = graph.all_reduce_wait %x {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<2x2xf16>
  return %m : tensor<2x2xf16>
}

// -----

func.func @all_reduce_wait_types(%g: tensor<3xf16>) -> tensor<3xf32> {
  %x = graph.all_reduce_start %g {world_size = 2 : i64} : (tensor<3xf16>) -> tensor<3xf32>
  // expected-error @+1 {{'graph.all_reduce_wait' op results must have the types of its start's gradients, one each}}
  %m = graph.all_reduce_wait %x {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

func.func @all_reduce_wait_skip(%g: tensor<3xf32>, %s: tensor<i1>) -> tensor<3xf32> {
  %x = graph.all_reduce_start %g skip %s {world_size = 2 : i64} : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
  // expected-error @+1 {{'graph.all_reduce_wait' op must take the skip flag its start takes}}
  %m = graph.all_reduce_wait %x {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

func.func @all_reduce_wait_world(%g: tensor<3xf32>) -> tensor<3xf32> {
  %x = graph.all_reduce_start %g {world_size = 2 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{'graph.all_reduce_wait' op has world_size 4 but its start has 2}}
  %m = graph.all_reduce_wait %x {world_size = 4 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  return %m : tensor<3xf32>
}

// -----

func.func @all_reduce_mixed_16bit(%a: tensor<2xf16>, %b: tensor<3xf32>) {
  // expected-error @+1 {{'graph.all_reduce_start' op a 'f16' exchange buffer carries 'f16' gradients only, got 'tensor<3xf32>'}}
  %x = graph.all_reduce_start %a, %b {world_size = 2 : i64} : (tensor<2xf16>, tensor<3xf32>) -> tensor<5xf16>
  %m:2 = graph.all_reduce_wait %x {world_size = 2 : i64} : (tensor<5xf16>) -> (tensor<2xf16>, tensor<3xf32>)
  return
}
