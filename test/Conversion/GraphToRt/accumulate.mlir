// RUN: amp-opt %s --convert-graph-to-rt | FileCheck %s

// graph.accumulate stays on the op inside its kernel, so the Program
// writer passes it to the runtime with the op's other attributes.
// CHECK-LABEL: func.func @forward()
// CHECK: rt.kernel "matmul"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.matmul %{{.*}}, %{{.*}} {graph.accumulate = f32} : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
// CHECK: rt.kernel "reduce_sum"
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.reduce_sum %{{.*}} {axes = array<i64: 1>, graph.accumulate = f32, keepdims = false} : (tensor<4x2xf16>) -> tensor<4xf16>
func.func @forward(%x: tensor<4x8xf16> {graph.name = "x"},
                   %w: tensor<8x2xf16> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf16>})
    -> (tensor<4xf16> {graph.name = "y"}) {
  %0 = graph.matmul %x, %w {graph.accumulate = f32} : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  %1 = graph.reduce_sum %0 {axes = array<i64: 1>, keepdims = false, graph.accumulate = f32} : (tensor<4x2xf16>) -> tensor<4xf16>
  return %1 : tensor<4xf16>
}
