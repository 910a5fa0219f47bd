// RUN: amp-opt %s -split-input-file -amp-describe-step | FileCheck %s

// The facts a host loop needs, stated on @train_step: y feeds the loss as
// labels (10 classes, its ignore_index), w and b are weights, w.velocity is
// optimizer state and w.working w's working copy; the step returns
// found_inf and divides by a constant (static) scale; one update every 2
// steps. The dictionary's keys are sorted.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: graph.step_info = {accumulate = 2 : i64, checks_overflow = true, classes = {y = 10 : i64}, ignore_index = {y = -1 : i64}, loss = "loss", static_scale = 1.024000e+03 : f64, weights = ["b", "w"], working_copies = {w = "w.working"}}
func.func @train_step(%x: tensor<4x10xf32> {graph.name = "x"},
                      %y: tensor<4xi64> {graph.name = "y"},
                      %w: tensor<10xf32> {graph.init = dense<1.0> : tensor<10xf32>, graph.name = "w", graph.trainable = true},
                      %b: tensor<10xf32> {graph.init = dense<0.0> : tensor<10xf32>, graph.name = "b", graph.trainable = true},
                      %v: tensor<10xf32> {graph.init = dense<0.0> : tensor<10xf32>, graph.name = "w.velocity", graph.state},
                      %ww: tensor<10xf16> {graph.init = dense<1.0> : tensor<10xf16>, graph.name = "w.working", graph.state})
    -> (tensor<f32> {graph.name = "loss"}, tensor<i1> {graph.name = "found_inf"})
    attributes {graph.loss = "loss", graph.accumulate_steps = 2 : i64} {
  %s = graph.constant dense<1024.0> : tensor<f32>
  %l:2 = graph.softmax_cross_entropy %x, %y, %w {ignore_index = -1 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf32>)
  %f = amp.check_finite(%b), %s : (tensor<10xf32>, tensor<f32>) -> tensor<i1>
  return %l#0, %f : tensor<f32>, tensor<i1>
}

// -----

// Without loss scaling or labels: the defaults, and no weights when
// nothing has an initial value.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: graph.step_info = {accumulate = 1 : i64, checks_overflow = false, classes = {}, ignore_index = {}, loss = "", static_scale = 1.000000e+00 : f64, weights = [], working_copies = {}}
func.func @train_step(%x: tensor<4xf32> {graph.name = "x"}) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

// -----

// A module without @train_step (inference) is left as it is.
// CHECK-LABEL: func.func @forward(
// CHECK-NOT: graph.step_info
func.func @forward(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
