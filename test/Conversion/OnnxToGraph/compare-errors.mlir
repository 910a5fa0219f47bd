// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %i: tensor<4xi64> {onnx.name = "i"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Less, opset 13): 'graph.less' op rhs has element type i64 but lhs has f32}}
  %0 = onnx.node "Less"(%x, %i) {} opset 13 : (tensor<4xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Not, opset 13): input #0 has type 'tensor<4xf32>'; the op takes bool tensors}}
  %0 = onnx.node "Not"(%x) {} opset 13 : (tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%b: tensor<4xi1> {onnx.name = "b"}, %i: tensor<4xi64> {onnx.name = "i"}) -> !onnx.unknown {
  // expected-error @+1 {{node (And, opset 13): input #1 has type 'tensor<4xi64>'; the op takes bool tensors}}
  %0 = onnx.node "And"(%b, %i) {} opset 13 : (tensor<4xi1>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<4xi1> {onnx.name = "a"}, %b: tensor<4xi1> {onnx.name = "b"}) -> !onnx.unknown {
  // expected-error-re @+1 {{node (Greater, opset 13): 'graph.greater' op operand #0 must be statically shaped tensor of {{.*}}, but got 'tensor<4xi1>'}}
  %0 = onnx.node "Greater"(%a, %b) {} opset 13 : (tensor<4xi1>, tensor<4xi1>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
