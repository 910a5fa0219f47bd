// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%x: tensor<2x2x5xf32> {onnx.name = "x"}, %w: tensor<1x12x5xf32> {onnx.name = "w"}, %r: tensor<1x12x3xf32> {onnx.name = "r"}) -> !onnx.unknown {
  // expected-error @+1 {{node (LSTM, opset 13): attribute 'activations' is not supported: ampc runs the default activations only (sigmoid, tanh, tanh)}}
  %y = onnx.node "LSTM"(%x, %w, %r) {hidden_size = 3 : si64, activations = ["Relu", "Tanh", "Tanh"]} opset 13 : (tensor<2x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>) -> !onnx.unknown
  return %y : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x2x5xf32> {onnx.name = "x"}, %w: tensor<1x12x5xf32> {onnx.name = "w"}, %r: tensor<1x12x3xf32> {onnx.name = "r"}) -> !onnx.unknown {
  // expected-error @+1 {{node (GRU, opset 13): W 'tensor<1x12x5xf32>' and R 'tensor<1x12x3xf32>' must be [1, 9, 5] and [1, 9, 3] for hidden_size 3, 1 direction(s) and input size 5}}
  %y = onnx.node "GRU"(%x, %w, %r) {hidden_size = 3 : si64} opset 13 : (tensor<2x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>) -> !onnx.unknown
  return %y : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x2x5xf32> {onnx.name = "x"}, %w: tensor<1x12x5xf32> {onnx.name = "w"}, %r: tensor<1x12x3xf32> {onnx.name = "r"}) -> !onnx.unknown {
  %none = onnx.none
  %lens = onnx.node "Constant"() {value = dense<[2, 1]> : tensor<2xi32>} opset 13 : () -> tensor<2xi32>
  // expected-error @+1 {{node (LSTM, opset 13): sequence_lens has an entry 1 shorter than the sequence (2): ampc runs the whole static sequence}}
  %y = onnx.node "LSTM"(%x, %w, %r, %none, %lens) {hidden_size = 3 : si64} opset 13 : (tensor<2x2x5xf32>, tensor<1x12x5xf32>, tensor<1x12x3xf32>, none, tensor<2xi32>) -> !onnx.unknown
  return %y : !onnx.unknown
}
