// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// ArgMax, CumSum (axis from a constant input, negative here) and TopK (K
// from a constant input, two results).
// CHECK-LABEL: func.func @forward
// CHECK: graph.arg_max %arg0 {axis = 0 : i64, keepdims = false, select_last_index = true} : (tensor<3x4xf32>) -> tensor<4xi64>
// CHECK: graph.cumsum %arg0 {axis = 1 : i64, exclusive = true} : tensor<3x4xf32>
// CHECK: %[[V:.*]], %[[I:.*]] = graph.top_k %arg0 {axis = 1 : i64, k = 2 : i64, largest = false} : (tensor<3x4xf32>) -> (tensor<3x2xf32>, tensor<3x2xi64>)
// CHECK: return %{{.*}}, %{{.*}}, %[[V]], %[[I]]
func.func @forward(%x: tensor<3x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown) {
  %0 = onnx.node "ArgMax"(%x) {axis = 0 : si64, keepdims = 0 : si64, select_last_index = 1 : si64} opset 13 : (tensor<3x4xf32>) -> !onnx.unknown
  %axis = onnx.node "Constant"() {value = dense<-1> : tensor<i32>} opset 13 : () -> tensor<i32>
  %1 = onnx.node "CumSum"(%x, %axis) {exclusive = 1 : si64} opset 14 : (tensor<3x4xf32>, tensor<i32>) -> !onnx.unknown
  %k = onnx.node "Constant"() {value = dense<2> : tensor<1xi64>} opset 13 : () -> tensor<1xi64>
  %2:2 = onnx.node "TopK"(%x, %k) {largest = 0 : si64} opset 13 : (tensor<3x4xf32>, tensor<1xi64>) -> (!onnx.unknown, !onnx.unknown)
  return %0, %1, %2#0, %2#1 : !onnx.unknown, !onnx.unknown, !onnx.unknown, !onnx.unknown
}

// -----

// MaxPool's Indices: windows gathered (index 16 is the -inf slot of the
// padding), the tap by arg_max, then a constant table maps (position, tap)
// to the flat index in a plane (a padding tap to the window's first inside
// one), plus each channel's plane.
// CHECK-LABEL: func.func @forward
// CHECK: graph.max_pool2d %arg0
// CHECK: %[[CAT:.*]] = graph.concat %{{.*}}, %{{.*}} {axis = 2 : i64} : (tensor<1x2x16xf32>, tensor<1x2x1xf32>) -> tensor<1x2x17xf32>
// CHECK: %[[G:.*]] = graph.gather %[[CAT]], %{{.*}} {axis = 2 : i64} : (tensor<1x2x17xf32>, tensor<36xi64>) -> tensor<1x2x36xf32>
// CHECK: %[[K:.*]] = graph.arg_max %{{.*}} {axis = 4 : i64, keepdims = false} : (tensor<1x2x3x3x4xf32>) -> tensor<1x2x3x3xi64>
// CHECK: %[[ROWS:.*]] = graph.constant dense<{{\[}}[{{\[}}[0, 4, 8], [12, 16, 20], [24, 28, 32]]]]> : tensor<1x1x3x3xi64>
// CHECK: %[[ROW:.*]] = graph.add %[[K]], %[[ROWS]]
// CHECK: %[[T:.*]] = graph.constant dense<[0, 0, 0, 0, 1, 1, 1, 2, 3, 3, 3, 3, 4, 4, 4, 8, 5, 6, 9, 10, 7, 7, 11, 7, 12, 12, 12, 12, 13, 14, 13, 13, 15, 15, 15, 15]> : tensor<36xi64>
// CHECK: %[[IN:.*]] = graph.gather %[[T]], %[[ROW]] {axis = 0 : i64} : (tensor<36xi64>, tensor<1x2x3x3xi64>) -> tensor<1x2x3x3xi64>
// CHECK: graph.constant dense<{{\[}}[{{\[}}[0]], {{\[}}[16]]]]> : tensor<1x2x1x1xi64>
func.func @forward(%x: tensor<1x2x4x4xf32> {onnx.name = "x"}) -> (!onnx.unknown, !onnx.unknown) {
  %0:2 = onnx.node "MaxPool"(%x) {kernel_shape = array<i64: 2, 2>, strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} opset 12 : (tensor<1x2x4x4xf32>) -> (!onnx.unknown, !onnx.unknown)
  return %0#0, %0#1 : !onnx.unknown, !onnx.unknown
}
