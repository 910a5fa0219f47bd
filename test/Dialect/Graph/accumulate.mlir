// RUN: %amp-opt %s | %amp-opt | FileCheck %s
// RUN: %amp-opt %s --mlir-print-op-generic | %amp-opt | FileCheck %s

// graph.accumulate = f32 on low-precision contractions, reductions and the
// ops that sum inside (softmax, losses, normalization, their gradients),
// in f16 and bf16; the attribute survives printing and parsing.

// CHECK-LABEL: func @contractions
// CHECK: graph.matmul {{.*}} {graph.accumulate = f32} : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
// CHECK: graph.gemm {{.*}}graph.accumulate = f32{{.*}} -> tensor<4x6xbf16>
// CHECK: graph.conv2d {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x8x5x5xf16>
// CHECK: graph.conv2d_backward_data {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x4x9x9xf16>
// CHECK: graph.conv2d_backward_filter {{.*}}graph.accumulate = f32{{.*}} -> tensor<8x2x3x3xf16>
func.func @contractions(%a: tensor<4x3xf16>, %b: tensor<3x5xf16>,
                        %x: tensor<4x3xbf16>, %w: tensor<6x3xbf16>, %bias: tensor<6xbf16>,
                        %img: tensor<2x4x9x9xf16>, %f: tensor<8x2x3x3xf16>, %dy: tensor<2x8x5x5xf16>) {
  %0 = graph.matmul %a, %b {graph.accumulate = f32} : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
  %1 = graph.gemm %x, %w, %bias {trans_b = true, graph.accumulate = f32} : (tensor<4x3xbf16>, tensor<6x3xbf16>, tensor<6xbf16>) -> tensor<4x6xbf16>
  %2 = graph.conv2d %img, %f {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64, graph.accumulate = f32} : (tensor<2x4x9x9xf16>, tensor<8x2x3x3xf16>) -> tensor<2x8x5x5xf16>
  %3 = graph.conv2d_backward_data %dy, %f {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64, graph.accumulate = f32} : (tensor<2x8x5x5xf16>, tensor<8x2x3x3xf16>) -> tensor<2x4x9x9xf16>
  %4 = graph.conv2d_backward_filter %dy, %img {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64, graph.accumulate = f32} : (tensor<2x8x5x5xf16>, tensor<2x4x9x9xf16>) -> tensor<8x2x3x3xf16>
  return
}

// CHECK-LABEL: func @reductions
// CHECK: graph.reduce_sum {{.*}}graph.accumulate = f32{{.*}} -> tensor<1x10xf16>
// CHECK: graph.reduce_mean {{.*}}graph.accumulate = f32{{.*}} -> tensor<4xbf16>
// CHECK: graph.avg_pool2d {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x8x2x2xf16>
// CHECK: graph.global_avg_pool {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x8x1x1xf16>
// CHECK: graph.avg_pool2d_grad {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x8x3x3xf16>
// CHECK: graph.gather_grad {{.*}}graph.accumulate = f32{{.*}} -> tensor<2x3x4xbf16>
func.func @reductions(%x: tensor<4x10xf16>, %xb: tensor<4x10xbf16>, %p: tensor<2x8x3x3xf16>,
                      %dp: tensor<2x8x2x2xf16>, %gg: tensor<2x5x4xbf16>, %i: tensor<5xi32>) {
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, graph.accumulate = f32} : (tensor<4x10xf16>) -> tensor<1x10xf16>
  %1 = graph.reduce_mean %xb {axes = array<i64: 1>, keepdims = false, graph.accumulate = f32} : (tensor<4x10xbf16>) -> tensor<4xbf16>
  %2 = graph.avg_pool2d %p {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, graph.accumulate = f32} : (tensor<2x8x3x3xf16>) -> tensor<2x8x2x2xf16>
  %3 = graph.global_avg_pool %2 {graph.accumulate = f32} : (tensor<2x8x2x2xf16>) -> tensor<2x8x1x1xf16>
  %4 = graph.avg_pool2d_grad %dp {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, graph.accumulate = f32} : (tensor<2x8x2x2xf16>) -> tensor<2x8x3x3xf16>
  %5 = graph.gather_grad %gg, %i {axis = 1 : i64, graph.accumulate = f32} : (tensor<2x5x4xbf16>, tensor<5xi32>) -> tensor<2x3x4xbf16>
  return
}

// The statistics of a normalization may stay f32: the op's precision is
// its first result's.
// CHECK-LABEL: func @normalizing
// CHECK: graph.softmax {{.*}}graph.accumulate = f32{{.*}} : tensor<4x10xf16>
// CHECK: graph.log_softmax_grad {{.*}}graph.accumulate = f32{{.*}} : tensor<4x10xf16>
// CHECK: graph.batch_norm_training {{.*}}graph.accumulate = f32{{.*}} -> (tensor<2x3x4x4xf16>, tensor<3xf32>
// CHECK: graph.layer_norm {{.*}}graph.accumulate = f32{{.*}} -> (tensor<2x3x4x4xf16>, tensor<2x3x4x1xf32>
func.func @normalizing(%x: tensor<4x10xf16>, %b: tensor<2x3x4x4xf16>, %s: tensor<3xf32>, %ln: tensor<4xf16>) {
  %0 = graph.softmax %x {axis = 1 : i64, graph.accumulate = f32} : tensor<4x10xf16>
  %1 = graph.log_softmax_grad %0, %x {axis = 1 : i64, graph.accumulate = f32} : tensor<4x10xf16>
  %2:5 = graph.batch_norm_training %b, %s, %s, %s, %s {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, graph.accumulate = f32} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %3:3 = graph.layer_norm %b, %ln, %ln {axis = 3 : i64, epsilon = 1.0e-5 : f64, graph.accumulate = f32} : (tensor<2x3x4x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x3x4x4xf16>, tensor<2x3x4x1xf32>, tensor<2x3x4x1xf32>)
  return
}
