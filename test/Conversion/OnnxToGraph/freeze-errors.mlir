// RUN: %amp-opt %s --convert-onnx-to-graph="freeze=nope" -verify-diagnostics

// expected-error @+1 {{freeze names 'nope', which is not an initializer of the model (initializers: 'w')}}
func.func @forward(%x: tensor<2xf32> {onnx.name = "x"}, %w: tensor<2xf32> {onnx.name = "w", onnx.initializer = dense<1.0> : tensor<2xf32>}) -> tensor<2xf32> {
  return %x : tensor<2xf32>
}
