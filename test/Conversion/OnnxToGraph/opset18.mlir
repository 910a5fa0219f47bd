// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Opset 18: ReduceMean and ReduceMax take their axes as an input; no axes
// reduce every axis, or nothing with noop_with_empty_axes.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %axes = onnx.node "Constant"() {value = dense<[-1, 0]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  %none = onnx.none
  // CHECK: graph.reduce_mean %arg0 {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<1x3x1xf32>
  %0 = onnx.node "ReduceMean"(%x, %axes) {} opset 18 : (tensor<2x3x4xf32>, tensor<2xi64>) -> !onnx.unknown
  // CHECK: graph.reduce_max %arg0 {axes = array<i64: 0, 2>, keepdims = false} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  %1 = onnx.node "ReduceMax"(%x, %axes) {keepdims = 0 : si64} opset 18 : (tensor<2x3x4xf32>, tensor<2xi64>) -> !onnx.unknown
  // CHECK: graph.reduce_mean %arg0 {axes = array<i64: 0, 1, 2>} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>
  %2 = onnx.node "ReduceMean"(%x, %none) {} opset 18 : (tensor<2x3x4xf32>, none) -> !onnx.unknown
  // CHECK-NOT: graph.reduce_max
  // CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %arg0 :
  %3 = onnx.node "ReduceMax"(%x) {noop_with_empty_axes = 1 : si64} opset 18 : (tensor<2x3x4xf32>) -> !onnx.unknown
  return %0, %1, %2, %3 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// Split-18 with num_outputs: parts of ceil(7 / 3) = 3, the last smaller.
// CHECK-LABEL: func.func @forward
// CHECK: graph.slice %arg0 {ends = array<i64: 3, 2>, starts = array<i64: 0, 0>
// CHECK: graph.slice %arg0 {ends = array<i64: 6, 2>, starts = array<i64: 3, 0>
// CHECK: graph.slice %arg0 {ends = array<i64: 7, 2>, starts = array<i64: 6, 0>
// CHECK-SAME: -> tensor<1x2xf32>
func.func @forward(%x: tensor<7x2xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0:3 = onnx.node "Split"(%x) {num_outputs = 3 : si64} opset 18 : (tensor<7x2xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0, %0#1, %0#2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// Pad-18 with axes: the pads cover axis 1 only (given as -1).
// CHECK-LABEL: func.func @forward
// CHECK: %[[LEFT:.*]] = graph.broadcast_to %{{.*}} : tensor<1x1xf32> to tensor<2x1xf32>
// CHECK: %[[RIGHT:.*]] = graph.broadcast_to %{{.*}} : tensor<1x1xf32> to tensor<2x2xf32>
// CHECK: graph.concat %[[LEFT]], %arg0, %[[RIGHT]] {axis = 1 : i64} : (tensor<2x1xf32>, tensor<2x5xf32>, tensor<2x2xf32>) -> tensor<2x8xf32>
func.func @forward(%x: tensor<2x5xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %pads = onnx.node "Constant"() {value = dense<[1, 2]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  %axes = onnx.node "Constant"() {value = dense<[-1]> : tensor<1xi32>} opset 18 : () -> tensor<1xi32>
  %none = onnx.none
  %0 = onnx.node "Pad"(%x, %pads, %none, %axes) {mode = "constant"} opset 18 : (tensor<2x5xf32>, tensor<2xi64>, none, tensor<1xi32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// Resize-18: scales for the listed axes only; keep_aspect_ratio_policy
// not_larger takes the smaller of 8/4 and 9/3 for both axes: 4x3 -> 8x6.
// CHECK-LABEL: func.func @forward
// CHECK: graph.gather %arg0, %{{.*}} {axis = 3 : i64} : (tensor<1x1x4x3xf32>, tensor<6xi64>) -> tensor<1x1x4x6xf32>
// CHECK: %[[H:.*]] = graph.gather %arg0, %{{.*}} {axis = 2 : i64} : (tensor<1x1x4x3xf32>, tensor<8xi64>) -> tensor<1x1x8x3xf32>
// CHECK: graph.gather %[[H]], %{{.*}} {axis = 3 : i64} : (tensor<1x1x8x3xf32>, tensor<6xi64>) -> tensor<1x1x8x6xf32>
func.func @forward(%x: tensor<1x1x4x3xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %none = onnx.none
  %scales = onnx.node "Constant"() {value = dense<[2.0]> : tensor<1xf32>} opset 18 : () -> tensor<1xf32>
  %0 = onnx.node "Resize"(%x, %none, %scales) {axes = array<i64: 3>, mode = "nearest"} opset 18 : (tensor<1x1x4x3xf32>, none, tensor<1xf32>) -> !onnx.unknown
  %sizes = onnx.node "Constant"() {value = dense<[8, 9]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  %1 = onnx.node "Resize"(%x, %none, %none, %sizes) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_larger", mode = "nearest"} opset 18 : (tensor<1x1x4x3xf32>, none, none, tensor<2xi64>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
