// RUN: amp-opt %s -graph-build-training=optimizer=sgd | FileCheck %s

// The gradient of an amp.cast is the cast the other way. A linear layer as
// amp-auto-cast leaves it (f32 master weight cast to f16 for an f16 matmul,
// result cast back to f32 for the loss): the loss's f32 gradient is cast
// down to f16 for the matmul's backward, which runs in f16 as its forward
// did, and the weight gradient is cast up to f32, so the update sees the
// master weight's type. The input x is not trained: its cast gets no
// gradient.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<4x8xf32> {graph.name = "x"}
// CHECK-SAME: %[[W:arg[0-9]+]]: tensor<8x2xf32> {{{.*}}graph.name = "w"
// CHECK: %[[XH:.*]] = amp.cast %[[X]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK: %[[WH:.*]] = amp.cast %[[W]] : tensor<8x2xf32> to tensor<8x2xf16>
// CHECK: %[[M:.*]] = graph.matmul %[[XH]], %[[WH]] {graph.accumulate = f32}
// CHECK: %[[Y:.*]] = amp.cast %[[M]] : tensor<4x2xf16> to tensor<4x2xf32>
// An f32 reduction accumulates in f32 anyway: it is not marked.
// CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 0, 1>, keepdims = false} :
// The output gradient, f32 -> f16.
// CHECK: %[[DY:.*]] = graph.add {{.*}} -> tensor<4x2xf32>
// CHECK-NEXT: %[[DYH:.*]] = amp.cast %[[DY]] : tensor<4x2xf32> to tensor<4x2xf16>
// CHECK: %[[XT:.*]] = graph.transpose %[[XH]]
// The backward matmul is f16 too, and says it accumulates in f32 like the
// forward one (which was not marked in the input).
// CHECK-NEXT: %[[DWH:.*]] = graph.matmul %[[XT]], %[[DYH]] {graph.accumulate = f32} : (tensor<8x4xf16>, tensor<4x2xf16>) -> tensor<8x2xf16>
// The weight gradient, f16 -> f32, is what the update reads.
// CHECK-NEXT: %[[DW:.*]] = amp.cast %[[DWH]] : tensor<8x2xf16> to tensor<8x2xf32>
// CHECK-NEXT: graph.sgd_update %{{.*}}, %[[W]], %[[DW]] : (tensor<f32>, tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
// CHECK-NOT: amp.cast
// CHECK: return
func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w: tensor<8x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %wh = amp.cast %w : tensor<8x2xf32> to tensor<8x2xf16>
  %m = graph.matmul %xh, %wh : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  %y = amp.cast %m : tensor<4x2xf16> to tensor<4x2xf32>
  %sq = graph.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %sq {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
