// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// An LSTM over 2 steps, unrolled: one GEMM applies W (with both biases as
// its C) to every step, then each step adds the recurrent GEMM of the
// previous hidden state and slices the four gates (i, o, f, c).
// CHECK-LABEL: func.func @forward
// CHECK: %[[BIAS:.*]] = graph.add %{{.*}}, %{{.*}} : (tensor<12xf32>, tensor<12xf32>) -> tensor<12xf32>
// CHECK: %[[XW:.*]] = graph.gemm %{{.*}}, %{{.*}}, %[[BIAS]] {trans_b = true} : (tensor<4x5xf32>, tensor<12x5xf32>, tensor<12xf32>) -> tensor<4x12xf32>
// CHECK-COUNT-2: graph.gemm %{{.*}}, %{{.*}} {trans_b = true} : (tensor<2x3xf32>, tensor<12x3xf32>) -> tensor<2x12xf32>
// CHECK-NOT: graph.gemm
// CHECK: %[[Y:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<1x1x2x3xf32>, tensor<1x1x2x3xf32>) -> tensor<2x1x2x3xf32>
// CHECK: return %[[Y]], %{{.*}}, %{{.*}} : tensor<2x1x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>
func.func @forward(%x: tensor<2x2x5xf32> {onnx.name = "x"}, %w: tensor<1x12x5xf32> {onnx.name = "w", onnx.initializer = dense<0.1> : tensor<1x12x5xf32>}, %r: tensor<1x12x3xf32> {onnx.name = "r", onnx.initializer = dense<0.2> : tensor<1x12x3xf32>}, %b: tensor<1x24xf32> {onnx.name = "b", onnx.initializer = dense<0.3> : tensor<1x24xf32>}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %y, %h, %c = onnx.node "LSTM"(%x, %w, %r, %b) {hidden_size = 3 : si64} opset 13 : (tensor<2x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>, tensor<1x24xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %y, %h, %c : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
