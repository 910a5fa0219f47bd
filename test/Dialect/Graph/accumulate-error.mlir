// RUN: %amp-opt %s -split-input-file -verify-diagnostics

// graph.accumulate names f32 and nothing else.
func.func @not_f32(%a: tensor<4x3xf16>, %b: tensor<3x5xf16>) {
  // expected-error @+1 {{'graph.matmul' op has graph.accumulate = f16, but the only accumulation type is f32}}
  %0 = graph.matmul %a, %b {graph.accumulate = f16} : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
  return
}

// -----

func.func @not_a_type(%a: tensor<4x3xf16>, %b: tensor<3x5xf16>) {
  // expected-error @+1 {{'graph.matmul' op has graph.accumulate = "f32", but the only accumulation type is f32}}
  %0 = graph.matmul %a, %b {graph.accumulate = "f32"} : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
  return
}

// -----

// Only ops that sum carry it: not elementwise ops, not max reductions,
// not ops of other dialects.
func.func @elementwise(%x: tensor<4xf16>) {
  // expected-error @+1 {{'graph.add' op has graph.accumulate, but it is not a contraction or reduction: it accumulates nothing}}
  %0 = graph.add %x, %x {graph.accumulate = f32} : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return
}

// -----

func.func @reduce_max(%x: tensor<4x10xf16>) {
  // expected-error @+1 {{'graph.reduce_max' op has graph.accumulate, but it is not a contraction or reduction}}
  %0 = graph.reduce_max %x {axes = array<i64: 1>, graph.accumulate = f32} : (tensor<4x10xf16>) -> tensor<4x1xf16>
  return
}

// -----

func.func @amp_cast(%x: tensor<4xf32>) {
  // expected-error @+1 {{'amp.cast' op has graph.accumulate, but it is not a contraction or reduction}}
  %0 = amp.cast %x {graph.accumulate = f32} : tensor<4xf32> to tensor<4xf16>
  return
}

// -----

// An op in f32 or f64 accumulates in its own type: the attribute would
// say nothing.
func.func @f32_matmul(%a: tensor<4x3xf32>, %b: tensor<3x5xf32>) {
  // expected-error @+1 {{'graph.matmul' op has graph.accumulate but computes in 'f32': only f16 and bf16 ops carry it (an op in f32 or f64 accumulates in its own type)}}
  %0 = graph.matmul %a, %b {graph.accumulate = f32} : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return
}

// -----

func.func @f64_reduce_sum(%x: tensor<4x10xf64>) {
  // expected-error @+1 {{'graph.reduce_sum' op has graph.accumulate but computes in 'f64'}}
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, graph.accumulate = f32} : (tensor<4x10xf64>) -> tensor<1x10xf64>
  return
}

// -----

func.func @integer_reduce_sum(%x: tensor<4x10xi64>) {
  // expected-error @+1 {{'graph.reduce_sum' op has graph.accumulate but computes in 'i64'}}
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, graph.accumulate = f32} : (tensor<4x10xi64>) -> tensor<1x10xi64>
  return
}
