// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// x.view(x.size(0), -1) as PyTorch exports it without constant folding:
// the whole shape computation folds and one reshape is left.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<8x16x5x5xf32> {onnx.name = "x"}) -> tensor<8x400xf32> {
  %shape = onnx.node "Shape"(%x) {} opset 13 : (tensor<8x16x5x5xf32>) -> tensor<4xi64>
  %zero = onnx.node "Constant"() {value = dense<0> : tensor<i64>} opset 13 : () -> tensor<i64>
  %n = onnx.node "Gather"(%shape, %zero) {axis = 0 : i64} opset 13 : (tensor<4xi64>, tensor<i64>) -> tensor<i64>
  %axes = onnx.node "Constant"() {value = dense<0> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %n1 = onnx.node "Unsqueeze"(%n, %axes) {} opset 13 : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %m1 = onnx.node "Constant"() {value = dense<-1> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %spec = onnx.node "Concat"(%n1, %m1) {axis = 0 : i64} opset 13 : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  // CHECK-NEXT: %[[R:.*]] = graph.reshape %arg0 : tensor<8x16x5x5xf32> to tensor<8x400xf32>
  // CHECK-NEXT: return %[[R]]
  %y = onnx.node "Reshape"(%x, %spec) {} opset 13 : (tensor<8x16x5x5xf32>, tensor<2xi64>) -> tensor<8x400xf32>
  return %y : tensor<8x400xf32>
}

// -----

// Reshape: 0 copies a dimension unless allowzero; Flatten, Squeeze and
// Unsqueeze are reshapes too (axes attribute before opset 13).
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x1x4xf32> {onnx.name = "x"}, %s: tensor<3xi64> {onnx.name = "s", onnx.initializer = dense<[0, -1, 2]> : tensor<3xi64>}) -> (tensor<2x6x2xf32>, tensor<6x4xf32>, tensor<2x3x4xf32>, tensor<1x2x3x1x4xf32>, tensor<2x3x4xf32>) {
  // CHECK: graph.reshape %arg0 : tensor<2x3x1x4xf32> to tensor<2x6x2xf32>
  %0 = onnx.node "Reshape"(%x, %s) {} opset 14 : (tensor<2x3x1x4xf32>, tensor<3xi64>) -> tensor<2x6x2xf32>
  // CHECK: graph.reshape %arg0 : tensor<2x3x1x4xf32> to tensor<6x4xf32>
  %1 = onnx.node "Flatten"(%x) {axis = -1 : i64} opset 13 : (tensor<2x3x1x4xf32>) -> tensor<6x4xf32>
  // CHECK: graph.reshape %arg0 : tensor<2x3x1x4xf32> to tensor<2x3x4xf32>
  %2 = onnx.node "Squeeze"(%x) {axes = array<i64: 2>} opset 11 : (tensor<2x3x1x4xf32>) -> tensor<2x3x4xf32>
  // CHECK: graph.reshape %arg0 : tensor<2x3x1x4xf32> to tensor<1x2x3x1x4xf32>
  %a = onnx.node "Constant"() {value = dense<0> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %3 = onnx.node "Unsqueeze"(%x, %a) {} opset 13 : (tensor<2x3x1x4xf32>, tensor<1xi64>) -> tensor<1x2x3x1x4xf32>
  // Squeeze with no axes removes every unit dimension.
  %4 = onnx.node "Squeeze"(%x) {} opset 13 : (tensor<2x3x1x4xf32>) -> tensor<2x3x4xf32>
  return %0, %1, %2, %3, %4 : tensor<2x6x2xf32>, tensor<6x4xf32>, tensor<2x3x4xf32>, tensor<1x2x3x1x4xf32>, tensor<2x3x4xf32>
}

// -----

// Split: sizes as attribute (opset 11), as input (13), or equal parts.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<6x4xf32> {onnx.name = "x"}) -> (tensor<2x4xf32>, tensor<4x4xf32>, tensor<6x1xf32>, tensor<6x3xf32>, tensor<3x4xf32>) {
  // CHECK: graph.slice %arg0 {ends = array<i64: 2, 4>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : (tensor<6x4xf32>) -> tensor<2x4xf32>
  // CHECK: graph.slice %arg0 {ends = array<i64: 6, 4>, starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : (tensor<6x4xf32>) -> tensor<4x4xf32>
  %0:2 = onnx.node "Split"(%x) {split = array<i64: 2, 4>} opset 11 : (tensor<6x4xf32>) -> (tensor<2x4xf32>, tensor<4x4xf32>)
  %sizes = onnx.node "Constant"() {value = dense<[1, 3]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // CHECK: graph.slice %arg0 {ends = array<i64: 6, 1>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
  // CHECK: graph.slice %arg0 {ends = array<i64: 6, 4>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>}
  %1:2 = onnx.node "Split"(%x, %sizes) {axis = -1 : i64} opset 13 : (tensor<6x4xf32>, tensor<2xi64>) -> (tensor<6x1xf32>, tensor<6x3xf32>)
  // CHECK: graph.slice %arg0 {ends = array<i64: 3, 4>, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>}
  %2:2 = onnx.node "Split"(%x) {} opset 13 : (tensor<6x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>)
  return %0#0, %0#1, %1#0, %1#1, %2#0 : tensor<2x4xf32>, tensor<4x4xf32>, tensor<6x1xf32>, tensor<6x3xf32>, tensor<3x4xf32>
}

// -----

// Slice: negative indices, clamping, negative steps, axes subset.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<10x8xf32> {onnx.name = "x"}) -> (tensor<10x3xf32>, tensor<4x8xf32>) {
  %s0 = onnx.node "Constant"() {value = dense<[-3]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %e0 = onnx.node "Constant"() {value = dense<[1000]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %a0 = onnx.node "Constant"() {value = dense<[1]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  // CHECK: graph.slice %arg0 {ends = array<i64: 10, 8>, starts = array<i64: 0, 5>, steps = array<i64: 1, 1>} : (tensor<10x8xf32>) -> tensor<10x3xf32>
  %0 = onnx.node "Slice"(%x, %s0, %e0, %a0) {} opset 13 : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<10x3xf32>
  %s1 = onnx.node "Constant"() {value = dense<[9223372036854775807]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %e1 = onnx.node "Constant"() {value = dense<[-9223372036854775808]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %a1 = onnx.node "Constant"() {value = dense<[0]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %st = onnx.node "Constant"() {value = dense<[-3]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  // CHECK: graph.slice %arg0 {ends = array<i64: -1, 8>, starts = array<i64: 9, 0>, steps = array<i64: -3, 1>} : (tensor<10x8xf32>) -> tensor<4x8xf32>
  %1 = onnx.node "Slice"(%x, %s1, %e1, %a1, %st) {} opset 13 : (tensor<10x8xf32>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4x8xf32>
  return %0, %1 : tensor<10x3xf32>, tensor<4x8xf32>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<5x4xf32> {onnx.name = "x"}, %i: tensor<2x3xi64> {onnx.name = "i"}, %y: tensor<5x2xf32> {onnx.name = "y"}) -> (tensor<5x2x3xf32>, tensor<4x5xf32>, tensor<5x6xf32>, tensor<3x5x4xf32>) {
  // CHECK: graph.gather %arg0, %arg1 {axis = 1 : i64} : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<5x2x3xf32>
  %0 = onnx.node "Gather"(%x, %i) {axis = -1 : i64} opset 13 : (tensor<5x4xf32>, tensor<2x3xi64>) -> tensor<5x2x3xf32>
  // CHECK: graph.transpose %arg0 {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %1 = onnx.node "Transpose"(%x) {} opset 13 : (tensor<5x4xf32>) -> tensor<4x5xf32>
  // CHECK: graph.concat %arg0, %arg2 {axis = 1 : i64} : (tensor<5x4xf32>, tensor<5x2xf32>) -> tensor<5x6xf32>
  %2 = onnx.node "Concat"(%x, %y) {axis = -1 : i64} opset 13 : (tensor<5x4xf32>, tensor<5x2xf32>) -> tensor<5x6xf32>
  %shape = onnx.node "Constant"() {value = dense<[3, 1, 1]> : tensor<3xi64>} opset 13 : () -> tensor<3xi64>
  // CHECK: graph.broadcast_to %arg0 : tensor<5x4xf32> to tensor<3x5x4xf32>
  %3 = onnx.node "Expand"(%x, %shape) {} opset 13 : (tensor<5x4xf32>, tensor<3xi64>) -> tensor<3x5x4xf32>
  return %0, %1, %2, %3 : tensor<5x2x3xf32>, tensor<4x5xf32>, tensor<5x6xf32>, tensor<3x5x4xf32>
}

// -----

// Shape with start/end (opset 15) and Constant's scalar forms fold.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (tensor<2xi64>, tensor<f32>, tensor<3xi64>) {
  // CHECK-DAG: graph.constant dense<[3, 4]> : tensor<2xi64>
  // CHECK-DAG: graph.constant dense<2.500000e+00> : tensor<f32>
  // CHECK-DAG: graph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %0 = onnx.node "Shape"(%x) {start = -2 : i64} opset 15 : (tensor<2x3x4xf32>) -> tensor<2xi64>
  %1 = onnx.node "Constant"() {value_float = 2.5 : f32} opset 13 : () -> tensor<f32>
  %2 = onnx.node "Constant"() {value_ints = array<i64: 1, 2, 3>} opset 13 : () -> tensor<3xi64>
  return %0, %1, %2 : tensor<2xi64>, tensor<f32>, tensor<3xi64>
}
