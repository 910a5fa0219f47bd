// RUN: %amp-opt %s -canonicalize -split-input-file | FileCheck %s

// LayerNorm written out, as PyTorch exports nn.LayerNorm before opset 17, is
// one graph.layer_norm over the trailing dimensions the means reduce
// (LayerNormRecognition.cpp).

// PyTorch's order: mean, sub, pow 2, mean, add eps, sqrt, div, mul, add.
// CHECK-LABEL: func.func @affine
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x8xf32>, %[[W:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>)
// CHECK-NEXT: %[[Y:.*]], %{{.*}}, %{{.*}} = graph.layer_norm %[[X]], %[[W]], %[[B]] {axis = 2 : i64, epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: return %[[Y]]
func.func @affine(%x: tensor<2x3x8xf32>, %w: tensor<8xf32>, %b: tensor<8xf32>) -> tensor<2x3x8xf32> {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<9.99999974E-6> : tensor<f32>
  %0 = graph.reduce_mean %x {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %1 = graph.sub %x, %0 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %2 = graph.pow %1, %two : (tensor<2x3x8xf32>, tensor<f32>) -> tensor<2x3x8xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 2>, keepdims = true} : (tensor<2x3x8xf32>) -> tensor<2x3x1xf32>
  %4 = graph.add %3, %eps : (tensor<2x3x1xf32>, tensor<f32>) -> tensor<2x3x1xf32>
  %5 = graph.sqrt %4 : tensor<2x3x1xf32>
  %6 = graph.div %1, %5 : (tensor<2x3x8xf32>, tensor<2x3x1xf32>) -> tensor<2x3x8xf32>
  %7 = graph.mul %6, %w : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  %8 = graph.add %7, %b : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %8 : tensor<2x3x8xf32>
}

// -----

// Without the affine part (elementwise_affine=False): a scale of ones, no
// bias; two normalized dimensions; d * d for the square.
// CHECK-LABEL: func.func @plain
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK: %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<3x4xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = graph.layer_norm %[[X]], %[[ONES]] {axis = 1 : i64, epsilon = 9.9999997473787516E-6 : f64}
// CHECK-NEXT: return %[[Y]]
func.func @plain(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %eps = graph.constant dense<1.0E-5> : tensor<f32>
  %0 = graph.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  %1 = graph.sub %x, %0 : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32>
  %2 = graph.mul %1, %1 : (tensor<2x3x4xf32>, tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x1xf32>
  %4 = graph.add %eps, %3 : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %5 = graph.sqrt %4 : tensor<2x1x1xf32>
  %6 = graph.div %1, %5 : (tensor<2x3x4xf32>, tensor<2x1x1xf32>) -> tensor<2x3x4xf32>
  return %6 : tensor<2x3x4xf32>
}

// -----

// Not LayerNorm: means over a leading dimension (batch statistics), and a
// centred value read elsewhere, stay as they are.
// CHECK-LABEL: func.func @not_layer_norm
// CHECK-NOT: graph.layer_norm
// CHECK: return
func.func @not_layer_norm(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %eps = graph.constant dense<1.0E-5> : tensor<f32>
  %0 = graph.reduce_mean %x {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %1 = graph.sub %x, %0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %2 = graph.pow %1, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 0>, keepdims = true} : (tensor<4x8xf32>) -> tensor<1x8xf32>
  %4 = graph.add %3, %eps : (tensor<1x8xf32>, tensor<f32>) -> tensor<1x8xf32>
  %5 = graph.sqrt %4 : tensor<1x8xf32>
  %6 = graph.div %1, %5 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %10 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %11 = graph.sub %x, %10 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %12 = graph.pow %11, %two : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
  %13 = graph.reduce_mean %12 {axes = array<i64: 1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
  %14 = graph.add %13, %eps : (tensor<4x1xf32>, tensor<f32>) -> tensor<4x1xf32>
  %15 = graph.sqrt %14 : tensor<4x1xf32>
  %16 = graph.div %11, %15 : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
  %17 = graph.add %16, %11 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %6, %17 : tensor<4x8xf32>, tensor<4x8xf32>
}
