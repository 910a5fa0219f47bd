// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%x: tensor<3x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): equation 'ii->ii' repeats 'i' in its output term}}
  %0 = onnx.node "Einsum"(%x) {equation = "ii->ii"} opset 13 : (tensor<3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): letter 'i' of equation 'ii->i' has sizes 3 and 4}}
  %0 = onnx.node "Einsum"(%x) {equation = "ii->i"} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<2x3xf32> {onnx.name = "a"}, %b: tensor<3x4xf32> {onnx.name = "b"}, %c: tensor<4x5xf64> {onnx.name = "c"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): the inputs have different element types}}
  %0 = onnx.node "Einsum"(%a, %b, %c) {equation = "ij,jk,kl->il"} opset 13 : (tensor<2x3xf32>, tensor<3x4xf32>, tensor<4x5xf64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<3x4xf32> {onnx.name = "a"}, %b: tensor<5x6xf32> {onnx.name = "b"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): letter 'j' of equation 'ij,jk->ik' has sizes 4 and 5}}
  %0 = onnx.node "Einsum"(%a, %b) {equation = "ij,jk->ik"} opset 13 : (tensor<3x4xf32>, tensor<5x6xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<3x4xf32> {onnx.name = "a"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): term 'ijk' of equation 'ijk->i' does not match its operand's rank 2}}
  %0 = onnx.node "Einsum"(%a) {equation = "ijk->i"} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<3x4xf32> {onnx.name = "a"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Einsum, opset 13): output letter 'z' of equation 'ij->z' is in no input}}
  %0 = onnx.node "Einsum"(%a) {equation = "ij->z"} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
