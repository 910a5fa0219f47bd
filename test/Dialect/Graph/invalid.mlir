// RUN: %amp-opt %s -split-input-file -verify-diagnostics

func.func @broadcast_mismatch(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) {
  // expected-error @+2 {{'graph.add' op shapes [2, 3] and [4, 3] do not broadcast (dimension 0: 2 vs 4)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.add %a, %b : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @mixed_element_types(%a: tensor<2x3xf32>, %b: tensor<2x3xf16>) {
  // expected-error @+2 {{'graph.mul' op rhs has element type f16 but lhs has f32}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf16>) -> tensor<2x3xf32>
  return
}

// -----

func.func @wrong_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'graph.sub' op inferred type(s) 'tensor<2x3xf32>' are incompatible with return type(s) of operation 'tensor<3x3xf32>'}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return
}

// -----

func.func @dynamic_shape(%a: tensor<?x3xf32>) {
  // expected-error @+1 {{'graph.relu' op operand #0 must be statically shaped tensor}}
  %0 = graph.relu %a : tensor<?x3xf32>
  return
}

// -----

func.func @relu_on_int(%a: tensor<3xi64>) {
  // expected-error @+1 {{'graph.relu' op operand #0 must be statically shaped tensor of 32-bit float or 16-bit float or bfloat16 type or 64-bit float values}}
  %0 = graph.relu %a : tensor<3xi64>
  return
}

// -----

func.func @matmul_contraction(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) {
  // expected-error @+2 {{'graph.matmul' op contracting dimensions differ: [2, 3] has 3, [4, 5] has 4}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return
}

// -----

func.func @gemm_bias(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>, %c: tensor<3xf32>) {
  // expected-error @+2 {{'graph.gemm' op C of shape [3] does not broadcast to [2, 4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gemm %a, %b, %c : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<3xf32>) -> tensor<2x4xf32>
  return
}

// -----

func.func @conv_channels(%x: tensor<1x3x8x8xf32>, %w: tensor<4x2x3x3xf32>) {
  // expected-error @+2 {{'graph.conv2d' op filter [4, 2, 3, 3] expects 2 input channels (group 1), input [1, 3, 8, 8] has 3}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.conv2d %x, %w {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x3x8x8xf32>, tensor<4x2x3x3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @conv_bias(%x: tensor<1x2x8x8xf32>, %w: tensor<4x2x3x3xf32>, %b: tensor<3xf32>) {
  // expected-error @+2 {{'graph.conv2d' op bias must have shape [4], got [3]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.conv2d %x, %w, %b {strides = array<i64: 1, 1>, pads = array<i64: 0, 0, 0, 0>, dilations = array<i64: 1, 1>, group = 1 : i64} : (tensor<1x2x8x8xf32>, tensor<4x2x3x3xf32>, tensor<3xf32>) -> tensor<1x4x6x6xf32>
  return
}

// -----

func.func @pool_pads(%x: tensor<1x1x8x8xf32>) {
  // expected-error @+2 {{'graph.max_pool2d' op expected 2 strides, 4 pads and 2 dilations, got 2, 2 and 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.max_pool2d %x {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 0, 0>, dilations = array<i64: 1, 1>} : (tensor<1x1x8x8xf32>) -> tensor<1x1x4x4xf32>
  return
}

// -----

func.func @reduce_axis(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'graph.reduce_sum' op reduction axis 2 is out of range for rank 2}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.reduce_sum %x {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return
}

// -----

func.func @softmax_axis(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.softmax' op axis 2 is out of range [0, 2)}}
  %0 = graph.softmax %x {axis = 2 : i64} : tensor<2x3xf32>
  return
}

// -----

func.func @loss_target(%x: tensor<4x10xf32>, %l: tensor<5xi64>) {
  // expected-error @+2 {{'graph.softmax_cross_entropy' op target [5] must have shape [4] for input [4, 10]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = graph.softmax_cross_entropy %x, %l : (tensor<4x10xf32>, tensor<5xi64>) -> (tensor<f32>, tensor<4x10xf32>)
  return
}

// -----

func.func @loss_reduction(%x: tensor<4x10xf32>, %l: tensor<4xi64>) {
  // expected-error @+2 {{'graph.nll_loss' op reduction must be none, sum or mean, got "avg"}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.nll_loss %x, %l {reduction = "avg"} : (tensor<4x10xf32>, tensor<4xi64>) -> tensor<f32>
  return
}

// -----

func.func @bn_channels(%x: tensor<2x3x4x4xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{'graph.batch_norm_inference' op scale must have shape [3], got [4]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.batch_norm_inference %x, %s, %s, %s, %s {epsilon = 1.0e-5 : f64} : (tensor<2x3x4x4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4x4xf32>
  return
}

// -----

func.func @ln_scale(%x: tensor<2x8xf32>, %s: tensor<4xf32>) {
  // expected-error @+2 {{'graph.layer_norm' op scale [4] does not broadcast to the normalized shape [8]}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:3 = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64} : (tensor<2x8xf32>, tensor<4xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.reshape' op has 6 input elements 'tensor<2x3xf32>' but 8 result elements 'tensor<2x4xf32>'}}
  %0 = graph.reshape %x : tensor<2x3xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @broadcast_to(%x: tensor<2x3xf32>) {
  // expected-error @+1 {{'graph.broadcast_to' op input 'tensor<2x3xf32>' does not broadcast to 'tensor<2x4xf32>'}}
  %0 = graph.broadcast_to %x : tensor<2x3xf32> to tensor<2x4xf32>
  return
}

// -----

func.func @transpose_perm(%x: tensor<2x3xf32>) {
  // expected-error @+2 {{'graph.transpose' op [0, 0] is not a permutation of [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.transpose %x {perm = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x2xf32>
  return
}

// -----

func.func @concat_dims(%a: tensor<2x3xf32>, %b: tensor<3x3xf32>) {
  // expected-error @+2 {{'graph.concat' op input 1 [3, 3] differs from input 0 [2, 3] in dimension 0 (not the axis)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3x3xf32>) -> tensor<2x6xf32>
  return
}

// -----

func.func @slice_bounds(%x: tensor<10xf32>) {
  // expected-error @+2 {{'graph.slice' op slice of dimension 0 (size 10) has start 5, end 3, step 1, which are not normalized}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.slice %x {starts = array<i64: 5>, ends = array<i64: 3>, steps = array<i64: 1>} : (tensor<10xf32>) -> tensor<0xf32>
  return
}

// -----

func.func @gather_axis(%x: tensor<10xf32>, %i: tensor<2xi64>) {
  // expected-error @+2 {{'graph.gather' op gather axis 1 is out of range for data of rank 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.gather %x, %i {axis = 1 : i64} : (tensor<10xf32>, tensor<2xi64>) -> tensor<2xf32>
  return
}

// -----

func.func @dropout_ratio(%x: tensor<10xf32>) {
  // expected-error @+1 {{'graph.dropout' op ratio must be in [0, 1), got 1.5}}
  %0:2 = graph.dropout %x {ratio = 1.5 : f64, training = true, seed = 0 : i64} : (tensor<10xf32>) -> (tensor<10xf32>, tensor<10xi1>)
  return
}

// -----

func.func @gelu_mode(%x: tensor<10xf32>) {
  // expected-error @+1 {{'graph.gelu' op approximate must be "none" or "tanh", got "fast"}}
  %0 = graph.gelu %x {approximate = "fast"} : tensor<10xf32>
  return
}

// -----

func.func @clip_bounds(%x: tensor<10xf32>) {
  // expected-error @+1 {{'graph.clip' op min 6.000000e+00 is greater than max 0.000000e+00}}
  %0 = graph.clip %x {min = 6.0 : f64, max = 0.0 : f64} : tensor<10xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<10xf32>) {
  // expected-error @+1 {{'graph.cast' op changes the shape from 'tensor<10xf32>' to 'tensor<5xf16>'}}
  %0 = graph.cast %x : tensor<10xf32> to tensor<5xf16>
  return
}

// -----

func.func @cumsum_axis(%x: tensor<4x10xf32>) {
  // expected-error @+1 {{'graph.cumsum' op axis 2 is out of range [0, 2)}}
  %0 = graph.cumsum %x {axis = 2 : i64} : tensor<4x10xf32>
  return
}

// -----

func.func @arg_max_empty(%x: tensor<4x0xf32>) {
  // expected-error @+2 {{'graph.arg_max' op axis 1 is empty: it has no maximum}}
  // expected-error @+1 {{failed to infer returned types}}
  %0 = graph.arg_max %x {axis = 1 : i64} : (tensor<4x0xf32>) -> tensor<4x1xi64>
  return
}

// -----

func.func @top_k_too_many(%x: tensor<4x10xf32>) {
  // expected-error @+2 {{'graph.top_k' op k = 11 is not in [0, 10], the size of axis 1}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = graph.top_k %x {axis = 1 : i64, k = 11 : i64} : (tensor<4x10xf32>) -> (tensor<4x11xf32>, tensor<4x11xi64>)
  return
}

// -----

func.func @top_k_axis(%x: tensor<4x10xf32>) {
  // expected-error @+2 {{'graph.top_k' op axis -1 is out of range [0, 2)}}
  // expected-error @+1 {{failed to infer returned types}}
  %0:2 = graph.top_k %x {axis = -1 : i64, k = 1 : i64} : (tensor<4x10xf32>) -> (tensor<4x1xf32>, tensor<4x1xi64>)
  return
}

// -----

func.func @batch_norm_sync_one_rank(%x: tensor<2x3xf32>, %c: tensor<3xf32>) {
  // expected-error @+1 {{'graph.batch_norm_training' op sync_ranks must be >= 2, got 1}}
  %y:5 = graph.batch_norm_training %x, %c, %c, %c, %c {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64, sync_ranks = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  return
}
