// RUN: %amp-opt %s --convert-onnx-to-graph="freeze=b" | FileCheck %s

// Float initializers become parameters (trainable unless frozen); integer
// initializers become constants; graph outputs keep their names.
// CHECK-LABEL: func.func @forward
// CHECK-SAME: (%arg0: tensor<2x3xf32> {graph.name = "x"},
// CHECK-SAME: %arg1: tensor<4x3xf32> {graph.init = dense<1.000000e+00> : tensor<4x3xf32>, graph.name = "w", graph.trainable = true},
// CHECK-SAME: %arg2: tensor<4xf32> {graph.init = dense<0.000000e+00> : tensor<4xf32>, graph.name = "b", graph.trainable = false})
// CHECK-SAME: -> (tensor<2x4xf32> {graph.name = "y"})
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"},
                   %w: tensor<4x3xf32> {onnx.name = "w", onnx.initializer = dense<1.0> : tensor<4x3xf32>},
                   %shape: tensor<2xi64> {onnx.name = "shape", onnx.initializer = dense<[2, 4]> : tensor<2xi64>},
                   %b: tensor<4xf32> {onnx.name = "b", onnx.initializer = dense<0.0> : tensor<4xf32>})
    -> (!onnx.unknown {onnx.name = "y"}) {
  // CHECK: %[[G:.*]] = graph.gemm %arg0, %arg1, %arg2 {trans_b = true}
  %0 = onnx.node "Gemm"(%x, %w, %b) {transB = 1 : i64} opset 13 : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> !onnx.unknown
  %1 = onnx.node "Reshape"(%0, %shape) {} opset 13 : (!onnx.unknown, tensor<2xi64>) -> !onnx.unknown
  // CHECK: return %[[G]] : tensor<2x4xf32>
  return %1 : !onnx.unknown
}
