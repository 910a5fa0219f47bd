// RUN: %amp-opt %s -canonicalize -split-input-file | FileCheck %s

// Softmax written out is one graph.softmax (SoftmaxRecognition.cpp).

// exp(x) / sum(exp(x)) over one axis, kept.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[X:.*]]: tensor<2x5xf32>)
// CHECK-NEXT: %[[S:.*]] = graph.softmax %[[X]] {axis = 1 : i64} : tensor<2x5xf32>
// CHECK-NEXT: return %[[S]]
func.func @plain(%x: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = graph.exp %x : tensor<2x5xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %2 = graph.div %0, %1 : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  return %2 : tensor<2x5xf32>
}

// -----

// With the maximum subtracted first (which softmax does itself), over axis 0.
// CHECK-LABEL: func.func @stable
// CHECK-SAME: (%[[X:.*]]: tensor<3x4xf16>)
// CHECK-NEXT: %[[S:.*]] = graph.softmax %[[X]] {axis = 0 : i64} : tensor<3x4xf16>
// CHECK-NEXT: return %[[S]]
func.func @stable(%x: tensor<3x4xf16>) -> tensor<3x4xf16> {
  %m = graph.reduce_max %x {axes = array<i64: 0>, keepdims = true} : (tensor<3x4xf16>) -> tensor<1x4xf16>
  %0 = graph.sub %x, %m : (tensor<3x4xf16>, tensor<1x4xf16>) -> tensor<3x4xf16>
  %1 = graph.exp %0 : tensor<3x4xf16>
  %2 = graph.reduce_sum %1 {axes = array<i64: 0>, keepdims = true} : (tensor<3x4xf16>) -> tensor<1x4xf16>
  %3 = graph.div %1, %2 : (tensor<3x4xf16>, tensor<1x4xf16>) -> tensor<3x4xf16>
  return %3 : tensor<3x4xf16>
}

// -----

// Not softmax: a sum over two axes, and an exp read elsewhere too.
// CHECK-LABEL: func.func @not_softmax
// CHECK-NOT: graph.softmax
// CHECK: return
func.func @not_softmax(%x: tensor<2x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>) {
  %0 = graph.exp %x : tensor<2x5xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0, 1>, keepdims = true} : (tensor<2x5xf32>) -> tensor<1x1xf32>
  %2 = graph.div %0, %1 : (tensor<2x5xf32>, tensor<1x1xf32>) -> tensor<2x5xf32>
  %3 = graph.neg %x : tensor<2x5xf32>
  %4 = graph.exp %3 : tensor<2x5xf32>
  %5 = graph.reduce_sum %4 {axes = array<i64: 1>, keepdims = true} : (tensor<2x5xf32>) -> tensor<2x1xf32>
  %6 = graph.div %4, %5 : (tensor<2x5xf32>, tensor<2x1xf32>) -> tensor<2x5xf32>
  %7 = graph.add %4, %4 : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %2, %6, %7 : tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>
}
