// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// CHECK-LABEL: func.func @forward
func.func @forward(%a: tensor<5x2x3xf32> {onnx.name = "a"}, %b: tensor<3x4xf32> {onnx.name = "b"}, %v: tensor<3xf32> {onnx.name = "v"}) -> (tensor<5x2x4xf32>, tensor<5x2xf32>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  %0 = onnx.node "MatMul"(%a, %b) {} opset 13 : (tensor<5x2x3xf32>, tensor<3x4xf32>) -> tensor<5x2x4xf32>
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  %1 = onnx.node "MatMul"(%a, %v) {} opset 13 : (tensor<5x2x3xf32>, tensor<3xf32>) -> tensor<5x2xf32>
  return %0, %1 : tensor<5x2x4xf32>, tensor<5x2xf32>
}

// -----

// Gemm keeps alpha/beta only when they are not 1 and maps transA/transB.
// CHECK-LABEL: func.func @forward
func.func @forward(%a: tensor<3x5xf32> {onnx.name = "a"}, %b: tensor<4x3xf32> {onnx.name = "b"}, %c: tensor<1x4xf32> {onnx.name = "c"}) -> (tensor<5x4xf32>, tensor<5x4xf32>) {
  // CHECK: graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {alpha = 2.500000e-01 : f64, beta = 5.000000e-01 : f64, trans_a = true, trans_b = true} : (tensor<3x5xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
  %0 = onnx.node "Gemm"(%a, %b, %c) {alpha = 0.25 : f32, beta = 0.5 : f32, transA = 1 : i64, transB = 1 : i64} opset 13 : (tensor<3x5xf32>, tensor<4x3xf32>, tensor<1x4xf32>) -> tensor<5x4xf32>
  %none = onnx.none
  // CHECK: graph.gemm %{{.*}}, %{{.*}} {trans_a = true, trans_b = true} : (tensor<3x5xf32>, tensor<4x3xf32>) -> tensor<5x4xf32>
  %1 = onnx.node "Gemm"(%a, %b, %none) {alpha = 1.0 : f32, transA = 1 : i64, transB = 1 : i64} opset 11 : (tensor<3x5xf32>, tensor<4x3xf32>, none) -> tensor<5x4xf32>
  return %0, %1 : tensor<5x4xf32>, tensor<5x4xf32>
}

// -----

// Conv: defaults made explicit; auto_pad resolved to pads.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<1x1x7x5xf32> {onnx.name = "x"}, %w: tensor<2x1x3x3xf32> {onnx.name = "w"}, %b: tensor<2xf32> {onnx.name = "b"}) -> (tensor<1x2x5x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x2xf32>) {
  // CHECK: graph.conv2d %{{.*}}, %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : {{.*}} -> tensor<1x2x5x3xf32>
  %0 = onnx.node "Conv"(%x, %w, %b) {} opset 11 : (tensor<1x1x7x5xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>) -> tensor<1x2x5x3xf32>
  // SAME_UPPER, stride 2: out = ceil(in / 2), extra padding at the end.
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : {{.*}} -> tensor<1x2x4x3xf32>
  %1 = onnx.node "Conv"(%x, %w) {auto_pad = "SAME_UPPER", strides = array<i64: 2, 2>} opset 11 : (tensor<1x1x7x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x3xf32>
  // CHECK: graph.conv2d %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} : {{.*}} -> tensor<1x2x4x2xf32>
  %2 = onnx.node "Conv"(%x, %w) {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 0>, strides = array<i64: 2, 2>} opset 11 : (tensor<1x1x7x5xf32>, tensor<2x1x3x3xf32>) -> tensor<1x2x4x2xf32>
  return %0, %1, %2 : tensor<1x2x5x3xf32>, tensor<1x2x4x3xf32>, tensor<1x2x4x2xf32>
}

// -----

// 1-D convolution and pooling run as 2-D with a unit height.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x4x10xf32> {onnx.name = "x"}, %w: tensor<6x2x3xf32> {onnx.name = "w"}) -> (tensor<2x6x8xf32>, tensor<2x4x5xf32>) {
  // CHECK: %[[X:.*]] = graph.reshape %{{.*}} : tensor<2x4x10xf32> to tensor<2x4x1x10xf32>
  // CHECK: %[[W:.*]] = graph.reshape %{{.*}} : tensor<6x2x3xf32> to tensor<6x2x1x3xf32>
  // CHECK: %[[C:.*]] = graph.conv2d %[[X]], %[[W]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x4x1x10xf32>, tensor<6x2x1x3xf32>) -> tensor<2x6x1x8xf32>
  // CHECK: graph.reshape %[[C]] : tensor<2x6x1x8xf32> to tensor<2x6x8xf32>
  %0 = onnx.node "Conv"(%x, %w) {group = 2 : i64} opset 13 : (tensor<2x4x10xf32>, tensor<6x2x3xf32>) -> tensor<2x6x8xf32>
  // CHECK: graph.max_pool2d %{{.*}} {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : (tensor<2x4x1x10xf32>) -> tensor<2x4x1x5xf32>
  %1 = onnx.node "MaxPool"(%x) {kernel_shape = array<i64: 2>, strides = array<i64: 2>} opset 12 : (tensor<2x4x10xf32>) -> tensor<2x4x5xf32>
  return %0, %1 : tensor<2x6x8xf32>, tensor<2x4x5xf32>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<1x3x5x5xf32> {onnx.name = "x"}) -> (tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x1x1xf32>) {
  // CHECK: graph.max_pool2d %{{.*}} {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  %0 = onnx.node "MaxPool"(%x) {ceil_mode = 1 : i64, kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>} opset 12 : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  // CHECK: graph.avg_pool2d %{{.*}} {count_include_pad = true, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  %1 = onnx.node "AveragePool"(%x) {count_include_pad = 1 : i64, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} opset 11 : (tensor<1x3x5x5xf32>) -> tensor<1x3x3x3xf32>
  // CHECK: graph.global_avg_pool %{{.*}} : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  %2 = onnx.node "GlobalAveragePool"(%x) {} opset 11 : (tensor<1x3x5x5xf32>) -> tensor<1x3x1x1xf32>
  return %0, %1, %2 : tensor<1x3x3x3xf32>, tensor<1x3x3x3xf32>, tensor<1x3x1x1xf32>
}
