// RUN: %amp-opt %s | %amp-opt | FileCheck %s

// CHECK-LABEL: func @scaling
func.func @scaling(%loss: tensor<f32>, %scale: tensor<f32>, %g0: tensor<4x4xf16>, %g1: tensor<4xf32>, %good: tensor<i64>, %bad: tensor<i64>, %w: tensor<4xf32>, %w1: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<f32>, tensor<4xf32>) {
  // CHECK: amp.cast %{{.*}} : tensor<4x4xf16> to tensor<4x4xf32>
  %c = amp.cast %g0 : tensor<4x4xf16> to tensor<4x4xf32>
  // CHECK: amp.check_finite(%{{.*}}, %{{.*}}), %{{.*}} : (tensor<4x4xf16>, tensor<4xf32>, tensor<f32>) -> tensor<i1>
  %found = amp.check_finite(%g0, %g1), %scale : (tensor<4x4xf16>, tensor<4xf32>, tensor<f32>) -> tensor<i1>
  // CHECK: amp.check_finite(%{{.*}}), %{{.*}} skip %{{.*}} : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<i1>
  %k = amp.check_finite(%g1), %scale skip %found : (tensor<4xf32>, tensor<f32>, tensor<i1>) -> tensor<i1>
  // CHECK: amp.update_scale
  %n:3 = amp.update_scale %scale, %good, %bad, %found {growth = 2.0 : f64, backoff = 0.5 : f64, growth_interval = 2000 : i64, decr_every_n = 1 : i64, min_scale = 1.0 : f64, max_scale = 16777216.0 : f64} : (tensor<f32>, tensor<i64>, tensor<i64>, tensor<i1>) -> (tensor<f32>, tensor<i64>, tensor<i64>)
  // CHECK: amp.guard_update %{{.*}}, (%{{.*}}), (%{{.*}}) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %r = amp.guard_update %found, (%w1), (%w) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %c, %n#0, %r : tensor<4x4xf32>, tensor<f32>, tensor<4xf32>
}
