// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Resize: nearest gathers each resized axis at constant indices (asymmetric
// coordinates, floor: x / 2); linear multiplies by a constant [in, out]
// matrix on the last axis and through a transpose on the others.
// CHECK-LABEL: func.func @forward
// CHECK: %[[I:.*]] = graph.constant dense<[0, 0, 1, 1]> : tensor<4xi64>
// CHECK: %[[H:.*]] = graph.gather %arg0, %[[I]] {axis = 2 : i64} : (tensor<1x1x2x3xf32>, tensor<4xi64>) -> tensor<1x1x4x3xf32>
// CHECK: graph.gather %[[H]], %{{.*}} {axis = 3 : i64} : (tensor<1x1x4x3xf32>, tensor<6xi64>) -> tensor<1x1x4x6xf32>
// half_pixel linear, 2 -> 4: sources -0.25 (clamped to 0), 0.25, 0.75, 1.25 (to 1).
// CHECK: %[[M:.*]] = graph.constant dense<{{\[}}[1.000000e+00, 7.500000e-01, 2.500000e-01, 0.000000e+00], [0.000000e+00, 2.500000e-01, 7.500000e-01, 1.000000e+00]]> : tensor<2x4xf32>
// CHECK: %[[T:.*]] = graph.transpose %arg0 {perm = array<i64: 0, 1, 3, 2>}
// CHECK: %[[MM:.*]] = graph.matmul %[[T]], %[[M]] : (tensor<1x1x3x2xf32>, tensor<2x4xf32>) -> tensor<1x1x3x4xf32>
// CHECK: graph.transpose %[[MM]] {perm = array<i64: 0, 1, 3, 2>}
func.func @forward(%x: tensor<1x1x2x3xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %none = onnx.none
  %scales = onnx.node "Constant"() {value = dense<[1.0, 1.0, 2.0, 2.0]> : tensor<4xf32>} opset 13 : () -> tensor<4xf32>
  %0 = onnx.node "Resize"(%x, %none, %scales) {mode = "nearest", coordinate_transformation_mode = "asymmetric", nearest_mode = "floor"} opset 13 : (tensor<1x1x2x3xf32>, none, tensor<4xf32>) -> !onnx.unknown
  %s2 = onnx.node "Constant"() {value = dense<[1.0, 1.0, 2.0, 1.0]> : tensor<4xf32>} opset 13 : () -> tensor<4xf32>
  %1 = onnx.node "Resize"(%x, %none, %s2) {mode = "linear"} opset 13 : (tensor<1x1x2x3xf32>, none, tensor<4xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// -----

// ConvTranspose: the op, then the bias per output channel. Stride 2,
// kernel 2: 3x3 -> 6x6.
// CHECK-LABEL: func.func @forward
// CHECK: %[[Y:.*]] = graph.conv_transpose2d %arg0, %arg1 {dilations = array<i64: 1, 1>, group = 1 : i64, output_padding = array<i64: 0, 0>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>) -> tensor<1x2x6x6xf32>
// CHECK: %[[B:.*]] = graph.reshape %arg2 : tensor<2xf32> to tensor<2x1x1xf32>
// CHECK: graph.add %[[Y]], %[[B]]
func.func @forward(%x: tensor<1x4x3x3xf32> {onnx.name = "x"}, %w: tensor<4x2x2x2xf32> {onnx.name = "w"}, %b: tensor<2xf32> {onnx.name = "b"}) -> !onnx.unknown {
  %0 = onnx.node "ConvTranspose"(%x, %w, %b) {strides = array<i64: 2, 2>} opset 13 : (tensor<1x4x3x3xf32>, tensor<4x2x2x2xf32>, tensor<2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
