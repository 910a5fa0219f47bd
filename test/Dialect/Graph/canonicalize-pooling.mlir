// RUN: %amp-opt %s -canonicalize -split-input-file -mlir-print-debuginfo -mlir-print-local-scope | FileCheck %s

// ReLU after max pooling, not before (PoolingCanonicalize.cpp).

// LeNet's convolution, ReLU, 2x2 pooling of stride 2: the ReLU runs on the
// pooled tensor and keeps its own location; the pooling keeps its
// attributes.
// CHECK-LABEL: func.func @lenet
// CHECK-NEXT: %[[P:.*]] = graph.max_pool2d %arg0 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x3x8x8xbf16>) -> tensor<2x3x4x4xbf16> loc("pool")
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[P]] : tensor<2x3x4x4xbf16> loc("relu")
// CHECK-NEXT: return %[[R]]
func.func @lenet(%x: tensor<2x3x8x8xbf16>) -> tensor<2x3x4x4xbf16> {
  %0 = graph.relu %x : tensor<2x3x8x8xbf16> loc("relu")
  %1 = graph.max_pool2d %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<2x3x8x8xbf16>) -> tensor<2x3x4x4xbf16> loc("pool")
  return %1 : tensor<2x3x4x4xbf16>
}

// -----

// The ResNet stem's 3x3 pooling of stride 2 with padding, in ceil mode:
// every window still holds an input element.
// CHECK-LABEL: func.func @stem
// CHECK-NEXT: %[[P:.*]] = graph.max_pool2d %arg0 {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[P]] : tensor<1x4x4x4xf32>
// CHECK-NEXT: return %[[R]]
func.func @stem(%x: tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32> {
  %0 = graph.relu %x : tensor<1x4x7x7xf32>
  %1 = graph.max_pool2d %0 {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<1x4x7x7xf32>) -> tensor<1x4x4x4xf32>
  return %1 : tensor<1x4x4x4xf32>
}

// -----

// Left alone: a ReLU that something else reads too (it is computed anyway),
// and other activations, whose rounding can make two window elements tie.
// CHECK-LABEL: func.func @left_alone
// CHECK-NEXT: %[[R:.*]] = graph.relu %arg0
// CHECK-NEXT: %[[P:.*]] = graph.max_pool2d %[[R]]
// CHECK-NEXT: %[[S:.*]] = graph.sigmoid %arg0
// CHECK-NEXT: %[[Q:.*]] = graph.max_pool2d %[[S]]
// CHECK-NEXT: return %[[P]], %[[R]], %[[Q]]
func.func @left_alone(%x: tensor<1x1x4x4xf32>) -> (tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) {
  %0 = graph.relu %x : tensor<1x1x4x4xf32>
  %1 = graph.max_pool2d %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  %2 = graph.sigmoid %x : tensor<1x1x4x4xf32>
  %3 = graph.max_pool2d %2 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %1, %0, %3 : tensor<1x1x2x2xf32>, tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>
}
