// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// ReduceSum takes axes as an input from opset 13; ReduceMean/Max as an
// attribute through opset 17. No axes reduces everything.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (tensor<2x1x1xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x4xf32>) {
  %axes = onnx.node "Constant"() {value = dense<[-1, 1]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1, 2>} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  %0 = onnx.node "ReduceSum"(%x, %axes) {} opset 13 : (tensor<2x3x4xf32>, tensor<2xi64>) -> tensor<2x1x1xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %1 = onnx.node "ReduceMean"(%x) {axes = array<i64: 0, -1>, keepdims = 0 : i64} opset 13 : (tensor<2x3x4xf32>) -> tensor<3xf32>
  // CHECK: graph.reduce_max %{{.*}} {axes = array<i64: 0, 1, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<f32>
  %2 = onnx.node "ReduceMax"(%x) {keepdims = 0 : i64} opset 13 : (tensor<2x3x4xf32>) -> tensor<f32>
  // noop_with_empty_axes leaves the input alone.
  %3 = onnx.node "ReduceSum"(%x) {noop_with_empty_axes = 1 : i64} opset 13 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: return {{.*}}, %arg0
  return %0, %1, %2, %3 : tensor<2x1x1xf32>, tensor<3xf32>, tensor<f32>, tensor<2x3x4xf32>
}

// -----

// Before opset 13 ReduceSum's axes are an attribute.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> tensor<2x1xf32> {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %0 = onnx.node "ReduceSum"(%x) {axes = array<i64: 1>} opset 11 : (tensor<2x3xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

// Softmax: opset 13 normalizes one axis (default -1).
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: graph.softmax %{{.*}} {axis = 2 : i64} : tensor<2x3x4xf32>
  %0 = onnx.node "Softmax"(%x) {} opset 13 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: graph.log_softmax %{{.*}} {axis = 1 : i64} : tensor<2x3x4xf32>
  %1 = onnx.node "LogSoftmax"(%x) {axis = 1 : i64} opset 13 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1 : tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// -----

// Before opset 13 the input is coerced to 2-D at axis (default 1) and the
// trailing dimensions are normalized together.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> tensor<2x3x4xf32> {
  // CHECK: %[[F:.*]] = graph.reshape %arg0 : tensor<2x3x4xf32> to tensor<2x12xf32>
  // CHECK: %[[S:.*]] = graph.softmax %[[F]] {axis = 1 : i64} : tensor<2x12xf32>
  // CHECK: graph.reshape %[[S]] : tensor<2x12xf32> to tensor<2x3x4xf32>
  %0 = onnx.node "Softmax"(%x) {} opset 11 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%s: tensor<4x10x3xf32> {onnx.name = "s"}, %l: tensor<4x3xi64> {onnx.name = "l"}, %w: tensor<10xf32> {onnx.name = "w"}) -> (tensor<4x3xf32>, tensor<4x10x3xf32>, tensor<f32>) {
  // CHECK: %{{.*}}, %{{.*}} = graph.softmax_cross_entropy %arg0, %arg1, %arg2 {ignore_index = 2 : i64, reduction = "none"} : (tensor<4x10x3xf32>, tensor<4x3xi64>, tensor<10xf32>) -> (tensor<4x3xf32>, tensor<4x10x3xf32>)
  %0:2 = onnx.node "SoftmaxCrossEntropyLoss"(%s, %l, %w) {ignore_index = 2 : i64, reduction = "none"} opset 13 : (tensor<4x10x3xf32>, tensor<4x3xi64>, tensor<10xf32>) -> (tensor<4x3xf32>, tensor<4x10x3xf32>)
  // CHECK: graph.nll_loss %{{.*}}, %arg1 {reduction = "sum"} : (tensor<4x10x3xf32>, tensor<4x3xi64>) -> tensor<f32>
  %1 = onnx.node "NegativeLogLikelihoodLoss"(%0#1, %l) {reduction = "sum"} opset 13 : (tensor<4x10x3xf32>, tensor<4x3xi64>) -> tensor<f32>
  return %0#0, %0#1, %1 : tensor<4x3xf32>, tensor<4x10x3xf32>, tensor<f32>
}

// -----

// The reductions written with other ops: L2 as sqrt of a sum of squares,
// LogSumExp shifted by the maximum (by 0 where it is not finite), Min as
// -max(-x); at opset 18 from the axes input.
// CHECK-LABEL: func.func @forward
// CHECK: %[[SQ:.*]] = graph.mul %arg0, %arg0
// CHECK: %[[S:.*]] = graph.reduce_sum %[[SQ]] {axes = array<i64: 1>, keepdims = false}
// CHECK: graph.sqrt %[[S]] : tensor<3xf32>
// CHECK: %[[M:.*]] = graph.reduce_max %arg0 {axes = array<i64: 1>} : (tensor<3x4xf32>) -> tensor<3x1xf32>
// CHECK: %[[FINITE:.*]] = graph.less
// CHECK: %[[SHIFT:.*]] = graph.where %[[FINITE]], %[[M]], %{{.*}}
// CHECK: %[[D:.*]] = graph.sub %arg0, %[[SHIFT]]
// CHECK: %[[E:.*]] = graph.exp %[[D]]
// CHECK: %[[ES:.*]] = graph.reduce_sum %[[E]] {axes = array<i64: 1>}
// CHECK: %[[L:.*]] = graph.log %[[ES]]
// CHECK: %[[LSE:.*]] = graph.add %[[L]], %[[SHIFT]]
// CHECK: graph.reshape %[[LSE]] : tensor<3x1xf32> to tensor<3xf32>
// CHECK: %[[N:.*]] = graph.neg %arg0
// CHECK: %[[MX:.*]] = graph.reduce_max %[[N]] {axes = array<i64: 0>} : (tensor<3x4xf32>) -> tensor<1x4xf32>
// CHECK: graph.neg %[[MX]]
func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %a = onnx.node "Constant"() {value = dense<[1]> : tensor<1xi64>} opset 18 : () -> tensor<1xi64>
  %0 = onnx.node "ReduceL2"(%x, %a) {keepdims = 0 : si64} opset 18 : (tensor<3x4xf32>, tensor<1xi64>) -> !onnx.unknown
  %1 = onnx.node "ReduceLogSumExp"(%x) {axes = array<i64: 1>, keepdims = 0 : si64} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  %2 = onnx.node "ReduceMin"(%x) {axes = array<i64: 0>} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// Size is a constant; CastLike casts to the second input's type; Mish is
// x tanh(softplus(x)).
// CHECK-LABEL: func.func @forward
// CHECK-DAG: graph.constant dense<12> : tensor<i64>
// CHECK-DAG: graph.cast %arg0 : tensor<3x4xf32> to tensor<3x4xf16>
// CHECK-DAG: %[[SP:.*]] = graph.softplus %arg0
// CHECK-DAG: %[[T:.*]] = graph.tanh %[[SP]]
// CHECK-DAG: graph.mul %arg0, %[[T]]
func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}, %h: tensor<2xf16> {onnx.name = "h"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = onnx.node "Size"(%x) {} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  %1 = onnx.node "CastLike"(%x, %h) {} opset 15 : (tensor<3x4xf32>, tensor<2xf16>) -> !onnx.unknown
  %2 = onnx.node "Mish"(%x) {} opset 18 : (tensor<3x4xf32>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
