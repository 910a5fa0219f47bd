// RUN: %amp-opt %s -split-input-file -verify-diagnostics

// One case per verifier message of dialects/Graph/GradientOps.cpp (and of
// the shared shape rules and loss checks it calls).

func.func @gelu_grad_approximate(%g: tensor<3xf32>, %x: tensor<3xf32>) {
  // expected-error @+1 {{'graph.gelu_grad' op approximate must be "none" or "tanh", got "fast"}}
  %0 = graph.gelu_grad %g, %x {approximate = "fast"} : tensor<3xf32>
  return
}

// -----

func.func @conv_data_element_types(%dy: tensor<2x8x5x5xf32>, %w: tensor<8x2x3x3xf16>) {
  // expected-error @+1 {{'graph.conv2d_backward_data' op operands and results must share one element type; got 'f32' and 'f16'}}
  %0 = graph.conv2d_backward_data %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf16>) -> tensor<2x4x9x9xf32>
  return
}

// -----

func.func @conv_data_rank(%dy: tensor<2x8x5x5xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_data' op conv2d of the result type and the filter: conv2d expects a 4-D NCHW input and OIHW filter, got [4, 9, 9] and [8, 2, 3, 3]}}
  %0 = graph.conv2d_backward_data %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<8x2x3x3xf32>) -> tensor<4x9x9xf32>
  return
}

// -----

func.func @conv_data_shape(%dy: tensor<2x8x4x4xf32>, %w: tensor<8x2x3x3xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_data' op conv2d of the result type and the filter gives [2, 8, 5, 5] but grad is [2, 8, 4, 4]}}
  %0 = graph.conv2d_backward_data %dy, %w {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x4x4xf32>, tensor<8x2x3x3xf32>) -> tensor<2x4x9x9xf32>
  return
}

// -----

func.func @conv_filter_element_types(%dy: tensor<2x8x5x5xf32>, %x: tensor<2x4x9x9xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_filter' op operands and results must share one element type; got 'f32' and 'bf16'}}
  %0 = graph.conv2d_backward_filter %dy, %x {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<2x4x9x9xf32>) -> tensor<8x2x3x3xbf16>
  return
}

// -----

func.func @conv_filter_group(%dy: tensor<2x8x5x5xf32>, %x: tensor<2x4x9x9xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_filter' op conv2d of the input and the result type: group 3 must divide input channels 4 and output channels 8}}
  %0 = graph.conv2d_backward_filter %dy, %x {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 3 : i64} : (tensor<2x8x5x5xf32>, tensor<2x4x9x9xf32>) -> tensor<8x2x3x3xf32>
  return
}

// -----

func.func @conv_filter_shape(%dy: tensor<2x8x5x5xf32>, %x: tensor<2x4x9x9xf32>) {
  // expected-error @+1 {{'graph.conv2d_backward_filter' op conv2d of the input and the result type gives [2, 8, 4, 4] but grad is [2, 8, 5, 5]}}
  %0 = graph.conv2d_backward_filter %dy, %x {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>, dilations = array<i64: 1, 1>, group = 2 : i64} : (tensor<2x8x5x5xf32>, tensor<2x4x9x9xf32>) -> tensor<8x2x5x5xf32>
  return
}

// -----

func.func @max_pool_grad_element_types(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf16>) {
  // expected-error @+2 {{'graph.max_pool2d_grad' op input has element type f16 but grad has f32}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf16>) -> tensor<1x2x4x4xf16>
  return
}

// -----

func.func @max_pool_grad_window(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>) {
  // expected-error @+2 {{'graph.max_pool2d_grad' op expected 2 strides, 4 pads and 2 dilations, got 2, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @max_pool_grad_shape(%dy: tensor<1x2x3x3xf32>, %x: tensor<1x2x4x4xf32>) {
  // expected-error @+2 {{'graph.max_pool2d_grad' op max_pool2d of the input gives [1, 2, 2, 2] but grad is [1, 2, 3, 3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x3x3xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @max_pool_grad_result(%dy: tensor<1x2x2x2xf32>, %x: tensor<1x2x4x4xf32>) {
  // expected-error @+2 {{'graph.max_pool2d_grad' op inferred type(s) 'tensor<1x2x4x4xf32>' are incompatible with return type(s) of operation 'tensor<1x2x5x5xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max_pool2d_grad %dy, %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x2x2x2xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @avg_pool_grad_element_types(%dy: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op operands and results must share one element type; got 'f32' and 'f16'}}
  %0 = graph.avg_pool2d_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>} : (tensor<1x2x2x2xf32>) -> tensor<1x2x4x4xf16>
  return
}

// -----

func.func @avg_pool_grad_pads(%dy: tensor<1x2x4x4xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op avg_pool2d of the result type: pads [2, 2, 2, 2] must be smaller than the kernel [2, 2]}}
  %0 = graph.avg_pool2d_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 2, 2, 2, 2>} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return
}

// -----

func.func @avg_pool_grad_shape(%dy: tensor<1x2x2x2xf32>) {
  // expected-error @+1 {{'graph.avg_pool2d_grad' op avg_pool2d of the result type gives [1, 2, 3, 3] but grad is [1, 2, 2, 2]}}
  %0 = graph.avg_pool2d_grad %dy {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0, 0, 0>, ceil_mode = true} : (tensor<1x2x2x2xf32>) -> tensor<1x2x5x5xf32>
  return
}

// -----

func.func @reduce_max_grad_element_types(%g: tensor<1x10xf32>, %x: tensor<4x10xf32>, %m: tensor<1x10xf16>) {
  // expected-error @+2 {{'graph.reduce_max_grad' op output_value has element type f16 but grad has f32}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_max_grad %g, %x, %m {axes = array<i64: 0>} : (tensor<1x10xf32>, tensor<4x10xf32>, tensor<1x10xf16>) -> tensor<4x10xf32>
  return
}

// -----

func.func @reduce_max_grad_axis(%g: tensor<1x10xf32>, %x: tensor<4x10xf32>, %m: tensor<1x10xf32>) {
  // expected-error @+2 {{'graph.reduce_max_grad' op reduction axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_max_grad %g, %x, %m {axes = array<i64: 2>} : (tensor<1x10xf32>, tensor<4x10xf32>, tensor<1x10xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @reduce_max_grad_shape(%g: tensor<1x10xf32>, %x: tensor<4x10xf32>, %m: tensor<10xf32>) {
  // expected-error @+2 {{'graph.reduce_max_grad' op reduce_max of the input gives [1, 10], not [10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_max_grad %g, %x, %m {axes = array<i64: 0>} : (tensor<1x10xf32>, tensor<4x10xf32>, tensor<10xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @softmax_grad_axis(%g: tensor<4x10xf32>, %y: tensor<4x10xf32>) {
  // expected-error @+1 {{'graph.softmax_grad' op axis 2 is out of range [0, 2)}}
  %0 = graph.softmax_grad %g, %y {axis = 2 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @log_softmax_grad_axis(%g: tensor<4x10xf32>, %y: tensor<4x10xf32>) {
  // expected-error @+1 {{'graph.log_softmax_grad' op axis 5 is out of range [0, 2)}}
  %0 = graph.log_softmax_grad %g, %y {axis = 5 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @sce_grad_rank(%g: tensor<f32>, %lp: tensor<10xf32>, %l: tensor<i64>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op expects input [N, C, d...] of rank >= 2, got [10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l : (tensor<f32>, tensor<10xf32>, tensor<i64>) -> tensor<10xf32>
  return
}

// -----

func.func @sce_grad_labels(%g: tensor<f32>, %lp: tensor<4x10xf32>, %l: tensor<3xi64>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op target [3] must have shape [4] for input [4, 10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l : (tensor<f32>, tensor<4x10xf32>, tensor<3xi64>) -> tensor<4x10xf32>
  return
}

// -----

func.func @sce_grad_weight_type(%g: tensor<f32>, %lp: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<10xf16>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op weight element type differs from the input's}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l, %w : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<10xf16>) -> tensor<4x10xf32>
  return
}

// -----

func.func @sce_grad_weight_shape(%g: tensor<f32>, %lp: tensor<4x10xf32>, %l: tensor<4xi64>, %w: tensor<9xf32>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op weight must have shape [10], got [9]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l, %w : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>, tensor<9xf32>) -> tensor<4x10xf32>
  return
}

// -----

func.func @sce_grad_reduction(%g: tensor<f32>, %lp: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op reduction must be none, sum or mean, got "avg"}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l {reduction = "avg"} : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  return
}

// -----

func.func @sce_grad_grad_shape(%g: tensor<4xf32>, %lp: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy_grad' op grad has shape [4] but the loss has []}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.softmax_cross_entropy_grad %g, %lp, %l : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> tensor<4x10xf32>
  return
}

// -----

func.func @nll_grad_target(%g: tensor<f32>, %t: tensor<4x1xi64>) {
  // expected-error @+1 {{'graph.nll_loss_grad' op target [4, 1] must have shape [4] for input [4, 10]}}
  %0 = graph.nll_loss_grad %g, %t : (tensor<f32>, tensor<4x1xi64>) -> tensor<4x10xf32>
  return
}

// -----

func.func @nll_grad_grad_type(%g: tensor<f32>, %t: tensor<4xi64>) {
  // expected-error @+1 {{'graph.nll_loss_grad' op grad has type 'tensor<f32>' but the loss has 'tensor<4xf32>'}}
  %0 = graph.nll_loss_grad %g, %t {reduction = "none"} : (tensor<f32>, tensor<4xi64>) -> tensor<4x10xf32>
  return
}

// -----

func.func @batch_norm_grad_rank(%g: tensor<3xf32>, %x: tensor<3xf32>, %c: tensor<3xf32>) {
  // expected-error @+2 {{'graph.batch_norm_grad' op expects input [N, C, ...] of rank >= 2, got [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.batch_norm_grad %g, %x, %c, %c, %c : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_grad_grad_type(%g: tensor<2x3x4x4xf16>, %x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+2 {{'graph.batch_norm_grad' op grad must have the input's type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.batch_norm_grad %g, %x, %c, %c, %c : (tensor<2x3x4x4xf16>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @batch_norm_grad_stat_shape(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x4x4xf32>, %c: tensor<3xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{'graph.batch_norm_grad' op batch_inv_std must have shape [3], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.batch_norm_grad %g, %x, %c, %c, %s : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<4xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @layer_norm_grad_axis(%g: tensor<2x5x8xf32>, %x: tensor<2x5x8xf32>, %s: tensor<8xf32>, %m: tensor<2x5x1xf32>) {
  // expected-error @+2 {{'graph.layer_norm_grad' op axis 3 is out of range [0, 3)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.layer_norm_grad %g, %x, %s, %m, %m {axis = 3 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layer_norm_grad_grad_type(%g: tensor<2x5x7xf32>, %x: tensor<2x5x8xf32>, %s: tensor<8xf32>, %m: tensor<2x5x1xf32>) {
  // expected-error @+2 {{'graph.layer_norm_grad' op grad must have the input's type}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.layer_norm_grad %g, %x, %s, %m, %m {axis = 2 : i64} : (tensor<2x5x7xf32>, tensor<2x5x8xf32>, tensor<8xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @layer_norm_grad_scale(%g: tensor<2x5x8xf32>, %x: tensor<2x5x8xf32>, %s: tensor<7xf32>, %m: tensor<2x5x1xf32>) {
  // expected-error @+2 {{'graph.layer_norm_grad' op scale [7] does not broadcast to the normalized shape [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.layer_norm_grad %g, %x, %s, %m, %m {axis = 2 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<7xf32>, tensor<2x5x1xf32>, tensor<2x5x1xf32>) -> (tensor<2x5x8xf32>, tensor<7xf32>, tensor<7xf32>)
  return
}

// -----

func.func @layer_norm_grad_stats(%g: tensor<2x5x8xf32>, %x: tensor<2x5x8xf32>, %s: tensor<8xf32>, %m: tensor<2x5xf32>) {
  // expected-error @+2 {{'graph.layer_norm_grad' op mean must have shape [2, 5, 1], got [2, 5]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.layer_norm_grad %g, %x, %s, %m, %m {axis = 2 : i64} : (tensor<2x5x8xf32>, tensor<2x5x8xf32>, tensor<8xf32>, tensor<2x5xf32>, tensor<2x5xf32>) -> (tensor<2x5x8xf32>, tensor<8xf32>, tensor<8xf32>)
  return
}

// -----

func.func @slice_grad_element_types(%g: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice_grad' op operands and results must share one element type; got 'f32' and 'f64'}}
  %0 = graph.slice_grad %g {starts = array<i64: 0, 1>, ends = array<i64: 4, 6>, steps = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<4x6xf64>
  return
}

// -----

func.func @slice_grad_bounds(%g: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.slice_grad' op slice of the result type: slice of dimension 1 (size 5) has start 1, end 6, step 2, which are not normalized}}
  %0 = graph.slice_grad %g {starts = array<i64: 0, 1>, ends = array<i64: 4, 6>, steps = array<i64: 2, 2>} : (tensor<2x3xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @slice_grad_shape(%g: tensor<2x2xf32>) {
  // expected-error @+1 {{'graph.slice_grad' op slice of the result type gives [2, 3] but grad is [2, 2]}}
  %0 = graph.slice_grad %g {starts = array<i64: 0, 1>, ends = array<i64: 4, 6>, steps = array<i64: 2, 2>} : (tensor<2x2xf32>) -> tensor<4x6xf32>
  return
}

// -----

func.func @gather_grad_element_types(%g: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'graph.gather_grad' op operands and results must share one element type; got 'f32' and 'bf16'}}
  %0 = graph.gather_grad %g, %i {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x3xbf16>
  return
}

// -----

func.func @gather_grad_axis(%g: tensor<2x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'graph.gather_grad' op axis 2 is out of range [0, 2)}}
  %0 = graph.gather_grad %g, %i {axis = 2 : i64} : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  return
}

// -----

func.func @gather_grad_shape(%g: tensor<3x3xf32>, %i: tensor<2xi64>) {
  // expected-error @+1 {{'graph.gather_grad' op gather from the result type gives [2, 3] but grad is [3, 3]}}
  %0 = graph.gather_grad %g, %i {axis = 0 : i64} : (tensor<3x3xf32>, tensor<2xi64>) -> tensor<5x3xf32>
  return
}

// -----

func.func @batch_norm_grad_sync_one_rank(%g: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_grad' op sync_ranks must be >= 2, got 0}}
  %d:3 = graph.batch_norm_grad %g, %g, %c, %c, %c {sync_ranks = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}

// -----

func.func @sce_with_grad_labels(%g: tensor<f32>, %x: tensor<4x10xf32>, %l: tensor<3xi64>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_with_grad' op target [3] must have shape [4] for input [4, 10]}}
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l : (tensor<f32>, tensor<4x10xf32>, tensor<3xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  return
}

// -----

func.func @sce_with_grad_loss_type(%g: tensor<f32>, %x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_with_grad' op loss has type 'tensor<4xf32>' but the scores make 'tensor<f32>'}}
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<4xf32>, tensor<4x10xf32>)
  return
}

// -----

func.func @sce_with_grad_seed_type(%g: tensor<4xf32>, %x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_with_grad' op grad has type 'tensor<4xf32>' but the loss has 'tensor<f32>'}}
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l : (tensor<4xf32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  return
}

// -----

func.func @sce_with_grad_dscores_shape(%g: tensor<f32>, %x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_with_grad' op dscores has type 'tensor<10x4xf32>': the scores' shape, and their element type or f16/bf16 for f32 scores ('tensor<4x10xf32>')}}
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l : (tensor<f32>, tensor<4x10xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<10x4xf32>)
  return
}

// -----

func.func @sce_with_grad_wider_dscores(%g: tensor<f16>, %x: tensor<4x10xf16>, %l: tensor<4xi64>) {
  // expected-error @+1 {{'graph.softmax_cross_entropy_with_grad' op dscores has type 'tensor<4x10xf32>': the scores' shape, and their element type or f16/bf16 for f32 scores ('tensor<4x10xf16>')}}
  %0:2 = graph.softmax_cross_entropy_with_grad %g, %x, %l : (tensor<f16>, tensor<4x10xf16>, tensor<4xi64>) -> (tensor<f16>, tensor<4x10xf32>)
  return
}
