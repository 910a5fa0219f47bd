// RUN: %amp-opt %s -split-input-file -verify-diagnostics

func.func @cast_same(%x: tensor<4xf32>) {
  // expected-error @+1 {{'amp.cast' op casts 'tensor<4xf32>' to its own type}}
  %0 = amp.cast %x : tensor<4xf32> to tensor<4xf32>
  return
}

// -----

func.func @cast_shape(%x: tensor<4xf32>) {
  // expected-error @+1 {{'amp.cast' op changes the shape from 'tensor<4xf32>' to 'tensor<2xf16>'}}
  %0 = amp.cast %x : tensor<4xf32> to tensor<2xf16>
  return
}

// -----

func.func @check_no_gradient(%s: tensor<f32>) {
  // expected-error @+1 {{'amp.check_finite' op needs at least one gradient}}
  %0 = amp.check_finite(), %s : (tensor<f32>) -> tensor<i1>
  return
}

// -----

func.func @update_backoff(%s: tensor<f32>, %g: tensor<i64>, %f: tensor<i1>) {
  // expected-error @+1 {{'amp.update_scale' op backoff must be in (0, 1], got 2}}
  %0:3 = amp.update_scale %s, %g, %g, %f {growth = 2.0 : f64, backoff = 2.0 : f64, growth_interval = 2000 : i64, decr_every_n = 1 : i64, min_scale = 1.0 : f64, max_scale = 65536.0 : f64} : (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>, tensor<i64>)
  return
}

// -----

func.func @update_interval(%s: tensor<f32>, %g: tensor<i64>, %f: tensor<i1>) {
  // expected-error @+1 {{'amp.update_scale' op growth_interval must be >= 1, got 0}}
  %0:3 = amp.update_scale %s, %g, %g, %f {growth = 2.0 : f64, backoff = 0.5 : f64, growth_interval = 0 : i64, decr_every_n = 1 : i64, min_scale = 1.0 : f64, max_scale = 65536.0 : f64} : (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>, tensor<i64>)
  return
}

// -----

func.func @scale_not_scalar(%g: tensor<4xf32>, %s: tensor<2xf32>) {
  // expected-error @+1 {{'amp.check_finite' op operand #1 must be 0D tensor of 32-bit float values}}
  %0 = amp.check_finite(%g), %s : (tensor<4xf32>, tensor<2xf32>) -> tensor<i1>
  return
}

// -----

func.func @skip_not_bool(%g: tensor<4xf32>, %s: tensor<f32>, %k: tensor<f32>) {
  // expected-error @+1 {{'amp.check_finite' op operand #2 must be 0D tensor of 1-bit signless integer values}}
  %0 = amp.check_finite(%g), %s skip %k : (tensor<4xf32>, tensor<f32>, tensor<f32>) -> tensor<i1>
  return
}

// -----

func.func @guard_types(%f: tensor<i1>, %a: tensor<4xf32>, %b: tensor<4xf16>) {
  // expected-error @+1 {{'amp.guard_update' op entry #0 mixes types 'tensor<4xf32>', 'tensor<4xf16>' and 'tensor<4xf32>'}}
  %0 = amp.guard_update %f, (%a), (%b) : (tensor<i1>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  return
}
