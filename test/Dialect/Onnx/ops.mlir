// RUN: %amp-opt %s | %amp-opt | FileCheck %s

// CHECK-LABEL: func @forward
func.func @forward(%x: tensor<64x256xf32> {onnx.name = "x"}, %w: tensor<10x256xf32> {onnx.name = "w", onnx.initializer = dense<0.5> : tensor<10x256xf32>}) -> (tensor<64x10xf32> {onnx.name = "y"}) {
  // CHECK: %[[NONE:.*]] = onnx.none
  %none = onnx.none
  // CHECK: onnx.node "Gemm"(%{{.*}}, %{{.*}}, %[[NONE]]) {transB = 1 : i64} opset 13 : (tensor<64x256xf32>, tensor<10x256xf32>, none) -> tensor<64x10xf32>
  %0 = onnx.node "Gemm"(%x, %w, %none) {transB = 1 : i64} opset 13 : (tensor<64x256xf32>, tensor<10x256xf32>, none) -> tensor<64x10xf32>
  // CHECK: onnx.node "Gelu"(%{{.*}}) {} domain "com.microsoft" opset 1 : (tensor<64x10xf32>) -> !onnx.unknown
  %1 = onnx.node "Gelu"(%0) {} domain "com.microsoft" opset 1 : (tensor<64x10xf32>) -> !onnx.unknown
  return %0 : tensor<64x10xf32>
}
