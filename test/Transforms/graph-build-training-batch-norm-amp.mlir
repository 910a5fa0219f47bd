// RUN: amp-opt %s -graph-build-training=optimizer=sgd | FileCheck %s

// Inference-mode batch norm as amp-auto-cast leaves it at O3: an f16 input
// with f32 scale, bias and statistics. Its gradient computes the channel
// factors in f32, casts the one that multiplies dy down to f16 for the
// input gradient, and sums the scale and bias gradients in f32 from dy
// cast up, so each gradient has its operand's type. (Multiplying f16 by
// f32 directly failed type inference and aborted the compiler.)
// The input comes from a trained f32 parameter through an amp.cast, so its
// gradient is live.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[X:.*]] = amp.cast %arg0 : tensor<2x3x4x4xf32> to tensor<2x3x4x4xf16>
// CHECK: %[[DY:.*]] = amp.cast %{{.*}} : tensor<2x3x4x4xf32> to tensor<2x3x4x4xf16>
// CHECK: %[[K:.*]] = graph.cast %{{.*}} : tensor<1x3x1x1xf32> to tensor<1x3x1x1xf16>
// CHECK-NEXT: %[[DX:.*]] = graph.mul %[[DY]], %[[K]] : (tensor<2x3x4x4xf16>, tensor<1x3x1x1xf16>) -> tensor<2x3x4x4xf16>
// The input's gradient, cast back to f32, is ready first: its update follows
// it, after the last read of the input's cast.
// CHECK-NEXT: %[[DXF:.*]] = amp.cast %[[DX]] : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
// CHECK: %[[XF:.*]] = graph.cast %[[X]] : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %arg0, %[[DXF]] : (tensor<f32>, tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
// CHECK: %[[DYF:.*]] = graph.cast %[[DY]] : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
// CHECK: %[[DS:.*]] = graph.reduce_sum %{{.*}} {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<2x3x4x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %arg1, %[[DS]] : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: %[[DB:.*]] = graph.reduce_sum %[[DYF]] {axes = array<i64: 0, 2, 3>, keepdims = false} : (tensor<2x3x4x4xf32>) -> tensor<3xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %arg2, %[[DB]] : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK: return
func.func @forward(%xw: tensor<2x3x4x4xf32> {graph.name = "xw", graph.init = dense<0.5> : tensor<2x3x4x4xf32>, graph.trainable = true},
                   %scale: tensor<3xf32> {graph.name = "scale", graph.init = dense<1.0> : tensor<3xf32>, graph.trainable = true},
                   %bias: tensor<3xf32> {graph.name = "bias", graph.init = dense<0.0> : tensor<3xf32>, graph.trainable = true},
                   %mean: tensor<3xf32> {graph.name = "mean", graph.init = dense<0.1> : tensor<3xf32>},
                   %var: tensor<3xf32> {graph.name = "var", graph.init = dense<2.0> : tensor<3xf32>})
    -> (tensor<f32> {graph.name = "loss"}) {
  %x = amp.cast %xw : tensor<2x3x4x4xf32> to tensor<2x3x4x4xf16>
  %n = graph.batch_norm_inference %x, %scale, %bias, %mean, %var {epsilon = 1.000000e-05 : f64} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf16>
  %c = amp.cast %n : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
  %sq = graph.mul %c, %c : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<2x3x4x4xf32>
  %loss = graph.reduce_mean %sq {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x4x4xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
