// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Momentum, opset 1): expects R, T and 3 inputs per optimized tensor (X_i, G_i, V_i), got 4 inputs}}
  %0 = onnx.node "Momentum"(%r, %t, %x, %x) {alpha = 0.9 : f32, beta = 0.9 : f32, mode = "standard", norm_coefficient = 0.0 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adagrad, opset 1): expects R, T and 3 inputs per optimized tensor (X_i, G_i, H_i), got 2 inputs}}
  %0 = onnx.node "Adagrad"(%r, %t) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adam, opset 1): optimizes 1 tensor(s), so it has 3 outputs (the new values of all but the gradients), got 2}}
  %0:2 = onnx.node "Adam"(%r, %t, %x, %x, %x, %x) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Momentum, opset 1): missing required attribute 'alpha'}}
  %0:2 = onnx.node "Momentum"(%r, %t, %x, %x, %x) {beta = 0.9 : f32, mode = "standard", norm_coefficient = 0.0 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Momentum, opset 1): missing required string attribute 'mode' ("standard" or "nesterov")}}
  %0:2 = onnx.node "Momentum"(%r, %t, %x, %x, %x) {alpha = 0.9 : f32, beta = 0.9 : f32, norm_coefficient = 0.0 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Momentum, opset 1): mode must be "standard" or "nesterov", got "adam"}}
  %0:2 = onnx.node "Momentum"(%r, %t, %x, %x, %x) {alpha = 0.9 : f32, beta = 0.9 : f32, mode = "adam", norm_coefficient = 0.0 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adagrad, opset 1): attribute 'epsilon' must be a float, got "small"}}
  %0:2 = onnx.node "Adagrad"(%r, %t, %x, %x, %x) {epsilon = "small"} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<1xf32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adagrad, opset 1): R (the learning rate) must be a scalar f32 or f64 tensor, got 'tensor<1xf32>'}}
  %0:2 = onnx.node "Adagrad"(%r, %t, %x, %x, %x) {} domain "ai.onnx.preview.training" opset 1 : (tensor<1xf32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<f32> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adagrad, opset 1): T (the update count) must be a scalar i64 tensor, got 'tensor<f32>'}}
  %0:2 = onnx.node "Adagrad"(%r, %t, %x, %x, %x) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<f32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}, %i: tensor<2xi64> {onnx.name = "I"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adagrad, opset 1): H_1 has element type 'i64', expected a float type (f32, f16, bf16, f64)}}
  %0:2 = onnx.node "Adagrad"(%r, %t, %x, %x, %i) {} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xi64>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

// The graph op's own verifier, reported on the node.
func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}, %g: tensor<3xf32> {onnx.name = "G"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Momentum, opset 1): 'graph.momentum_update' op grad has type 'tensor<3xf32>' but param has 'tensor<2xf32>'}}
  %0:2 = onnx.node "Momentum"(%r, %t, %x, %g, %x) {alpha = 0.9 : f32, beta = 0.9 : f32, mode = "standard", norm_coefficient = 0.0 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<3xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adam, opset 1): 'graph.adam_update' op beta must be in [0, 1], got 1.5}}
  %0:3 = onnx.node "Adam"(%r, %t, %x, %x, %x, %x) {beta = 1.5 : f32} domain "ai.onnx.preview.training" opset 1 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%r: tensor<f32> {onnx.name = "R"}, %t: tensor<i64> {onnx.name = "T"}, %x: tensor<2xf32> {onnx.name = "X"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ai.onnx.preview.training::Adam, opset 2): opset 2 is not supported for this op (ampc supports opsets 1 to 1)}}
  %0:3 = onnx.node "Adam"(%r, %t, %x, %x, %x, %x) {} domain "ai.onnx.preview.training" opset 2 : (tensor<f32>, tensor<i64>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}
