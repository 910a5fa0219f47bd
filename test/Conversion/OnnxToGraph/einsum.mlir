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

// -----

// A diagonal: the repeated letter's two axes moved last, merged, and
// gathered at k * (d + 1); a trace sums it.
// CHECK-LABEL: func.func @forward
// CHECK: %[[T:.*]] = graph.transpose %arg0 {perm = array<i64: 1, 0, 2>} : (tensor<3x2x3xf32>) -> tensor<2x3x3xf32>
// CHECK: %[[R:.*]] = graph.reshape %[[T]] : tensor<2x3x3xf32> to tensor<2x9xf32>
// CHECK: %[[I:.*]] = graph.constant dense<[0, 4, 8]> : tensor<3xi64>
// CHECK: %[[D:.*]] = graph.gather %[[R]], %[[I]] {axis = 1 : i64} : (tensor<2x9xf32>, tensor<3xi64>) -> tensor<2x3xf32>
// CHECK: graph.transpose %[[D]] {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<2x3xf32>) -> tensor<2xf32>
func.func @forward(%x: tensor<3x2x3xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %0 = onnx.node "Einsum"(%x) {equation = "ibi->ib"} opset 13 : (tensor<3x2x3xf32>) -> !onnx.unknown
  %1 = onnx.node "Einsum"(%x) {equation = "ibi->b"} opset 13 : (tensor<3x2x3xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// -----

// Three operands from the left: 'ij,jk' keeps i and k (k for the third),
// then 'ik,kl->il'.
// CHECK-LABEL: func.func @forward
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<1x2x3xf32>, tensor<1x3x4xf32>) -> tensor<1x2x4xf32>
// CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<1x2x4xf32>, tensor<1x4x5xf32>) -> tensor<1x2x5xf32>
// CHECK: return %{{.*}} : tensor<2x5xf32>
func.func @forward(%a: tensor<2x3xf32> {onnx.name = "a"}, %b: tensor<3x4xf32> {onnx.name = "b"}, %c: tensor<4x5xf32> {onnx.name = "c"}) -> !onnx.unknown {
  %0 = onnx.node "Einsum"(%a, %b, %c) {equation = "ij,jk,kl->il"} opset 13 : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
