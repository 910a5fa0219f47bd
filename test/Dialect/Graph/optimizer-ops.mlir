// RUN: %amp-opt %s | %amp-opt | FileCheck %s
// RUN: %amp-opt %s --mlir-print-op-generic | %amp-opt | FileCheck %s

// CHECK-LABEL: func @sgd
func.func @sgd(%lr: tensor<f32>, %p: tensor<4x3xf32>, %g: tensor<4x3xf32>) -> tensor<4x3xf32> {
  // CHECK: graph.sgd_update %{{.*}}, %{{.*}}, %{{.*}} {weight_decay = 1.000000e-02 : f64} : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  %0 = graph.sgd_update %lr, %p, %g {weight_decay = 0.01 : f64} : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// A loss-scaled f16 gradient of an f32 parameter, read with the scale.
// CHECK-LABEL: func @guards
func.func @guards(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>, %g: tensor<4xf16>, %v: tensor<4xf32>, %k: tensor<i1>, %s: tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: graph.sgd_update %{{.*}}, %{{.*}}, %{{.*}} skip %{{.*}} : (tensor<f32>, tensor<4xf32>, tensor<4xf16>, tensor<i1>) -> tensor<4xf32>
  %0 = graph.sgd_update %lr, %p, %g skip %k : (tensor<f32>, tensor<4xf32>, tensor<4xf16>, tensor<i1>) -> tensor<4xf32>
  // CHECK: graph.momentum_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} skip %[[K:.*]] loss_scale %[[S:[^ ]*]] {alpha = 9.000000e-01 : f64, beta = 1.000000e+00 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<i1>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  %1:2 = graph.momentum_update %lr, %t, %0, %g, %v skip %k loss_scale %s {alpha = 0.9 : f64, beta = 1.0 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<i1>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %1#0, %1#1 : tensor<4xf32>, tensor<4xf32>
}

// CHECK-LABEL: func @momentum
func.func @momentum(%lr: tensor<f64>, %t: tensor<i64>, %p: tensor<8xbf16>, %g: tensor<8xbf16>, %v: tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xbf16>) {
  // CHECK: graph.momentum_update %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {alpha = 9.000000e-01 : f64, beta = 1.000000e+00 : f64, mode = "nesterov"} : (tensor<f64>, tensor<i64>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xbf16>)
  %0:2 = graph.momentum_update %lr, %t, %p, %g, %v {alpha = 0.9 : f64, beta = 1.0 : f64, mode = "nesterov"} : (tensor<f64>, tensor<i64>, tensor<8xbf16>, tensor<8xbf16>, tensor<8xbf16>) -> (tensor<8xbf16>, tensor<8xbf16>)
  return %0#0, %0#1 : tensor<8xbf16>, tensor<8xbf16>
}

// CHECK-LABEL: func @adam
func.func @adam(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<2x2xf16>, %g: tensor<2x2xf16>, %m: tensor<2x2xf16>, %v: tensor<2x2xf16>) -> (tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>) {
  // CHECK: graph.adam_update {{.*}} {weight_decay = 1.000000e-01 : f64} : (tensor<f32>, tensor<i64>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>) -> (tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>)
  %0:3 = graph.adam_update %lr, %t, %p, %g, %m, %v {weight_decay = 0.1 : f64} : (tensor<f32>, tensor<i64>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>) -> (tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>)
  // CHECK: graph.adam_update {{.*}} {alpha = 0.94999999999999996 : f64, beta = 1.000000e-01 : f64, epsilon = 9.9999999999999995E-8 : f64, mode = "onnx", norm_coefficient_post = 2.000000e-02 : f64}
  %1:3 = graph.adam_update %lr, %t, %p, %g, %m, %v {alpha = 0.95 : f64, beta = 0.1 : f64, epsilon = 1.0e-7 : f64, mode = "onnx", norm_coefficient_post = 0.02 : f64} : (tensor<f32>, tensor<i64>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>) -> (tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>)
  return %0#0, %1#1, %1#2 : tensor<2x2xf16>, tensor<2x2xf16>, tensor<2x2xf16>
}

// CHECK-LABEL: func @adagrad
func.func @adagrad(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<5xf64>, %g: tensor<5xf64>, %h: tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>) {
  // CHECK: graph.adagrad_update {{.*}} {decay_factor = 1.000000e-01 : f64} : (tensor<f32>, tensor<i64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>)
  %0:2 = graph.adagrad_update %lr, %t, %p, %g, %h {decay_factor = 0.1 : f64} : (tensor<f32>, tensor<i64>, tensor<5xf64>, tensor<5xf64>, tensor<5xf64>) -> (tensor<5xf64>, tensor<5xf64>)
  return %0#0, %0#1 : tensor<5xf64>, tensor<5xf64>
}

// CHECK-LABEL: func @schedules
func.func @schedules(%t: tensor<i64>) -> (tensor<f32>, tensor<f64>) {
  // CHECK: graph.lr_schedule %{{.*}} {base_lr = 1.000000e-01 : f64, gamma = 5.000000e-01 : f64, kind = "step", step_size = 30 : i64} : (tensor<i64>) -> tensor<f32>
  %0 = graph.lr_schedule %t {base_lr = 0.1 : f64, kind = "step", step_size = 30 : i64, gamma = 0.5 : f64} : (tensor<i64>) -> tensor<f32>
  // CHECK: graph.lr_schedule %{{.*}} {base_lr = 1.000000e+00 : f64, kind = "cosine", min_lr = 1.000000e-02 : f64, total_steps = 100 : i64} : (tensor<i64>) -> tensor<f64>
  %1 = graph.lr_schedule %t {base_lr = 1.0 : f64, kind = "cosine", total_steps = 100 : i64, min_lr = 0.01 : f64} : (tensor<i64>) -> tensor<f64>
  return %0, %1 : tensor<f32>, tensor<f64>
}

// Data parallelism: a bucket of gradients of different shapes and types,
// summed in one f32 buffer between the start and the wait.
// CHECK-LABEL: func @all_reduce
// CHECK: %[[X:.*]] = graph.all_reduce_start %{{.*}} skip %[[S:.*]] {world_size = 2 : i64} : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
// CHECK: graph.all_reduce_wait %[[X]] skip %[[S]] {world_size = 2 : i64} : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
// CHECK: %[[Y:.*]] = graph.all_reduce_start %{{.*}}, %{{.*}} {world_size = 4 : i64} : (tensor<4x3xf16>, tensor<3xf32>) -> tensor<15xf32>
// CHECK: graph.all_reduce_wait %[[Y]] {world_size = 4 : i64} : (tensor<15xf32>) -> (tensor<4x3xf16>, tensor<3xf32>)
func.func @all_reduce(%a: tensor<4x3xf16>, %b: tensor<3xf32>, %s: tensor<i1>) -> (tensor<4x3xf16>, tensor<3xf32>) {
  %x = graph.all_reduce_start %b skip %s {world_size = 2 : i64} : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
  %n = graph.all_reduce_wait %x skip %s {world_size = 2 : i64} : (tensor<3xf32>, tensor<i1>) -> tensor<3xf32>
  %y = graph.all_reduce_start %a, %n {world_size = 4 : i64} : (tensor<4x3xf16>, tensor<3xf32>) -> tensor<15xf32>
  %m:2 = graph.all_reduce_wait %y {world_size = 4 : i64} : (tensor<15xf32>) -> (tensor<4x3xf16>, tensor<3xf32>)
  return %m#0, %m#1 : tensor<4x3xf16>, tensor<3xf32>
}
