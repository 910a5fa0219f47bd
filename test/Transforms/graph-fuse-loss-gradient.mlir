// RUN: amp-opt %s -split-input-file -graph-fuse-loss-gradient | FileCheck %s

// O1's loss: f16 logits widened, the loss in f32, its gradient (seeded by
// a step input, as the backward pass's seed is) rounded back to f16. One op
// in the loss's place writes the loss and the f16 gradient; the f32
// log-probabilities, the f32 gradient and its cast are gone.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[W:.*]] = amp.cast %arg0 : tensor<4x10xf16> to tensor<4x10xf32>
// CHECK: %[[L:.*]], %[[D:.*]] = graph.softmax_cross_entropy_with_grad %arg2, %[[W]], %arg1 {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf16>)
// CHECK-NOT: graph.softmax_cross_entropy
// CHECK-NOT: amp.cast
// CHECK: graph.neg %[[D]]
// CHECK: return %[[L]]
func.func @train_step(%x: tensor<4x10xf16> {graph.name = "x"}, %labels: tensor<4xi64> {graph.name = "labels"}, %seed: tensor<f32>)
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x10xf16> {graph.name = "g"})
    attributes {graph.loss = "loss"} {
  %w = amp.cast %x : tensor<4x10xf16> to tensor<4x10xf32>
  %loss, %lp = graph.softmax_cross_entropy %w, %labels {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  %g = graph.softmax_cross_entropy_grad %seed, %lp, %labels {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  %g16 = amp.cast %g : tensor<4x10xf32> to tensor<4x10xf16>
  %n = graph.neg %g16 : tensor<4x10xf16>
  return %loss, %n : tensor<f32>, tensor<4x10xf16>
}

// -----

// f32 with class weights and reduction "sum"; the gradient has two readers,
// so it stays f32.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[L:.*]], %[[D:.*]] = graph.softmax_cross_entropy_with_grad %arg3, %arg0, %arg1, %arg2 {reduction = "sum"} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf32>)
// CHECK: amp.cast %[[D]]
// CHECK: graph.neg %[[D]]
func.func @train_step(%x: tensor<4x10xf32> {graph.name = "x"}, %labels: tensor<4xi64> {graph.name = "labels"}, %cw: tensor<10xf32>, %seed: tensor<f32>)
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x10xf16> {graph.name = "g"}, tensor<4x10xf32> {graph.name = "h"})
    attributes {graph.loss = "loss"} {
  %loss, %lp = graph.softmax_cross_entropy %x, %labels, %cw {reduction = "sum"} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf32>)
  %g = graph.softmax_cross_entropy_grad %seed, %lp, %labels, %cw {reduction = "sum"} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4x10xf32>
  %g16 = amp.cast %g : tensor<4x10xf32> to tensor<4x10xf16>
  %n = graph.neg %g : tensor<4x10xf32>
  return %loss, %g16, %n : tensor<f32>, tensor<4x10xf16>, tensor<4x10xf32>
}

// -----

// Left alone: log-probabilities the step also returns; a gradient seeded
// by a value computed after the loss (from it); a gradient of other labels.
// CHECK-LABEL: func.func @train_step(
// CHECK-NOT: graph.softmax_cross_entropy_with_grad
// CHECK-COUNT-3: graph.softmax_cross_entropy_grad
func.func @train_step(%x: tensor<4x10xf32> {graph.name = "x"}, %labels: tensor<4xi64> {graph.name = "labels"}, %other: tensor<4xi64>, %seed: tensor<f32>)
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x10xf32> {graph.name = "lp"}, tensor<4x10xf32> {graph.name = "g1"}, tensor<4x10xf32> {graph.name = "g2"}, tensor<4x10xf32> {graph.name = "g3"})
    attributes {graph.loss = "loss"} {
  %loss, %lp = graph.softmax_cross_entropy %x, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  %g1 = graph.softmax_cross_entropy_grad %seed, %lp, %labels : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  %loss2, %lp2 = graph.softmax_cross_entropy %x, %labels {reduction = "sum"} : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  %s = graph.mul %loss2, %seed : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %g2 = graph.softmax_cross_entropy_grad %s, %lp2, %labels {reduction = "sum"} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  %loss3, %lp3 = graph.softmax_cross_entropy %x, %labels : (tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  %g3 = graph.softmax_cross_entropy_grad %seed, %lp3, %other : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  %t = graph.add %loss, %loss3 : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %t, %lp, %g1, %g2, %g3 : tensor<f32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>
}
