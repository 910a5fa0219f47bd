// RUN: %amp-opt %s -split-input-file -verify-diagnostics --convert-onnx-to-graph

// CumSum's axis and TopK's K are one constant value each.
func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %axis = onnx.node "Constant"() {value = dense<[0, 1]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // expected-error @+1 {{node (CumSum, opset 14): axis has 2 values; CumSum takes one}}
  %0 = onnx.node "CumSum"(%x, %axis) {} opset 14 : (tensor<3x4xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %k = onnx.node "Constant"() {value = dense<[1, 2]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // expected-error @+1 {{node (TopK, opset 13): K has 2 values; TopK takes one}}
  %0:2 = onnx.node "TopK"(%x, %k) {} opset 13 : (tensor<3x4xf32>, tensor<2xi64>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}
