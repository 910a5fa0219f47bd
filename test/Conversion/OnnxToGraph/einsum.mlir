// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Attention's scores: b is the batch, d contracted, q and k each side's
// own. One batched matmul over [b, q, d] and [b, d, k].
// CHECK-LABEL: func.func @forward
// CHECK: %[[KT:.*]] = graph.transpose %arg1 {perm = array<i64: 0, 2, 1>} : (tensor<2x5x4xf32>) -> tensor<2x4x5xf32>
// CHECK: %[[MM:.*]] = graph.matmul %arg0, %[[KT]] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
// CHECK: return %[[MM]]
func.func @forward(%q: tensor<2x3x4xf32> {onnx.name = "q"}, %k: tensor<2x5x4xf32> {onnx.name = "k"}) -> !onnx.unknown {
  %0 = onnx.node "Einsum"(%q, %k) {equation = "bqd,bkd->bqk"} opset 13 : (tensor<2x3x4xf32>, tensor<2x5x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// One operand: the letters the output lacks are summed, then transposed;
// an implicit output keeps the letters used once, sorted ('ji' -> 'ij').
// CHECK-LABEL: func.func @forward
// CHECK: %[[S:.*]] = graph.reduce_sum %arg0 {axes = array<i64: 0>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
// CHECK: graph.transpose %[[S]] {perm = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<4x3xf32>
// CHECK: graph.transpose %arg0 {perm = array<i64: 2, 1, 0>}
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %0 = onnx.node "Einsum"(%x) {equation = "aij->ji"} opset 13 : (tensor<2x3x4xf32>) -> !onnx.unknown
  %1 = onnx.node "Einsum"(%x) {equation = "kji"} opset 13 : (tensor<2x3x4xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
