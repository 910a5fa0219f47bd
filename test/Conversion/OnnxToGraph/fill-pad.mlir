// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// ConstantOfShape and Range become constants; Trilu a where over a
// constant mask.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %shape = onnx.node "Constant"() {value = dense<[2, 3]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // CHECK-DAG: graph.constant dense<7> : tensor<2x3xi32>
  %0 = onnx.node "ConstantOfShape"(%shape) {value = dense<7> : tensor<1xi32>} opset 13 : (tensor<2xi64>) -> !onnx.unknown
  // CHECK-DAG: graph.constant dense<0.000000e+00> : tensor<2x3xf32>
  %1 = onnx.node "ConstantOfShape"(%shape) {} opset 13 : (tensor<2xi64>) -> !onnx.unknown
  %s = onnx.node "Constant"() {value = dense<10> : tensor<i64>} opset 13 : () -> tensor<i64>
  %l = onnx.node "Constant"() {value = dense<1> : tensor<i64>} opset 13 : () -> tensor<i64>
  %d = onnx.node "Constant"() {value = dense<-4> : tensor<i64>} opset 13 : () -> tensor<i64>
  // ceil((1 - 10) / -4) = 3 elements.
  // CHECK-DAG: graph.constant dense<[10, 6, 2]> : tensor<3xi64>
  %2 = onnx.node "Range"(%s, %l, %d) {} opset 13 : (tensor<i64>, tensor<i64>, tensor<i64>) -> !onnx.unknown
  %k = onnx.node "Constant"() {value = dense<1> : tensor<i64>} opset 14 : () -> tensor<i64>
  // Upper triangle from the first superdiagonal: j - i >= 1.
  // CHECK-DAG: %[[MASK:.*]] = graph.constant dense<{{\[}}[false, true, true, true], [false, false, true, true], [false, false, false, true]]> : tensor<3x4xi1>
  // CHECK-DAG: %[[ZERO:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
  // CHECK: graph.where %[[MASK]], %arg0, %[[ZERO]] : (tensor<3x4xi1>, tensor<2x3x4xf32>, tensor<f32>) -> tensor<2x3x4xf32>
  %3 = onnx.node "Trilu"(%x, %k) {upper = 1 : si64} opset 14 : (tensor<2x3x4xf32>, tensor<i64>) -> !onnx.unknown
  return %0, %1, %2, %3 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// A float Range takes its length and elements in double from the f32
// values, as numpy's arange (ONNX's reference): 0.3f / 0.1f is just above
// 3, so there are 4 elements; each is rounded once to f32.
// CHECK-LABEL: func.func @forward
// CHECK: graph.constant dense<[0.000000e+00, 1.000000e-01, 2.000000e-01, 3.000000e-01]> : tensor<4xf32>
func.func @forward() -> !onnx.unknown {
  %s = onnx.node "Constant"() {value = dense<0.0> : tensor<f32>} opset 13 : () -> tensor<f32>
  %l = onnx.node "Constant"() {value = dense<0.3> : tensor<f32>} opset 13 : () -> tensor<f32>
  %d = onnx.node "Constant"() {value = dense<0.1> : tensor<f32>} opset 13 : () -> tensor<f32>
  %0 = onnx.node "Range"(%s, %l, %d) {} opset 13 : (tensor<f32>, tensor<f32>, tensor<f32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// Pad: negative pads crop, constant mode concatenates broadcast blocks,
// edge and reflect gather at constant indices.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x5xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %pads = onnx.node "Constant"() {value = dense<[1, -1, 0, 2]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  %v = onnx.node "Constant"() {value = dense<2.5> : tensor<f32>} opset 13 : () -> tensor<f32>
  // CHECK: %[[CROP:.*]] = graph.slice %arg0 {ends = array<i64: 2, 5>, starts = array<i64: 0, 1>, steps = array<i64: 1, 1>} : (tensor<2x5xf32>) -> tensor<2x4xf32>
  // CHECK: %[[V:.*]] = graph.constant dense<2.500000e+00> : tensor<1x1xf32>
  // CHECK: %[[TOP:.*]] = graph.broadcast_to %[[V]] : tensor<1x1xf32> to tensor<1x4xf32>
  // CHECK: %[[ROWS:.*]] = graph.concat %[[TOP]], %[[CROP]] {axis = 0 : i64}
  // CHECK: %[[RIGHT:.*]] = graph.broadcast_to %{{.*}} : tensor<1x1xf32> to tensor<3x2xf32>
  // CHECK: graph.concat %[[ROWS]], %[[RIGHT]] {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xf32>) -> tensor<3x6xf32>
  %0 = onnx.node "Pad"(%x, %pads, %v) {mode = "constant"} opset 13 : (tensor<2x5xf32>, tensor<4xi64>, tensor<f32>) -> !onnx.unknown
  %p2 = onnx.node "Constant"() {value = dense<[0, 2, 0, 3]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // CHECK: %[[RI:.*]] = graph.constant dense<[2, 1, 0, 1, 2, 3, 4, 3, 2, 1]> : tensor<10xi64>
  // CHECK: graph.gather %arg0, %[[RI]] {axis = 1 : i64}
  %1 = onnx.node "Pad"(%x, %p2) {mode = "reflect"} opset 13 : (tensor<2x5xf32>, tensor<4xi64>) -> !onnx.unknown
  // CHECK: %[[EI:.*]] = graph.constant dense<[0, 0, 0, 1, 2, 3, 4, 4, 4, 4]> : tensor<10xi64>
  // CHECK: graph.gather %arg0, %[[EI]] {axis = 1 : i64}
  %2 = onnx.node "Pad"(%x, %p2) {mode = "edge"} opset 13 : (tensor<2x5xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0, %1, %2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// Tile: a new dimension before each repeated one, broadcast, merged.
// CHECK-LABEL: func.func @forward
// CHECK: %[[R:.*]] = graph.reshape %arg0 : tensor<2x3xf32> to tensor<2x1x3xf32>
// CHECK: %[[B:.*]] = graph.broadcast_to %[[R]] : tensor<2x1x3xf32> to tensor<2x4x3xf32>
// CHECK: graph.reshape %[[B]] : tensor<2x4x3xf32> to tensor<2x12xf32>
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %r = onnx.node "Constant"() {value = dense<[1, 4]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  %0 = onnx.node "Tile"(%x, %r) {} opset 13 : (tensor<2x3xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// PyTorch's F.pad export reverses its pads pairwise through a Transpose of
// a [2, 2] constant; the transpose folds, so the pads are constant:
// [[0, 2], [0, 1]] transposed is pads [0, 0, 2, 1] (ends 2 and 1).
// CHECK-LABEL: func.func @forward
// CHECK-NOT: graph.transpose
// CHECK: graph.gather %arg0, %{{.*}} {axis = 0 : i64} : (tensor<2x5xf32>, tensor<4xi64>) -> tensor<4x5xf32>
// CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<4x5xf32>, tensor<6xi64>) -> tensor<4x6xf32>
func.func @forward(%x: tensor<2x5xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %pairs = onnx.node "Constant"() {value = dense<[[0, 2], [0, 1]]> : tensor<2x2xi64>} opset 13 : () -> tensor<2x2xi64>
  %t = onnx.node "Transpose"(%pairs) {perm = array<i64: 1, 0>} opset 13 : (tensor<2x2xi64>) -> !onnx.unknown
  %shape = onnx.node "Constant"() {value = dense<[-1]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %pads = onnx.node "Reshape"(%t, %shape) {} opset 13 : (!onnx.unknown, tensor<1xi64>) -> !onnx.unknown
  %0 = onnx.node "Pad"(%x, %pads) {mode = "edge"} opset 13 : (tensor<2x5xf32>, !onnx.unknown) -> !onnx.unknown
  return %0 : !onnx.unknown
}
