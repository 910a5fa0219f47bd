// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph --mlir-print-debuginfo | FileCheck %s

// CHECK-LABEL: func.func @forward
// CHECK-SAME: %arg0: tensor<2x3xf32> {graph.name = "x"}
// CHECK-SAME: %arg1: tensor<3xf32> {graph.name = "y"}
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}, %y: tensor<3xf32> {onnx.name = "y"}) -> !onnx.unknown {
  // CHECK: %[[R:.*]] = graph.relu %arg0 : tensor<2x3xf32> loc(#[[LOC:.*]])
  %0 = onnx.node "Relu"(%x) {} opset 13 : (tensor<2x3xf32>) -> tensor<2x3xf32> loc("relu_node")
  // CHECK: graph.tanh
  %1 = onnx.node "Tanh"(%0) {} opset 13 : (tensor<2x3xf32>) -> !onnx.unknown
  // CHECK: graph.sigmoid
  %2 = onnx.node "Sigmoid"(%1) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.erf
  %3 = onnx.node "Erf"(%2) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.exp
  %4 = onnx.node "Exp"(%3) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.log
  %5 = onnx.node "Log"(%4) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.sqrt
  %6 = onnx.node "Sqrt"(%5) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.reciprocal
  %7 = onnx.node "Reciprocal"(%6) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.neg
  %8 = onnx.node "Neg"(%7) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.abs
  %9 = onnx.node "Abs"(%8) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: graph.leaky_relu %{{.*}} {alpha = 1.000000e-01 : f64}
  %10 = onnx.node "LeakyRelu"(%9) {alpha = 0.1 : f32} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: %[[ADD:.*]] = graph.add %{{.*}}, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %11 = onnx.node "Add"(%10, %y) {} opset 13 : (!onnx.unknown, tensor<3xf32>) -> !onnx.unknown
  // CHECK: graph.sub %arg1, %[[ADD]] : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %12 = onnx.node "Sub"(%y, %11) {} opset 13 : (tensor<3xf32>, !onnx.unknown) -> !onnx.unknown
  // CHECK: graph.mul
  %13 = onnx.node "Mul"(%12, %12) {} opset 13 : (!onnx.unknown, !onnx.unknown) -> !onnx.unknown
  // CHECK: %[[DIV:.*]] = graph.div
  %14 = onnx.node "Div"(%13, %y) {} opset 13 : (!onnx.unknown, tensor<3xf32>) -> !onnx.unknown
  // Identity forwards its input.
  %15 = onnx.node "Identity"(%14) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: return %[[DIV]] : tensor<2x3xf32>
  return %15 : !onnx.unknown
}
// CHECK: #[[LOC]] = loc("relu_node")

// -----

// Pow casts an integer exponent to the base's type.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4xf16> {onnx.name = "x"}, %e: tensor<i64> {onnx.name = "e"}) -> tensor<4xf16> {
  // CHECK: %[[E:.*]] = graph.cast %{{.*}} : tensor<i64> to tensor<f16>
  // CHECK: graph.pow %{{.*}}, %[[E]] : (tensor<4xf16>, tensor<f16>) -> tensor<4xf16>
  %0 = onnx.node "Pow"(%x, %e) {} opset 15 : (tensor<4xf16>, tensor<i64>) -> tensor<4xf16>
  return %0 : tensor<4xf16>
}

// -----

// Pow of an integer base computes in f64 and truncates back, as ONNX's
// reference does.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<3xi32> {onnx.name = "x"}, %e: tensor<3xf32> {onnx.name = "e"}) -> tensor<3xi32> {
  // CHECK-DAG: %[[X:.*]] = graph.cast %{{.*}} : tensor<3xi32> to tensor<3xf64>
  // CHECK-DAG: %[[E:.*]] = graph.cast %{{.*}} : tensor<3xf32> to tensor<3xf64>
  // CHECK: %[[P:.*]] = graph.pow %[[X]], %[[E]] : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  // CHECK: graph.cast %[[P]] : tensor<3xf64> to tensor<3xi32>
  %0 = onnx.node "Pow"(%x, %e) {} opset 15 : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Clip: bounds are inputs from opset 11 and fold into attributes.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}, %lo: tensor<f32> {onnx.name = "lo", onnx.initializer = dense<0.0> : tensor<f32>}) -> (tensor<4xf32>, tensor<4xf32>) {
  %none = onnx.none
  %max = onnx.node "Constant"() {value = dense<6.0> : tensor<f32>} opset 13 : () -> tensor<f32>
  // CHECK: graph.clip %{{.*}} {max = 6.000000e+00 : f64} : tensor<4xf32>
  %0 = onnx.node "Clip"(%x, %none, %max) {} opset 13 : (tensor<4xf32>, none, tensor<f32>) -> tensor<4xf32>
  // CHECK: graph.clip %{{.*}} : tensor<4xf32>
  %1 = onnx.node "Clip"(%x) {} opset 11 : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%c: tensor<4xi1> {onnx.name = "c"}, %x: tensor<2x4xf32> {onnx.name = "x"}, %y: tensor<f32> {onnx.name = "y"}) -> tensor<2x4xbf16> {
  // CHECK: graph.where %{{.*}}, %{{.*}}, %{{.*}} : (tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  %0 = onnx.node "Where"(%c, %x, %y) {} opset 16 : (tensor<4xi1>, tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  // CHECK: graph.cast %{{.*}} : tensor<2x4xf32> to tensor<2x4xbf16>
  %1 = onnx.node "Cast"(%0) {to = 16 : i64} opset 13 : (tensor<2x4xf32>) -> tensor<2x4xbf16>
  // A cast to the same type disappears.
  // CHECK-NOT: graph.cast
  %2 = onnx.node "Cast"(%1) {to = 16 : i64} opset 13 : (tensor<2x4xbf16>) -> tensor<2x4xbf16>
  return %2 : tensor<2x4xbf16>
}

// -----

// Dropout: identity in inference; a graph.dropout when training_mode is set.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<8xf32> {onnx.name = "x"}) -> (tensor<8xf32>, tensor<8xf32>, tensor<8xi1>) {
  %ratio = onnx.node "Constant"() {value = dense<0.25> : tensor<f32>} opset 13 : () -> tensor<f32>
  %train = onnx.node "Constant"() {value = dense<true> : tensor<i1>} opset 13 : () -> tensor<i1>
  %0 = onnx.node "Dropout"(%x, %ratio) {} opset 13 : (tensor<8xf32>, tensor<f32>) -> tensor<8xf32>
  // CHECK: %[[D:.*]], %[[M:.*]] = graph.dropout %{{.*}} {ratio = 2.500000e-01 : f64, seed = 3 : i64, training = true}
  %1:2 = onnx.node "Dropout"(%x, %ratio, %train) {seed = 3 : i64} opset 13 : (tensor<8xf32>, tensor<f32>, tensor<i1>) -> (tensor<8xf32>, tensor<8xi1>)
  // CHECK: return %arg0, %[[D]], %[[M]]
  return %0, %1#0, %1#1 : tensor<8xf32>, tensor<8xf32>, tensor<8xi1>
}

// -----

// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<8xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  // CHECK: graph.gelu %{{.*}} : tensor<8xf32>
  %0 = onnx.node "Gelu"(%x) {} domain "com.microsoft" opset 1 : (tensor<8xf32>) -> !onnx.unknown
  // CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : tensor<8xf32>
  %1 = onnx.node "Gelu"(%x) {approximate = "tanh"} opset 20 : (tensor<8xf32>) -> !onnx.unknown
  return %0, %1 : !onnx.unknown, !onnx.unknown
}

// -----

// HardSigmoid keeps its attributes; ONNX's defaults are the op's (alpha 0.2,
// beta 0.5), which the printer leaves out.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> (tensor<4xf32>, tensor<4xf32>) {
  // CHECK: graph.hard_sigmoid %arg0 {alpha = 0.16666666999999999 : f64, beta = 2.500000e-01 : f64} : tensor<4xf32>
  %0 = onnx.node "HardSigmoid"(%x) {alpha = 0.16666667 : f32, beta = 0.25 : f32} opset 17 : (tensor<4xf32>) -> tensor<4xf32>
  // CHECK: graph.hard_sigmoid %arg0 : tensor<4xf32>
  %1 = onnx.node "HardSigmoid"(%x) {} opset 17 : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// HardSwish is an opset-14 op.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<4xf32> {onnx.name = "x"}) -> tensor<4xf32> {
  // CHECK: graph.hard_swish %arg0 : tensor<4xf32>
  %0 = onnx.node "HardSwish"(%x) {} opset 14 : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
