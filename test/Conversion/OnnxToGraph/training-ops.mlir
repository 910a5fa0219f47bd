// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Momentum over two tensors: one update per tensor, and the node's outputs
// are X1_new, X2_new, V1_new, V2_new. Float attributes widen through their
// shortest decimal (0.95, not 0.949999988).
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x1: tensor<1xf32> {onnx.name = "X1"}, %x2: tensor<2xf32> {onnx.name = "X2"}, %g1: tensor<1xf32> {onnx.name = "G1"}, %g2: tensor<2xf32> {onnx.name = "G2"}, %v1: tensor<1xf32> {onnx.name = "V1"}, %v2: tensor<2xf32> {onnx.name = "V2"}) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) {
  // CHECK: %[[X1:.*]], %[[V1:.*]] = graph.momentum_update %arg0, %arg1, %arg2, %arg4, %arg6 {alpha = 0.94999999999999996 : f64, beta = 8.500000e-01 : f64, norm_coefficient = 1.000000e-03 : f64} : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<1xf32>, tensor<1xf32>) -> (tensor<1xf32>, tensor<1xf32>)
  // CHECK: %[[X2:.*]], %[[V2:.*]] = graph.momentum_update %arg0, %arg1, %arg3, %arg5, %arg7 {{.*}} : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  // CHECK: return %[[X1]], %[[X2]], %[[V1]], %[[V2]]
  %0:4 = onnx.node "Momentum"(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2) {alpha = 0.95 : f32, beta = 0.85 : f32, mode = "standard", norm_coefficient = 0.001 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>
}

// -----

// Nesterov, with a double learning rate and double tensors.
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f64> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2x3xf64> {onnx.name = "X"}, %g: tensor<2x3xf64> {onnx.name = "G"}, %v: tensor<2x3xf64> {onnx.name = "V"}) -> (tensor<2x3xf64>, tensor<2x3xf64>) {
  // CHECK: %[[X:.*]], %[[V:.*]] = graph.momentum_update %arg0, %arg1, %arg2, %arg3, %arg4 {alpha = 0.94999999999999996 : f64, beta = 1.000000e+00 : f64, mode = "nesterov", norm_coefficient = 1.000000e-02 : f64} : (tensor<f64>, tensor<i64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>)
  // CHECK: return %[[X]], %[[V]]
  %0:2 = onnx.node "Momentum"(%r, %t, %x, %g, %v) {alpha = 0.95 : f32, beta = 1.0 : f32, mode = "nesterov", norm_coefficient = 0.01 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f64>, tensor<i64>, tensor<2x3xf64>, tensor<2x3xf64>, tensor<2x3xf64>) -> (tensor<2x3xf64>, tensor<2x3xf64>)
  return %0#0, %0#1 : tensor<2x3xf64>, tensor<2x3xf64>
}

// -----

// Adam without attributes takes ONNX's defaults (epsilon 1e-6, not the
// graph op's PyTorch 1e-8) and ONNX's update rule; the others equal the
// graph op's defaults, so the printer elides them.
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<4xf32> {onnx.name = "X"}, %g: tensor<4xf32> {onnx.name = "G"}, %v: tensor<4xf32> {onnx.name = "V"}, %h: tensor<4xf32> {onnx.name = "H"}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: %[[X:.*]], %[[M:.*]], %[[V:.*]] = graph.adam_update %arg0, %arg1, %arg2, %arg3, %arg4, %arg5 {epsilon = 9.9999999999999995E-7 : f64, mode = "onnx"} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  // CHECK: return %[[X]], %[[M]], %[[V]]
  %0:3 = onnx.node "Adam"(%r, %t, %x, %g, %v, %h) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// Adam over two tensors, every attribute set: outputs X1_new, X2_new,
// V1_new, V2_new, H1_new, H2_new.
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x1: tensor<1xf32> {onnx.name = "X1"}, %x2: tensor<2xf32> {onnx.name = "X2"}, %g1: tensor<1xf32> {onnx.name = "G1"}, %g2: tensor<2xf32> {onnx.name = "G2"}, %v1: tensor<1xf32> {onnx.name = "V1"}, %v2: tensor<2xf32> {onnx.name = "V2"}, %h1: tensor<1xf32> {onnx.name = "H1"}, %h2: tensor<2xf32> {onnx.name = "H2"}) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) {
  // CHECK: %[[X1:.*]], %[[V1:.*]], %[[H1:.*]] = graph.adam_update %arg0, %arg1, %arg2, %arg4, %arg6, %arg8 {alpha = 0.94999999999999996 : f64, beta = 8.500000e-01 : f64, epsilon = 9.9999999999999995E-8 : f64, mode = "onnx", norm_coefficient = 1.000000e-03 : f64, norm_coefficient_post = 2.000000e-02 : f64}
  // CHECK: %[[X2:.*]], %[[V2:.*]], %[[H2:.*]] = graph.adam_update %arg0, %arg1, %arg3, %arg5, %arg7, %arg9
  // CHECK: return %[[X1]], %[[X2]], %[[V1]], %[[V2]], %[[H1]], %[[H2]]
  %0:6 = onnx.node "Adam"(%r, %t, %x1, %x2, %g1, %g2, %v1, %v2, %h1, %h2) {alpha = 0.95 : f32, beta = 0.85 : f32, epsilon = 1.0e-7 : f32, norm_coefficient = 0.001 : f32, norm_coefficient_post = 0.02 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>
}

// -----

// Adagrad without attributes: ONNX's defaults, which are the graph op's.
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<3xf32> {onnx.name = "X"}, %g: tensor<3xf32> {onnx.name = "G"}, %h: tensor<3xf32> {onnx.name = "H"}) -> (tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[X:.*]], %[[H:.*]] = graph.adagrad_update %arg0, %arg1, %arg2, %arg3, %arg4 : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  // CHECK: return %[[X]], %[[H]]
  %0:2 = onnx.node "Adagrad"(%r, %t, %x, %g, %h) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Adagrad over two tensors.
// CHECK-LABEL: func.func @forward
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x1: tensor<1xf32> {onnx.name = "X1"}, %x2: tensor<2xf32> {onnx.name = "X2"}, %g1: tensor<1xf32> {onnx.name = "G1"}, %g2: tensor<2xf32> {onnx.name = "G2"}, %h1: tensor<1xf32> {onnx.name = "H1"}, %h2: tensor<2xf32> {onnx.name = "H2"}) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) {
  // CHECK: %[[X1:.*]], %[[H1:.*]] = graph.adagrad_update %arg0, %arg1, %arg2, %arg4, %arg6 {decay_factor = 1.000000e-01 : f64, epsilon = 1.000000e-05 : f64, norm_coefficient = 1.000000e-03 : f64}
  // CHECK: %[[X2:.*]], %[[H2:.*]] = graph.adagrad_update %arg0, %arg1, %arg3, %arg5, %arg7
  // CHECK: return %[[X1]], %[[X2]], %[[H1]], %[[H2]]
  %0:4 = onnx.node "Adagrad"(%r, %t, %x1, %x2, %g1, %g2, %h1, %h2) {decay_factor = 0.1 : f32, epsilon = 1.0e-5 : f32, norm_coefficient = 0.001 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>) -> (tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<1xf32>, tensor<2xf32>, tensor<1xf32>, tensor<2xf32>
}
