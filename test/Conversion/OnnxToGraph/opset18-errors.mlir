// RUN: %amp-opt %s -split-input-file -verify-diagnostics --convert-onnx-to-graph

func.func @forward(%x: tensor<7x2xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Split, opset 18): needs the split sizes (input #1) or the attribute num_outputs}}
  %0:2 = onnx.node "Split"(%x) {} opset 18 : (tensor<7x2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<7x2xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Split, opset 18): num_outputs is 3 but the node has 2 outputs}}
  %0:2 = onnx.node "Split"(%x) {num_outputs = 3 : si64} opset 18 : (tensor<7x2xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<5x2xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (Split, opset 18): dimension 0 of 'tensor<5x2xf32>' does not split into 4 parts of 2 and a smaller last one}}
  %0:4 = onnx.node "Split"(%x) {num_outputs = 4 : si64} opset 18 : (tensor<5x2xf32>) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<4x2xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %s = onnx.node "Constant"() {value = dense<[2, 2]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Split, opset 18): gives both the split sizes (input #1) and num_outputs; ONNX allows one}}
  %0:2 = onnx.node "Split"(%x, %s) {num_outputs = 2 : si64} opset 18 : (tensor<4x2xf32>, tensor<2xi64>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x5xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %pads = onnx.node "Constant"() {value = dense<[1, 2, 0, 0]> : tensor<4xi64>} opset 18 : () -> tensor<4xi64>
  %axes = onnx.node "Constant"() {value = dense<[1]> : tensor<1xi64>} opset 18 : () -> tensor<1xi64>
  %none = onnx.none
  // expected-error @+1 {{node (Pad, opset 18): pads has 4 entries; axes names 1 axes, which need 2 (a begin and an end per axis)}}
  %0 = onnx.node "Pad"(%x, %pads, %none, %axes) {} opset 18 : (tensor<2x5xf32>, tensor<4xi64>, none, tensor<1xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x5xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %pads = onnx.node "Constant"() {value = dense<[1, 2, 0, 0]> : tensor<4xi64>} opset 18 : () -> tensor<4xi64>
  %axes = onnx.node "Constant"() {value = dense<[1, -1]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  %none = onnx.none
  // expected-error @+1 {{node (Pad, opset 18): axes contain a repeated axis}}
  %0 = onnx.node "Pad"(%x, %pads, %none, %axes) {} opset 18 : (tensor<2x5xf32>, tensor<4xi64>, none, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %scales = onnx.node "Constant"() {value = dense<[0.5, 0.5]> : tensor<2xf32>} opset 18 : () -> tensor<2xf32>
  // expected-error @+1 {{node (Resize, opset 18): antialias linear resize is not supported when it shrinks an axis (axis 2 of 'tensor<1x1x4x4xf32>' to 2)}}
  %0 = onnx.node "Resize"(%x, %none, %scales) {axes = array<i64: 2, 3>, antialias = 1 : si64, mode = "linear"} opset 18 : (tensor<1x1x4x4xf32>, none, tensor<2xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %scales = onnx.node "Constant"() {value = dense<[2.0, 2.0, 2.0, 2.0]> : tensor<4xf32>} opset 18 : () -> tensor<4xf32>
  // expected-error @+1 {{node (Resize, opset 18): scales has 4 entries but axes names 2}}
  %0 = onnx.node "Resize"(%x, %none, %scales) {axes = array<i64: 2, 3>} opset 18 : (tensor<1x1x4x4xf32>, none, tensor<4xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x4x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %sizes = onnx.node "Constant"() {value = dense<[2, 2]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Resize, opset 18): keep_aspect_ratio_policy 'fit' is not stretch, not_larger or not_smaller}}
  %0 = onnx.node "Resize"(%x, %none, %none, %sizes) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "fit"} opset 18 : (tensor<1x1x4x4xf32>, none, none, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}) -> !onnx.unknown {
  // expected-error @+1 {{node (ReduceMean, opset 19): opset 19 is not supported for this op (ampc supports opsets 11 to 18)}}
  %0 = onnx.node "ReduceMean"(%x) {} opset 19 : (tensor<2x3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x0x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %sizes = onnx.node "Constant"() {value = dense<[2, 2]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Resize, opset 18): axis 2 of 'tensor<1x1x0x4xf32>' is empty and cannot be resized to 2}}
  %0 = onnx.node "Resize"(%x, %none, %none, %sizes) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_smaller"} opset 18 : (tensor<1x1x0x4xf32>, none, none, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}

// -----

func.func @forward(%x: tensor<1x1x1x4096xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %none = onnx.none
  %sizes = onnx.node "Constant"() {value = dense<[4611686018427387904, 1]> : tensor<2xi64>} opset 18 : () -> tensor<2xi64>
  // expected-error @+1 {{node (Resize, opset 18): keep_aspect_ratio_policy not_smaller makes axis 2 of 'tensor<1x1x1x4096xf32>' 4.611686e+18 long (at most 16777216)}}
  %0 = onnx.node "Resize"(%x, %none, %none, %sizes) {axes = array<i64: 2, 3>, keep_aspect_ratio_policy = "not_smaller"} opset 18 : (tensor<1x1x1x4096xf32>, none, none, tensor<2xi64>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
