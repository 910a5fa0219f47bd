// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics
//
// Shapes computed from a model's values and attributes whose element count
// or byte size overflows int64 are errors naming the node, never wrapped
// sizes.

// 2^62 + 1 times 4 wraps to 4: the element count of the input.
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %s: tensor<2xi64> {onnx.name = "s", onnx.initializer = dense<[4611686018427387905, 4]> : tensor<2xi64>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Reshape, opset 13): shape [4611686018427387905, 4] has more elements than int64 can count}}
  %0 = onnx.node "Reshape"(%x, %s) {} opset 13 : (tensor<4xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// A zero entry (allowzero) does not hide the product of the others.
func.func @forward(%x: tensor<0xf32> {onnx.name = "x"}, %s: tensor<3xi64> {onnx.name = "s", onnx.initializer = dense<[0, 1099511627776, 1099511627776]> : tensor<3xi64>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Reshape, opset 14): shape [0, 1099511627776, 1099511627776] has more elements than int64 can count}}
  %0 = onnx.node "Reshape"(%x, %s) {allowzero = 1 : i64} opset 14 : (tensor<0xf32>, tensor<3xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// 2^40 x 2^40 elements.
func.func @forward(%x: tensor<1xf32> {onnx.name = "x"}, %s: tensor<2xi64> {onnx.name = "s", onnx.initializer = dense<[1099511627776, 1099511627776]> : tensor<2xi64>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Expand, opset 13): result 'tensor<1099511627776x1099511627776xf32>' has 1099511627776 x 1099511627776 elements, more than int64 can count}}
  %0 = onnx.node "Expand"(%x, %s) {} opset 13 : (tensor<1xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// 2^31 x 2^31 elements fit int64; their 2^64 bytes do not.
func.func @forward(%x: tensor<1xf32> {onnx.name = "x"}, %s: tensor<2xi64> {onnx.name = "s", onnx.initializer = dense<[2147483648, 2147483648]> : tensor<2xi64>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Expand, opset 13): result 'tensor<2147483648x2147483648xf32>' has 2147483648 x 2147483648 elements of 4 bytes, more bytes than int64 can count}}
  %0 = onnx.node "Expand"(%x, %s) {} opset 13 : (tensor<1xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// Pads from the model that overflow the padded size.
func.func @forward(%x: tensor<1x1x8x8xf32> {onnx.name = "x"}, %w: tensor<1x1x3x3xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): 'graph.conv2d' op the input of size 8 padded by 9223372036854775807 and 9223372036854775807 in spatial dimension 0 is not a size int64 can count}}
  %0 = onnx.node "Conv"(%x, %w) {pads = array<i64: 9223372036854775807, 0, 9223372036854775807, 0>} opset 13 : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// SAME padding of a window dilated past int64.
func.func @forward(%x: tensor<1x1x8x8xf32> {onnx.name = "x"}, %w: tensor<1x1x3x3xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Conv, opset 13): the window of kernel_shape 3 dilated by 4611686018427387904 in spatial dimension 0 is not a size int64 can count}}
  %0 = onnx.node "Conv"(%x, %w) {auto_pad = "SAME_UPPER", dilations = array<i64: 4611686018427387904, 1>} opset 13 : (tensor<1x1x8x8xf32>, tensor<1x1x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// Two halves of 2^62 booleans concatenated: 2^63 does not fit.
func.func @forward(%a: tensor<4611686018427387904xi1> {onnx.name = "a"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Concat, opset 13): 'graph.concat' op the inputs' sizes along axis 0 add up to more than int64 can count}}
  %0 = onnx.node "Concat"(%a, %a) {axis = 0 : i64} opset 13 : (tensor<4611686018427387904xi1>, tensor<4611686018427387904xi1>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// An argument too large to count (amp-opt input; the importer refuses it
// first).
// expected-error @+1 {{argument 'x' of type 'tensor<1099511627776x1099511627776xf32>' has 1099511627776 x 1099511627776 elements, more than int64 can count}}
func.func @forward(%x: tensor<1099511627776x1099511627776xf32> {onnx.name = "x"}) -> tensor<1099511627776x1099511627776xf32> {
  return %x : tensor<1099511627776x1099511627776xf32>
}

// -----

// A constant expanded to 2^32 x 2^32 elements: 2^64 would wrap to 0 and the
// folder would build an attribute of that many elements; the type is
// refused before the op exists.
func.func @forward(%v: tensor<1xi64> {onnx.name = "v", onnx.initializer = dense<7> : tensor<1xi64>}, %s: tensor<2xi64> {onnx.name = "s", onnx.initializer = dense<[4294967296, 4294967296]> : tensor<2xi64>}) -> !onnx.unknown {
  // expected-error @+1 {{node (Expand, opset 13): result 'tensor<4294967296x4294967296xi64>' has 4294967296 x 4294967296 elements, more than int64 can count}}
  %0 = onnx.node "Expand"(%v, %s) {} opset 13 : (tensor<1xi64>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

// Split sizes whose sum wraps around to the dimension (2^64 + 4).
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %s: tensor<3xi64> {onnx.name = "s", onnx.initializer = dense<[9223372036854775807, 9223372036854775807, 6]> : tensor<3xi64>}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown) {
  // expected-error @+1 {{node (Split, opset 13): split sizes [9223372036854775807, 9223372036854775807, 6] must give 3 parts summing to 4}}
  %0:3 = onnx.node "Split"(%x, %s) {} opset 13 : (tensor<4xf32>, tensor<3xi64>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0, %0#1, %0#2 : !onnx.unknown, !onnx.unknown, !onnx.unknown
}
