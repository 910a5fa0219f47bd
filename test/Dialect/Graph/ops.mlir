// RUN: %amp-opt %s | %amp-opt | FileCheck %s
// RUN: %amp-opt %s --mlir-print-op-generic | %amp-opt | FileCheck %s

// CHECK-LABEL: func @elementwise
func.func @elementwise(%x: tensor<2x3xf32>, %y: tensor<3xf32>, %c: tensor<2x1xi1>, %i: tensor<2x3xi64>) -> tensor<2x3xf32> {
  // CHECK: graph.relu %{{.*}} : tensor<2x3xf32>
  %0 = graph.relu %x : tensor<2x3xf32>
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : tensor<2x3xf32>
  %1 = graph.gelu %0 {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK: graph.leaky_relu %{{.*}} {alpha = 2.000000e-01 : f64}
  %2 = graph.leaky_relu %1 {alpha = 0.2 : f64} : tensor<2x3xf32>
  // CHECK: graph.clip %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64}
  %3 = graph.clip %2 {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: graph.add %{{.*}}, %{{.*}} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %4 = graph.add %3, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.pow
  %5 = graph.pow %4, %y : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %6 = graph.where %c, %5, %y : (tensor<2x1xi1>, tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  // CHECK: graph.neg %{{.*}} : tensor<2x3xi64>
  %7 = graph.neg %i : tensor<2x3xi64>
  // CHECK: graph.cast %{{.*}} : tensor<2x3xi64> to tensor<2x3xf32>
  %8 = graph.cast %7 : tensor<2x3xi64> to tensor<2x3xf32>
  %9 = graph.mul %6, %8 : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %9 : tensor<2x3xf32>
}

// CHECK-LABEL: func @contractions
func.func @contractions(%a: tensor<4x2x3xf16>, %b: tensor<3x5xf16>, %w: tensor<6x3xbf16>, %x: tensor<8x3xbf16>, %bias: tensor<6xbf16>) -> (tensor<4x2x5xf16>, tensor<8x6xbf16>) {
  // CHECK: graph.matmul %{{.*}}, %{{.*}} : (tensor<4x2x3xf16>, tensor<3x5xf16>) -> tensor<4x2x5xf16>
  %0 = graph.matmul %a, %b : (tensor<4x2x3xf16>, tensor<3x5xf16>) -> tensor<4x2x5xf16>
  // CHECK: graph.gemm %{{.*}}, %{{.*}}, %{{.*}} {trans_b = true}
  %1 = graph.gemm %x, %w, %bias {trans_b = true} : (tensor<8x3xbf16>, tensor<6x3xbf16>, tensor<6xbf16>) -> tensor<8x6xbf16>
  return %0, %1 : tensor<4x2x5xf16>, tensor<8x6xbf16>
}

// CHECK-LABEL: func @conv_pool
func.func @conv_pool(%x: tensor<2x4x9x9xf32>, %w: tensor<8x2x3x3xf32>, %b: tensor<8xf32>) -> (tensor<2x8x1x1xf32>, tensor<2x8x2x2xf32>) {
  // CHECK: graph.conv2d {{.*}}dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x4x9x9xf32>, tensor<8x2x3x3xf32>, tensor<8xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: graph.max_pool2d {{.*}} -> tensor<2x8x3x3xf32>
  %1 = graph.max_pool2d %0 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<2x8x5x5xf32>) -> tensor<2x8x3x3xf32>
  // CHECK: graph.avg_pool2d {{.*}} -> tensor<2x8x2x2xf32>
  %2 = graph.avg_pool2d %1 {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>} : (tensor<2x8x3x3xf32>) -> tensor<2x8x2x2xf32>
  // CHECK: graph.global_avg_pool {{.*}} -> tensor<2x8x1x1xf32>
  %3 = graph.global_avg_pool %2 : (tensor<2x8x2x2xf32>) -> tensor<2x8x1x1xf32>
  return %3, %2 : tensor<2x8x1x1xf32>, tensor<2x8x2x2xf32>
}

// CHECK-LABEL: func @reductions_losses
func.func @reductions_losses(%x: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<10xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<1x10xf32>) {
  // CHECK: graph.reduce_sum %{{.*}} {axes = array<i64: 0>} : (tensor<4x10xf32>) -> tensor<1x10xf32>
  %0 = graph.reduce_sum %x {axes = array<i64: 0>} : (tensor<4x10xf32>) -> tensor<1x10xf32>
  // CHECK: graph.reduce_mean %{{.*}} {axes = array<i64: 1>, keepdims = false}
  %1 = graph.reduce_mean %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x10xf32>) -> tensor<4xf32>
  // CHECK: graph.reduce_max
  %2 = graph.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x10xf32>) -> tensor<f32>
  // CHECK: graph.softmax %{{.*}} {axis = 1 : i64} : tensor<4x10xf32>
  %3 = graph.softmax %x {axis = 1 : i64} : tensor<4x10xf32>
  // CHECK: graph.log_softmax
  %4 = graph.log_softmax %3 {axis = 1 : i64} : tensor<4x10xf32>
  // CHECK: graph.softmax_cross_entropy %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf32>)
  %5:2 = graph.softmax_cross_entropy %x, %l, %w {ignore_index = -100 : i64} : (tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf32>)
  // CHECK: graph.nll_loss %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  %6 = graph.nll_loss %4, %l {reduction = "none"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<4xf32>
  return %5#0, %6, %0 : tensor<f32>, tensor<4xf32>, tensor<1x10xf32>
}

// CHECK-LABEL: func @along_one_axis
func.func @along_one_axis(%x: tensor<4x10xf16>, %i: tensor<3x5xi32>) -> (tensor<4x10xf16>, tensor<3x5xi32>, tensor<4xi64>, tensor<4x3xf16>, tensor<4x3xi64>) {
  // CHECK: graph.cumsum %{{.*}} {axis = 1 : i64, reverse = true} : tensor<4x10xf16>
  %0 = graph.cumsum %x {axis = 1 : i64, reverse = true} : tensor<4x10xf16>
  // CHECK: graph.cumsum %{{.*}} {axis = 0 : i64, exclusive = true} : tensor<3x5xi32>
  %1 = graph.cumsum %i {axis = 0 : i64, exclusive = true} : tensor<3x5xi32>
  // CHECK: graph.arg_max %{{.*}} {axis = 1 : i64, keepdims = false} : (tensor<4x10xf16>) -> tensor<4xi64>
  %2 = graph.arg_max %x {axis = 1 : i64, keepdims = false} : (tensor<4x10xf16>) -> tensor<4xi64>
  // CHECK: graph.top_k %{{.*}} {axis = 1 : i64, k = 3 : i64, largest = false} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x3xi64>)
  %3:2 = graph.top_k %x {axis = 1 : i64, k = 3 : i64, largest = false} : (tensor<4x10xf16>) -> (tensor<4x3xf16>, tensor<4x3xi64>)
  return %0, %1, %2, %3#0, %3#1 : tensor<4x10xf16>, tensor<3x5xi32>, tensor<4xi64>, tensor<4x3xf16>, tensor<4x3xi64>
}

// CHECK-LABEL: func @norms
func.func @norms(%x: tensor<2x3x4x4xf16>, %s: tensor<3xf32>, %ln: tensor<4xf16>) -> (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<2x3x4x1xf32>) {
  // CHECK: graph.batch_norm_inference
  %0 = graph.batch_norm_inference %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f64} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf16>
  // CHECK: graph.batch_norm_training {{.*}} -> (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %1:5 = graph.batch_norm_training %0, %s, %s, %s, %s {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: graph.layer_norm {{.*}} -> (tensor<2x3x4x4xf16>, tensor<2x3x4x1xf32>, tensor<2x3x4x1xf32>)
  %2:3 = graph.layer_norm %1#0, %ln, %ln {axis = 3 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x3x4x4xf16>, tensor<4xf16>, tensor<4xf16>) -> (tensor<2x3x4x4xf16>, tensor<2x3x4x1xf32>, tensor<2x3x4x1xf32>)
  return %2#0, %1#1, %2#1 : tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<2x3x4x1xf32>
}

// CHECK-LABEL: func @data_movement
func.func @data_movement(%x: tensor<2x3x4xf64>, %i: tensor<5xi32>) -> (tensor<4x2x3xf64>, tensor<2x5x4xf64>, tensor<2x2x4xf64>, tensor<6x4xf64>, tensor<3x2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x4xi1>) {
  // CHECK: graph.reshape %{{.*}} : tensor<2x3x4xf64> to tensor<6x4xf64>
  %0 = graph.reshape %x : tensor<2x3x4xf64> to tensor<6x4xf64>
  // CHECK: graph.transpose %{{.*}} {perm = array<i64: 2, 0, 1>}
  %1 = graph.transpose %x {perm = array<i64: 2, 0, 1>} : (tensor<2x3x4xf64>) -> tensor<4x2x3xf64>
  // CHECK: graph.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x6x4xf64>
  %2 = graph.concat %x, %x {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<2x3x4xf64>) -> tensor<2x6x4xf64>
  // CHECK: graph.slice %{{.*}} {ends = array<i64: 2, -1, 4>, starts = array<i64: 0, 5, 0>, steps = array<i64: 1, -3, 1>} : (tensor<2x6x4xf64>) -> tensor<2x2x4xf64>
  %3 = graph.slice %2 {starts = array<i64: 0, 5, 0>, ends = array<i64: 2, -1, 4>, steps = array<i64: 1, -3, 1>} : (tensor<2x6x4xf64>) -> tensor<2x2x4xf64>
  // CHECK: graph.gather %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<5xi32>) -> tensor<2x5x4xf64>
  %4 = graph.gather %x, %i {axis = 1 : i64} : (tensor<2x3x4xf64>, tensor<5xi32>) -> tensor<2x5x4xf64>
  // CHECK: graph.broadcast_to %{{.*}} : tensor<2x3x4xf64> to tensor<3x2x3x4xf64>
  %5 = graph.broadcast_to %x : tensor<2x3x4xf64> to tensor<3x2x3x4xf64>
  // CHECK: graph.dropout %{{.*}} {ratio = 5.000000e-01 : f64, seed = 7 : i64, training = true} : (tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xi1>)
  %6:2 = graph.dropout %x {ratio = 0.5 : f64, training = true, seed = 7 : i64} : (tensor<2x3x4xf64>) -> (tensor<2x3x4xf64>, tensor<2x3x4xi1>)
  return %1, %4, %3, %0, %5, %6#0, %6#1 : tensor<4x2x3xf64>, tensor<2x5x4xf64>, tensor<2x2x4xf64>, tensor<6x4xf64>, tensor<3x2x3x4xf64>, tensor<2x3x4xf64>, tensor<2x3x4xi1>
}

// CHECK-LABEL: func @constants
func.func @constants() -> tensor<2xi64> {
  // CHECK: graph.constant dense<[3, 4]> : tensor<2xi64>
  %0 = graph.constant dense<[3, 4]> : tensor<2xi64>
  return %0 : tensor<2xi64>
}

// CHECK-LABEL: func @hard_sigmoid
func.func @hard_sigmoid(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // CHECK: graph.hard_sigmoid %{{.*}} {alpha = 0.16666666666666666 : f64} : tensor<2x3xf32>
  %0 = graph.hard_sigmoid %x {alpha = 0.16666666666666666 : f64, beta = 0.5 : f64} : tensor<2x3xf32>
  // The defaults (alpha 0.2, beta 0.5) are not printed.
  // CHECK: graph.hard_sigmoid %{{.*}} : tensor<2x3xf32>
  %1 = graph.hard_sigmoid %x : tensor<2x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// CHECK-LABEL: func @hard_swish
func.func @hard_swish(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  // CHECK: graph.hard_swish %{{.*}} : tensor<2x3xbf16>
  %0 = graph.hard_swish %x : tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @predicates
// CHECK: graph.less_equal %arg0, %arg1 : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
// CHECK: graph.logical_or %{{.*}}, %arg2 : (tensor<2x3xi1>, tensor<i1>) -> tensor<2x3xi1>
// CHECK: graph.softplus %arg0 : tensor<2x3xf16>
// CHECK: graph.sin
// CHECK: graph.cos
func.func @predicates(%a: tensor<2x3xf16>, %b: tensor<3xf16>, %c: tensor<i1>) -> (tensor<2x3xi1>, tensor<2x3xf16>) {
  %0 = graph.less_equal %a, %b : (tensor<2x3xf16>, tensor<3xf16>) -> tensor<2x3xi1>
  %1 = graph.logical_or %0, %c : (tensor<2x3xi1>, tensor<i1>) -> tensor<2x3xi1>
  %2 = graph.softplus %a : tensor<2x3xf16>
  %3 = graph.sin %2 : tensor<2x3xf16>
  %4 = graph.cos %3 : tensor<2x3xf16>
  return %1, %4 : tensor<2x3xi1>, tensor<2x3xf16>
}

// CHECK-LABEL: func.func @conv_transpose
// CHECK: graph.conv_transpose2d %arg0, %arg1 {{.*}} -> tensor<2x6x8x13xf16>
func.func @conv_transpose(%x: tensor<2x4x3x4xf16>, %w: tensor<4x3x3x3xf16>) -> tensor<2x6x8x13xf16> {
  %0 = graph.conv_transpose2d %x, %w {strides = array<i64: 3, 3>, pads = array<i64: 1, 0, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64, output_padding = array<i64: 1, 2>} : (tensor<2x4x3x4xf16>, tensor<4x3x3x3xf16>) -> tensor<2x6x8x13xf16>
  return %0 : tensor<2x6x8x13xf16>
}
