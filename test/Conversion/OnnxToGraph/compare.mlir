// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Comparisons give i1 with numpy broadcasting; the logical ops take and give
// i1. Sin, Cos and Softplus are float unary ops.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}, %y: tensor<3xf32> {onnx.name = "y"}) -> !onnx.unknown {
  // CHECK: %[[LT:.*]] = graph.less %arg0, %arg1 : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  %0 = onnx.node "Less"(%x, %y) {} opset 13 : (tensor<2x3xf32>, tensor<3xf32>) -> !onnx.unknown
  // CHECK: %[[GE:.*]] = graph.greater_equal %arg1, %arg0 : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
  %1 = onnx.node "GreaterOrEqual"(%y, %x) {} opset 13 : (tensor<3xf32>, tensor<2x3xf32>) -> !onnx.unknown
  // CHECK: %[[EQ:.*]] = graph.equal %[[LT]], %[[GE]] : (tensor<2x3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  %2 = onnx.node "Equal"(%0, %1) {} opset 13 : (!onnx.unknown, !onnx.unknown) -> !onnx.unknown
  // CHECK: %[[NOT:.*]] = graph.logical_not %[[EQ]] : tensor<2x3xi1>
  %3 = onnx.node "Not"(%2) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: %[[GT:.*]] = graph.greater %arg0, %arg1
  %4 = onnx.node "Greater"(%x, %y) {} opset 13 : (tensor<2x3xf32>, tensor<3xf32>) -> !onnx.unknown
  // CHECK: %[[LE:.*]] = graph.less_equal %arg0, %arg1
  %5 = onnx.node "LessOrEqual"(%x, %y) {} opset 13 : (tensor<2x3xf32>, tensor<3xf32>) -> !onnx.unknown
  // CHECK: %[[AND:.*]] = graph.logical_and %[[NOT]], %[[GT]]
  %6 = onnx.node "And"(%3, %4) {} opset 13 : (!onnx.unknown, !onnx.unknown) -> !onnx.unknown
  // CHECK: %[[OR:.*]] = graph.logical_or %[[AND]], %[[LE]]
  %7 = onnx.node "Or"(%6, %5) {} opset 13 : (!onnx.unknown, !onnx.unknown) -> !onnx.unknown
  // CHECK: %[[XOR:.*]] = graph.logical_xor %[[OR]], %[[LT]]
  %8 = onnx.node "Xor"(%7, %0) {} opset 13 : (!onnx.unknown, !onnx.unknown) -> !onnx.unknown
  // CHECK: %[[SIN:.*]] = graph.sin %arg0 : tensor<2x3xf32>
  %9 = onnx.node "Sin"(%x) {} opset 13 : (tensor<2x3xf32>) -> !onnx.unknown
  // CHECK: %[[COS:.*]] = graph.cos %[[SIN]] : tensor<2x3xf32>
  %10 = onnx.node "Cos"(%9) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: %[[SP:.*]] = graph.softplus %[[COS]] : tensor<2x3xf32>
  %11 = onnx.node "Softplus"(%10) {} opset 13 : (!onnx.unknown) -> !onnx.unknown
  // CHECK: %[[W:.*]] = graph.where %[[XOR]], %[[SP]], %arg1
  %12 = onnx.node "Where"(%8, %11, %y) {} opset 13 : (!onnx.unknown, !onnx.unknown, tensor<3xf32>) -> !onnx.unknown
  // CHECK: return %[[W]] : tensor<2x3xf32>
  return %12 : !onnx.unknown
}

// -----

// Shape logic folds: Expand's "shape where shape == -1 becomes 1", as a
// ViT export writes it, leaves one constant and no comparison or where.
// CHECK-LABEL: func.func @forward
// CHECK-NOT: graph.equal
// CHECK-NOT: graph.where
// CHECK: graph.broadcast_to %arg0 : tensor<1x4xf32> to tensor<3x4xf32>
func.func @forward(%x: tensor<1x4xf32> {onnx.name = "x"}) -> !onnx.unknown {
  %shape = onnx.node "Constant"() {value = dense<[3, -1]> : tensor<2xi64>} opset 13 : () -> tensor<2xi64>
  %m1 = onnx.node "Constant"() {value = dense<-1> : tensor<i64>} opset 13 : () -> tensor<i64>
  %one = onnx.node "Constant"() {value = dense<1> : tensor<i64>} opset 13 : () -> tensor<i64>
  %eq = onnx.node "Equal"(%shape, %m1) {} opset 13 : (tensor<2xi64>, tensor<i64>) -> !onnx.unknown
  %fixed = onnx.node "Where"(%eq, %one, %shape) {} opset 13 : (!onnx.unknown, tensor<i64>, tensor<2xi64>) -> !onnx.unknown
  %0 = onnx.node "Expand"(%x, %fixed) {} opset 13 : (tensor<1x4xf32>, !onnx.unknown) -> !onnx.unknown
  return %0 : !onnx.unknown
}
