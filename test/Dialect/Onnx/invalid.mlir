// RUN: %amp-opt %s -split-input-file -verify-diagnostics

func.func @empty_type(%x: tensor<4xf32>) {
  // expected-error @+1 {{'onnx.node' op has an empty op_type}}
  %0 = onnx.node ""(%x) {} opset 13 : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bad_opset(%x: tensor<4xf32>) {
  // expected-error @+1 {{'onnx.node' op has opset version 0, expected >= 1}}
  %0 = onnx.node "Relu"(%x) {} opset 0 : (tensor<4xf32>) -> tensor<4xf32>
  return
}

// -----

func.func @bad_output(%x: tensor<4xf32>) {
  // expected-error @+1 {{'onnx.node' op output of type 'i32' is neither a tensor nor !onnx.unknown}}
  %0 = onnx.node "Relu"(%x) {} opset 13 : (tensor<4xf32>) -> i32
  return
}
