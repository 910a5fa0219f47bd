// RUN: %amp-opt %s --convert-onnx-to-graph -verify-diagnostics

// Every op type without a conversion is reported in one run, at its first
// node, with how many nodes use it; an op at an opset ampc lacks counts
// apart from the same op at a supported one. Nothing is converted.
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %y: tensor<4xf32> {onnx.name = "y"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Sinh, opset 13): no conversion for ONNX op 'Sinh' in domain 'ai.onnx': ampc does not support this op (2 nodes; this is the first)}}
  %0 = onnx.node "Sinh"(%x) {} opset 13 : (tensor<4xf32>) -> !onnx.unknown
  %1 = onnx.node "Relu"(%x) {} opset 13 : (tensor<4xf32>) -> tensor<4xf32>
  // expected-error @+1 {{node (Relu, opset 9): opset 9 is not supported for this op (ampc supports opsets 11 to 18)}}
  %2 = onnx.node "Relu"(%1) {} opset 9 : (tensor<4xf32>) -> !onnx.unknown
  %3 = onnx.node "Sinh"(%1) {} opset 13 : (tensor<4xf32>) -> !onnx.unknown
  // expected-error @+1 {{node (com.acme::Swish, opset 1): no conversion for ONNX op 'Swish' in domain 'com.acme': ampc does not support this op}}
  %4 = onnx.node "Swish"(%x) {} domain "com.acme" opset 1 : (tensor<4xf32>) -> !onnx.unknown
  return %4 : !onnx.unknown
}
