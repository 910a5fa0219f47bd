// RUN: %amp-opt %s | %amp-opt | FileCheck %s
// RUN: %amp-opt %s --mlir-print-op-generic | %amp-opt | FileCheck %s

// Every op of GradientOps.td, printed and parsed back.

// CHECK-LABEL: func @activation_grads
func.func @activation_grads(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>, %h: tensor<4xbf16>, %y: tensor<4xbf16>) -> (tensor<2x3xf32>, tensor<4xbf16>) {
  // CHECK: graph.relu_grad %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %0 = graph.relu_grad %g, %x : tensor<2x3xf32>
  // CHECK: graph.abs_grad %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %1 = graph.abs_grad %0, %x : tensor<2x3xf32>
  // CHECK: graph.leaky_relu_grad %{{.*}}, %{{.*}} {alpha = 2.000000e-01 : f64} : tensor<2x3xf32>
  %2 = graph.leaky_relu_grad %1, %x {alpha = 0.2 : f64} : tensor<2x3xf32>
  // The default alpha is not printed.
  // CHECK: graph.leaky_relu_grad %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %3 = graph.leaky_relu_grad %2, %x : tensor<2x3xf32>
  // CHECK: graph.gelu_grad %{{.*}}, %{{.*}} {approximate = "tanh"} : tensor<2x3xf32>
  %4 = graph.gelu_grad %3, %x {approximate = "tanh"} : tensor<2x3xf32>
  // CHECK: graph.gelu_grad %{{.*}}, %{{.*}} : tensor<4xbf16>
  %5 = graph.gelu_grad %h, %y : tensor<4xbf16>
  // CHECK: graph.clip_grad %{{.*}}, %{{.*}} {max = 6.000000e+00 : f64, min = 0.000000e+00 : f64} : tensor<2x3xf32>
  %6 = graph.clip_grad %4, %x {min = 0.0 : f64, max = 6.0 : f64} : tensor<2x3xf32>
  // CHECK: graph.clip_grad %{{.*}}, %{{.*}} {min = -1.000000e+00 : f64} : tensor<4xbf16>
  %7 = graph.clip_grad %5, %y {min = -1.0 : f64} : tensor<4xbf16>
  return %6, %7 : tensor<2x3xf32>, tensor<4xbf16>
}

// A strided convolution's input gradient takes its shape from the result
// type: 9 and 10 rows both give 5 output rows under stride 2.
// CHECK-LABEL: func @conv_grads
func.func @conv_grads(%dy: tensor<2x8x5x5xf32>, %w: tensor<8x2x3x3xf32>, %x: tensor<2x4x9x9xf32>, %dyh: tensor<1x4x6x6xf16>, %wh: tensor<4x3x1x1xf16>) -> (tensor<2x4x9x9xf32>, tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>, tensor<1x3x6x6xf16>) {
  // CHECK: graph.conv2d_backward_data %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<2x4x9x9xf32>
  %0 = graph.conv2d_backward_data %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<2x4x9x9xf32>
  // CHECK: graph.conv2d_backward_data {{.*}} -> tensor<2x4x10x10xf32>
  %1 = graph.conv2d_backward_data %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<2x4x10x10xf32>
  // CHECK: graph.conv2d_backward_filter %{{.*}}, %{{.*}} {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x5x5xf32>, tensor<2x4x9x9xf32>) -> tensor<8x2x3x3xf32>
  %2 = graph.conv2d_backward_filter %dy, %x {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<2x4x9x9xf32>) -> tensor<8x2x3x3xf32>
  // CHECK: graph.conv2d_backward_data {{.*}} : (tensor<1x4x6x6xf16>, tensor<4x3x1x1xf16>) -> tensor<1x3x6x6xf16>
  %3 = graph.conv2d_backward_data %dyh, %wh {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x4x6x6xf16>, tensor<4x3x1x1xf16>) -> tensor<1x3x6x6xf16>
  return %0, %1, %2, %3 : tensor<2x4x9x9xf32>, tensor<2x4x10x10xf32>, tensor<8x2x3x3xf32>, tensor<1x3x6x6xf16>
}

// CHECK-LABEL: func @pool_grads
func.func @pool_grads(%dy: tensor<2x8x3x3xf32>, %x: tensor<2x8x5x5xf32>, %da: tensor<1x2x4x4xf16>) -> (tensor<2x8x5x5xf32>, tensor<1x2x3x3xf16>, tensor<2x8x5x5xf32>) {
  // CHECK: graph.max_pool2d_grad %{{.*}}, %{{.*}} {ceil_mode = true, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 2, 2>} : (tensor<2x8x3x3xf32>, tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  %0 = graph.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, ceil_mode = true} : (tensor<2x8x3x3xf32>, tensor<2x8x5x5xf32>) -> tensor<2x8x5x5xf32>
  // CHECK: graph.avg_pool2d_grad %{{.*}} {count_include_pad = true, kernel_shape = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 1, 1>} : (tensor<1x2x4x4xf16>) -> tensor<1x2x3x3xf16>
  %1 = graph.avg_pool2d_grad %da {kernel_shape = array<i64: 2, 2>, strides = array<i64: 1, 1>, pads = array<i64: 1, 1, 1, 1>, count_include_pad = true} : (tensor<1x2x4x4xf16>) -> tensor<1x2x3x3xf16>
  // Default ceil_mode and count_include_pad are not printed.
  // CHECK: graph.avg_pool2d_grad %{{.*}} {kernel_shape = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>, strides = array<i64: 2, 2>} : (tensor<2x8x3x3xf32>) -> tensor<2x8x5x5xf32>
  %2 = graph.avg_pool2d_grad %dy {kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<2x8x3x3xf32>) -> tensor<2x8x5x5xf32>
  return %0, %1, %2 : tensor<2x8x5x5xf32>, tensor<1x2x3x3xf16>, tensor<2x8x5x5xf32>
}

// CHECK-LABEL: func @reduction_softmax_grads
func.func @reduction_softmax_grads(%g: tensor<1x10xf32>, %x: tensor<4x10xf32>, %m: tensor<1x10xf32>, %gr: tensor<4xf32>, %mr: tensor<4xf32>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>) {
  // CHECK: graph.reduce_max_grad %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 0>} : (tensor<1x10xf32>, tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  %0 = graph.reduce_max_grad %g, %x, %m {axes = array<i64: 0>} : (tensor<1x10xf32>, tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  // CHECK: graph.reduce_max_grad %{{.*}}, %{{.*}}, %{{.*}} {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  %1 = graph.reduce_max_grad %gr, %x, %mr {axes = array<i64: 1>, keepdims = false} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xf32>) -> tensor<4x10xf32>
  // CHECK: graph.softmax_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : tensor<4x10xf32>
  %2 = graph.softmax_grad %0, %x {axis = 1 : i64} : tensor<4x10xf32>
  // CHECK: graph.log_softmax_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : tensor<4x10xf32>
  %3 = graph.log_softmax_grad %1, %x {axis = 0 : i64} : tensor<4x10xf32>
  return %0, %1, %2, %3 : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>
}

// CHECK-LABEL: func @loss_with_grad
func.func @loss_with_grad(%g: tensor<f32>, %x: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<10xf32>, %gn: tensor<4xf32>) -> (tensor<f32>, tensor<4x10xf16>, tensor<4xf32>, tensor<4x10xf32>) {
  // CHECK: graph.softmax_cross_entropy_with_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf16>)
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l, %w {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> (tensor<f32>, tensor<4x10xf16>)
  // CHECK: graph.softmax_cross_entropy_with_grad %{{.*}}, %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
  %1:2 = graph.softmax_cross_entropy_with_grad %gn, %x, %l {reduction = "none"} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return %0#0, %0#1, %1#0, %1#1 : tensor<f32>, tensor<4x10xf16>, tensor<4xf32>, tensor<4x10xf32>
}

// CHECK-LABEL: func @loss_grads
func.func @loss_grads(%g: tensor<f32>, %lp: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<10xf32>, %gn: tensor<4xf32>, %g3: tensor<2x5xf32>, %t3: tensor<2x5xi32>) -> (tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x5xf32>) {
  // CHECK: graph.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4x10xf32>
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l, %w {ignore_index = -100 : i64} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4x10xf32>
  // CHECK: graph.softmax_cross_entropy_grad %{{.*}}, %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  %1 = graph.softmax_cross_entropy_grad %gn, %lp, %l {reduction = "none"} : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  // CHECK: graph.nll_loss_grad %{{.*}}, %{{.*}} : (tensor<f32>, tensor<4xi64>) -> tensor<4x10xf32>
  %2 = graph.nll_loss_grad %g, %l : (tensor<f32>, tensor<4xi64>) -> tensor<4x10xf32>
  // CHECK: graph.nll_loss_grad %{{.*}}, %{{.*}}, %{{.*}} {ignore_index = 0 : i64, reduction = "sum"} : (tensor<f32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4x10xf32>
  %3 = graph.nll_loss_grad %g, %l, %w {reduction = "sum", ignore_index = 0 : i64} : (tensor<f32>, tensor<4xi64>, tensor<10xf32>) -> tensor<4x10xf32>
  // Spatial losses: input [N, C, d], target [N, d].
  // CHECK: graph.nll_loss_grad %{{.*}}, %{{.*}} {reduction = "none"} : (tensor<2x5xf32>, tensor<2x5xi32>) -> tensor<2x3x5xf32>
  %4 = graph.nll_loss_grad %g3, %t3 {reduction = "none"} : (tensor<2x5xf32>, tensor<2x5xi32>) -> tensor<2x3x5xf32>
  return %0, %1, %2, %3, %4 : tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<2x3x5xf32>
}

// CHECK-LABEL: func @norm_grads
func.func @norm_grads(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %lg: tensor<2x5x8xf16>, %lx: tensor<2x5x8xf16>, %ls: tensor<8xf16>, %st: tensor<2x5x1xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>) {
  // CHECK: graph.batch_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  %0:3 = graph.batch_norm_grad %g, %x, %c, %c, %c : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  // CHECK: graph.layer_norm_grad %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<2x5x8xf16>, tensor<2x5x8xf16>, tensor<8xf16>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> (tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>)
  %1:3 = graph.layer_norm_grad %lg, %lx, %ls, %st, %st {axis = 2 : i64} : (tensor<2x5x8xf16>, tensor<2x5x8xf16>, tensor<8xf16>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> (tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>)
  return %0#0, %0#1, %0#2, %1#0, %1#1, %1#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>
}

// CHECK-LABEL: func @movement_grads
func.func @movement_grads(%gs: tensor<2x2x4xf64>, %gg: tensor<2x5x4xbf16>, %i: tensor<5xi32>, %g0: tensor<3xf32>, %i0: tensor<3xi64>) -> (tensor<2x6x4xf64>, tensor<2x3x4xbf16>, tensor<7xf32>) {
  // CHECK: graph.slice_grad %{{.*}} {ends = array<i64: 2, -1, 4>, starts = array<i64: 0, 5, 0>, steps = array<i64: 1, -3, 1>} : (tensor<2x2x4xf64>) -> tensor<2x6x4xf64>
  %0 = graph.slice_grad %gs {starts = array<i64: 0, 5, 0>, ends = array<i64: 2, -1, 4>, steps = array<i64: 1, -3, 1>} : (tensor<2x2x4xf64>) -> tensor<2x6x4xf64>
  // CHECK: graph.gather_grad %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x5x4xbf16>, tensor<5xi32>) -> tensor<2x3x4xbf16>
  %1 = graph.gather_grad %gg, %i {axis = 1 : i64} : (tensor<2x5x4xbf16>, tensor<5xi32>) -> tensor<2x3x4xbf16>
  // CHECK: graph.gather_grad %{{.*}}, %{{.*}} {axis = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<7xf32>
  %2 = graph.gather_grad %g0, %i0 {axis = 0 : i64} : (tensor<3xf32>, tensor<3xi64>) -> tensor<7xf32>
  return %0, %1, %2 : tensor<2x6x4xf64>, tensor<2x3x4xbf16>, tensor<7xf32>
}

// CHECK-LABEL: func @hard_sigmoid_grad
func.func @hard_sigmoid_grad(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: graph.hard_sigmoid_grad %{{.*}}, %{{.*}} {alpha = 0.16666666666666666 : f64, beta = 2.500000e-01 : f64} : tensor<2x3xf32>
  %0 = graph.hard_sigmoid_grad %g, %x {alpha = 0.16666666666666666 : f64, beta = 0.25 : f64} : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// CHECK-LABEL: func @hard_swish_grad
func.func @hard_swish_grad(%g: tensor<2x3xf32>, %x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // CHECK: graph.hard_swish_grad %{{.*}}, %{{.*}} : tensor<2x3xf32>
  %0 = graph.hard_swish_grad %g, %x : tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
