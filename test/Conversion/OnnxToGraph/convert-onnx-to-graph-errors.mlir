// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (NonMaxSuppression, opset 13): no conversion for ONNX op 'NonMaxSuppression' in domain 'ai.onnx': ampc does not support this op}}
  %0 = onnx.node "NonMaxSuppression"(%x) {} opset 13 : (tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (com.acme::Swish, opset 1): no conversion for ONNX op 'Swish' in domain 'com.acme': ampc does not support this op}}
  %0 = onnx.node "Swish"(%x) {} domain "com.acme" opset 1 : (tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Relu, opset 9): opset 9 is not supported for this op (ampc supports opsets 11 to 18)}}
  %0 = onnx.node "Relu"(%x) {} opset 9 : (tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// expected-error @+1 {{argument 'x' has type 'tensor<?x4xf32>'; ampc compiles static shapes (import with --shape NAME=d0,d1,...)}}
func.func @forward(%x: tensor<?x4xf32> {onnx.name = "x"}) -> tensor<?x4xf32> {
  return %x : tensor<?x4xf32>
}

// -----

func.func @forward(%a: tensor<2x3xf32> {onnx.name = "a"}, %b: tensor<4x5xf32> {onnx.name = "b"}) -> !onnx.unknown {
  // expected-error @+1 {{node (MatMul, opset 13): 'graph.matmul' op contracting dimensions differ: [2, 3] has 3, [4, 5] has 4}}
  %0 = onnx.node "MatMul"(%a, %b) {} opset 13 : (tensor<2x3xf32>, tensor<4x5xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%a: tensor<2x3xf32> {onnx.name = "a"}, %b: tensor<2x3xf16> {onnx.name = "b"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Add, opset 13): 'graph.add' op rhs has element type f16 but lhs has f32}}
  %0 = onnx.node "Add"(%a, %b) {} opset 13 : (tensor<2x3xf32>, tensor<2x3xf16>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}, %s: tensor<2xi64> {onnx.name = "s"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Reshape, opset 13): input #1 (shape) must be a compile-time constant (ampc compiles static shapes), but it is graph input 's', known only when the model runs; bind it with --bind (amp-run --mode infer binds an integer --input itself)}}
  %0 = onnx.node "Reshape"(%x, %s) {} opset 13 : (tensor<2x3xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %s = onnx.node "Constant"() {value = dense<[4, 2]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Reshape, opset 13): cannot reshape 'tensor<2x3xf32>' (6 elements) to [4, 2] (8 elements)}}
  %0 = onnx.node "Reshape"(%x, %s) {} opset 13 : (tensor<2x3xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<3xi64> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Relu, opset 13): input X has element type 'i64', expected a float type (f32, f16, bf16, f64)}}
  %0 = onnx.node "Relu"(%x) {} opset 13 : (tensor<3xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Cast, opset 13): cast to ONNX dtype 2 is not supported (supported: FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, BOOL)}}
  %0 = onnx.node "Cast"(%x) {to = 2 : i64} opset 13 : (tensor<3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4x4x4xf32> {onnx.name = "x"}, %w: tensor<1x1x2x2x2x2xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): input 'tensor<1x1x4x4x4x4xf32>' must be 3-D, 4-D or 5-D ([N, C] and 1 to 3 spatial dimensions)}}
  %0 = onnx.node "Conv"(%x, %w) {} opset 13 : (tensor<1x1x4x4x4x4xf32>, tensor<1x1x2x2x2x2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  // expected-error @+1 {{node (MaxPool, opset 12): the Indices output of a 3-D MaxPool is not supported}}
  %0:2 = onnx.node "MaxPool"(%x) {kernel_shape = array<i64: 2, 2, 2>} opset 12 : (tensor<1x1x4x4x4xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> tensor<3x2xf32> {
  // expected-error @+1 {{node (Relu, opset 13): output #0 has type 'tensor<2x3xf32>' but the model declares 'tensor<3x2xf32>'}}
  %0 = onnx.node "Relu"(%x) {} opset 13 : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @forward(%x: tensor<4x10xf32> {onnx.name = "x"}, %l: tensor<4xi64> {onnx.name = "l"}) -> !onnx.unknown {
  // expected-error @+1 {{node (SoftmaxCrossEntropyLoss, opset 13): reduction must be none, sum or mean, got "avg"}}
  %0 = onnx.node "SoftmaxCrossEntropyLoss"(%x, %l) {reduction = "avg"} opset 13 : (tensor<4x10xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// expected-error @+1 {{no @forward function to convert (is this an imported ONNX model?)}}
module {
  func.func @main() {
    return
  }
}

// -----

// A Dropout ratio, a Clip bound or a training_mode must be a constant
// scalar; the error says what it is instead.
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %r: tensor<f32> {onnx.name = "r", onnx.initializer = dense<5.000000e-01> : tensor<f32>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Dropout, opset 13): ratio (input #1) must be a compile-time constant scalar, but it is initializer 'r', which ampc trains as a parameter; give it with a Constant node}}
  %0 = onnx.node "Dropout"(%x, %r) {} opset 13 : (tensor<4xf32>, tensor<f32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %lo: tensor<f32> {onnx.name = "lo"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Clip, opset 13): min (input #1) must be a compile-time constant scalar, but it is graph input 'lo', known only when the model runs; bind it with --bind (amp-run --mode infer binds an integer --input itself)}}
  %0 = onnx.node "Clip"(%x, %lo) {} opset 13 : (tensor<4xf32>, tensor<f32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %lo = onnx.node "Constant"() {value = dense<0.0> : tensor<f32>} opset 13 : () -> tensor<f32>
  %hi = onnx.node "Constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} opset 13 : () -> tensor<2xf32>
  // expected-error @+1 {{node (Clip, opset 13): max (input #2) must be a compile-time constant scalar, but it is a constant of type 'tensor<2xf32>'}}
  %0 = onnx.node "Clip"(%x, %lo, %hi) {} opset 13 : (tensor<4xf32>, tensor<f32>, tensor<2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %s: tensor<f32> {onnx.name = "s"}) -> !onnx.unknown {
  %r = onnx.node "Neg"(%s) {} opset 13 : (tensor<f32>) -> tensor<f32>
  // expected-error @+1 {{node (Dropout, opset 13): ratio (input #1) must be a compile-time constant scalar, but the model computes it from graph input 's', known only when the model runs; bind it with --bind (amp-run --mode infer binds an integer --input itself)}}
  %0 = onnx.node "Dropout"(%x, %r) {} opset 13 : (tensor<4xf32>, tensor<f32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x2x3x4x4xf32> {onnx.name = "x"}, %w: tensor<2x2x5x1x1xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): the window of kernel_shape 5 dilated by 1 does not fit spatial dimension 0 of 'tensor<1x2x3x4x4xf32>' with its pads}}
  %0 = onnx.node "Conv"(%x, %w) {} opset 13 : (tensor<1x2x3x4x4xf32>, tensor<2x2x5x1x1xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x2x3x4x4xf32> {onnx.name = "x"}, %w: tensor<2x2x1x1x1xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): pads [0, 0, -1, 0, 0, 0] must be between 0 and 2^40}}
  %0 = onnx.node "Conv"(%x, %w) {pads = array<i64: 0, 0, -1, 0, 0, 0>} opset 13 : (tensor<1x2x3x4x4xf32>, tensor<2x2x1x1x1xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4x4xf32> {onnx.name = "x"}, %w: tensor<1x1x3x1x1xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): kernel_shape, strides and dilations must be >= 1 (spatial dimension 0: 3, 1, 0)}}
  %0 = onnx.node "Conv"(%x, %w) {dilations = array<i64: 0, 1, 1>} opset 13 : (tensor<1x1x4x4x4xf32>, tensor<1x1x3x1x1xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
