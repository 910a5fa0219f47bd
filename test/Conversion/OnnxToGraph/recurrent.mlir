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

// -----

// Layout 1: X is [batch, seq, input] and initial_h [batch, dirs, hidden];
// both are transposed to layout 0 before the steps, and Y back.
// CHECK-LABEL: func.func @forward
// CHECK-DAG: graph.transpose %arg0 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x5xf32>) -> tensor<2x3x5xf32>
// CHECK-DAG: graph.transpose %arg3 {perm = array<i64: 1, 0, 2>} : (tensor<3x1x4xf32>) -> tensor<1x3x4xf32>
// CHECK: graph.transpose %{{.*}} {perm = array<i64: 2, 0, 1, 3>} : (tensor<2x1x3x4xf32>) -> tensor<3x2x1x4xf32>
func.func @forward(%x: tensor<3x2x5xf32> {onnx.name = "x"}, %w: tensor<1x12x5xf32> {onnx.name = "w"}, %r: tensor<1x12x4xf32> {onnx.name = "r"}, %h0: tensor<3x1x4xf32> {onnx.name = "h0"}) -> !onnx.unknown {
  %none = onnx.none
  %y, %h = onnx.node "GRU"(%x, %w, %r, %none, %none, %h0) {hidden_size = 4 : si64, layout = 1 : si64} opset 14 : (tensor<3x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x4xf32>, none, none, tensor<3x1x4xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %y : !onnx.unknown
}
