// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph -verify-diagnostics

func.func @forward(%n: tensor<i64> {onnx.name = "n"}) -> !onnx.unknown {
  %s = onnx.node "Constant"() {value = dense<0> : tensor<i64>} opset 13 : () -> tensor<i64>
  %d = onnx.node "Constant"() {value = dense<1> : tensor<i64>} opset 13 : () -> tensor<i64>
  // expected-error @+1 {{node (Range, opset 13): input #1 (limit) must be a compile-time constant (ampc compiles static shapes), but it is graph input 'n', known only when the model runs; bind it with --bind (amp-run --mode infer binds an integer --input itself)}}
  %0 = onnx.node "Range"(%s, %n, %d) {} opset 13 : (tensor<i64>, tensor<i64>, tensor<i64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward() -> !onnx.unknown {
  %s = onnx.node "Constant"() {value = dense<0> : tensor<i64>} opset 13 : () -> tensor<i64>
  %d = onnx.node "Constant"() {value = dense<0> : tensor<i64>} opset 13 : () -> tensor<i64>
  // expected-error @+1 {{node (Range, opset 13): range(0, 0, 0) must have a finite length of at most 2^24 elements}}
  %0 = onnx.node "Range"(%s, %s, %d) {} opset 13 : (tensor<i64>, tensor<i64>, tensor<i64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward() -> !onnx.unknown {
  %shape = onnx.node "Constant"() {value = dense<[2, -3]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // expected-error @+1 {{node (ConstantOfShape, opset 13): shape [2, ?] has a negative entry}}
  %0 = onnx.node "ConstantOfShape"(%shape) {} opset 13 : (tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, 3, 0, 0]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Pad, opset 13): reflect padding of 3 and 0 on axis 1 of 'tensor<2x3xf32>' needs the axis to be longer than each pad}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "reflect"} opset 13 : (tensor<2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, 1]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Pad, opset 13): pads has 2 entries; the input 'tensor<2x3xf32>' needs 4 (a begin and an end per axis)}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "constant"} opset 13 : (tensor<2x3xf32>, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, 0, -3, 0]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Pad, opset 13): pads 0 and -3 crop more than axis 0 of 'tensor<2x3xf32>' holds}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "constant"} opset 13 : (tensor<2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %r = onnx.node "Constant"() {value = dense<[2]> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  // expected-error @+1 {{node (Tile, opset 13): repeats has 1 entries but the input 'tensor<2x3xf32>' has rank 2}}
  %0 = onnx.node "Tile"(%x, %r) {} opset 13 : (tensor<2x3xf32>, tensor<1xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Trilu, opset 14): input must have rank 2 or more, got 'tensor<3xf32>'}}
  %0 = onnx.node "Trilu"(%x) {} opset 14 : (tensor<3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, 1, 0, 1]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Pad, opset 13): mode 'wrap' is not supported (constant, reflect, edge)}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "wrap"} opset 13 : (tensor<2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, -9223372036854775808, 0, 0]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Pad, opset 13): pads -9223372036854775808 and 0 crop more than axis 1 of 'tensor<2x3xf32>' holds}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "constant"} opset 13 : (tensor<2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %p = onnx.node "Constant"() {value = dense<[0, 1000000000000, 0, 0]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Pad, opset 13): pads 1000000000000 and 0 on axis 1 are larger than ampc pads at compile time (16777216)}}
  %0 = onnx.node "Pad"(%x, %p) {mode = "edge"} opset 13 : (tensor<2x3xf32>, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x0x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %sizes = onnx.node "Constant"() {value = dense<[1, 1, 2, 4]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Resize, opset 13): axis 2 of 'tensor<1x1x0x4xf32>' is empty and cannot be resized to 2}}
  %0 = onnx.node "Resize"(%x, %none, %none, %sizes) {mode = "linear"} opset 13 : (tensor<1x1x0x4xf32>, none, none, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x2x2xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %sizes = onnx.node "Constant"() {value = dense<[1, 1, 2, 1000000000000]> : tensor<4xi64>} opset 13 : () -> tensor<4xi64>
  // expected-error @+1 {{node (Resize, opset 13): resizing axis 3 from 2 to 1000000000000 needs more than 16777216 interpolation entries at compile time}}
  %0 = onnx.node "Resize"(%x, %none, %none, %sizes) {mode = "linear"} opset 13 : (tensor<1x1x2x2xf32>, none, none, tensor<4xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x3x3xf32> {onnx.name = "x"}, %w: tensor<1x1x3x3xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ConvTranspose, opset 13): output_padding 1 of spatial dimension 0 must be in [0, stride 1)}}
  %0 = onnx.node "ConvTranspose"(%x, %w) {dilations = array<i64: 2, 2>, output_padding = array<i64: 1, 1>} opset 13 : (tensor<1x1x3x3xf32>, tensor<1x1x3x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x5x5xf32> {onnx.name = "x"}, %w: tensor<1x1x1x1xf32> {onnx.name = "w"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ConvTranspose, opset 13): 'graph.conv_transpose2d' op the output size overflows int64}}
  %0 = onnx.node "ConvTranspose"(%x, %w) {strides = array<i64: 4611686018427387904, 1>} opset 13 : (tensor<1x1x5x5xf32>, tensor<1x1x1x1xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
