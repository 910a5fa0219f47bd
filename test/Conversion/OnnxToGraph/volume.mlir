// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// A 3-D convolution as one conv2d. Depth 3, kernel depth 2, pad 1 on each
// side, stride 2: output depths 0 and 1 read input depths (-1, 0) and
// (1, 2); depth -1 is the appended zero slice (index 3). Two groups: the
// channels are ordered [group, tap, channel].
// CHECK-LABEL: func.func @forward
// CHECK: %[[T:.*]] = graph.transpose %arg0 {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x4x3x5x5xf32>) -> tensor<1x3x4x5x5xf32>
// CHECK: %[[Z:.*]] = graph.broadcast_to %{{.*}} : tensor<1x1x1x1x1xf32> to tensor<1x1x4x5x5xf32>
// CHECK: %[[P:.*]] = graph.concat %[[T]], %[[Z]] {axis = 1 : i64}
// CHECK: %[[I:.*]] = graph.constant dense<[3, 0, 1, 2]> : tensor<4xi64>
// CHECK: %[[G:.*]] = graph.gather %[[P]], %[[I]] {axis = 1 : i64} : (tensor<1x4x4x5x5xf32>, tensor<4xi64>) -> tensor<1x4x4x5x5xf32>
// CHECK: %[[G6:.*]] = graph.reshape %[[G]] : tensor<1x4x4x5x5xf32> to tensor<2x2x2x2x5x5xf32>
// CHECK: %[[GT:.*]] = graph.transpose %[[G6]] {perm = array<i64: 0, 2, 1, 3, 4, 5>}
// CHECK: %[[X2:.*]] = graph.reshape %[[GT]] : tensor<2x2x2x2x5x5xf32> to tensor<2x8x5x5xf32>
// CHECK: %[[WT:.*]] = graph.transpose %arg1 {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<6x2x2x3x3xf32>) -> tensor<6x2x2x3x3xf32>
// CHECK: %[[W2:.*]] = graph.reshape %[[WT]] : tensor<6x2x2x3x3xf32> to tensor<6x4x3x3xf32>
// CHECK: %[[Y:.*]] = graph.conv2d %[[X2]], %[[W2]], %arg2 {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<2x8x5x5xf32>, tensor<6x4x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x5xf32>
// CHECK: %[[Y5:.*]] = graph.reshape %[[Y]] : tensor<2x6x5x5xf32> to tensor<1x2x6x5x5xf32>
// CHECK: graph.transpose %[[Y5]] {perm = array<i64: 0, 2, 1, 3, 4>} : (tensor<1x2x6x5x5xf32>) -> tensor<1x6x2x5x5xf32>
func.func @forward(%x: tensor<1x4x3x5x5xf32> {onnx.name = "x"}, %w: tensor<6x2x2x3x3xf32> {onnx.name = "w"}, %b: tensor<6xf32> {onnx.name = "b"}) -> !onnx.unknown {
  %0 = onnx.node "Conv"(%x, %w, %b) {group = 2 : si64, strides = array<i64: 2, 1, 1>, pads = array<i64: 1, 1, 1, 1, 1, 1>} opset 13 : (tensor<1x4x3x5x5xf32>, tensor<6x2x2x3x3xf32>, tensor<6xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// A 3-D pool as two 2-D ones: height and width with depth slices as
// channels, then depth as the height of [N, C, D, OH * OW].
// CHECK-LABEL: func.func @forward
// CHECK: %[[R:.*]] = graph.reshape %arg0 : tensor<2x3x5x6x6xf32> to tensor<2x15x6x6xf32>
// CHECK: %[[HW:.*]] = graph.max_pool2d %[[R]] {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x15x6x6xf32>) -> tensor<2x15x3x3xf32>
// CHECK: %[[C:.*]] = graph.reshape %[[HW]] : tensor<2x15x3x3xf32> to tensor<2x3x5x9xf32>
// CHECK: %[[D:.*]] = graph.max_pool2d %[[C]] {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 1>} : (tensor<2x3x5x9xf32>) -> tensor<2x3x3x9xf32>
// CHECK: graph.reshape %[[D]] : tensor<2x3x3x9xf32> to tensor<2x3x3x3x3xf32>
// CHECK: graph.avg_pool2d %{{.*}} {count_include_pad = true, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>}
// CHECK: graph.avg_pool2d %{{.*}} {count_include_pad = true, kernel_shape = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>}
func.func @forward(%x: tensor<2x3x5x6x6xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %0 = onnx.node "MaxPool"(%x) {kernel_shape = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>, ceil_mode = 1 : si64} opset 13 : (tensor<2x3x5x6x6xf32>) -> !onnx.unknown
  %1 = onnx.node "AveragePool"(%x) {kernel_shape = array<i64: 1, 3, 3>, pads = array<i64: 0, 1, 1, 0, 1, 1>, count_include_pad = 1 : si64} opset 13 : (tensor<2x3x5x6x6xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}
