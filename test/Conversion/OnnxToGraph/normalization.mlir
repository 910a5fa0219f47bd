// RUN: %amp-opt %s -split-input-file --convert-onnx-to-graph | FileCheck %s

// Opset 15: training_mode = 0 (default) is inference.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4x4xf32> {onnx.name = "x"}, %s: tensor<3xf32> {onnx.name = "s"}) -> tensor<2x3x4x4xf32> {
  // CHECK: graph.batch_norm_inference %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-03 : f64}
  %0 = onnx.node "BatchNormalization"(%x, %s, %s, %s, %s) {epsilon = 0.001 : f32} opset 15 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32>
  return %0 : tensor<2x3x4x4xf32>
}

// -----

// Opset 15, training_mode = 1: batch statistics and running updates.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3x4x4xf32> {onnx.name = "x"}, %s: tensor<3xf32> {onnx.name = "s"}) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>) {
  // CHECK: %[[Y:.*]], %[[M:.*]], %[[V:.*]], %{{.*}}, %{{.*}} = graph.batch_norm_training %arg0, %arg1, %arg1, %arg1, %arg1 {epsilon = 1.000000e-05 : f64, momentum = 0.98999999999999999 : f64}
  // CHECK: return %[[Y]], %[[M]], %[[V]]
  %0:3 = onnx.node "BatchNormalization"(%x, %s, %s, %s, %s) {momentum = 0.99 : f32, training_mode = 1 : i64} opset 15 : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>
}

// -----

// Before opset 14 training is told by the number of outputs.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x3xf32> {onnx.name = "x"}, %s: tensor<3xf32> {onnx.name = "s"}) -> (tensor<2x3xf32>, tensor<3xf32>) {
  // CHECK: graph.batch_norm_training
  %0:3 = onnx.node "BatchNormalization"(%x, %s, %s, %s, %s) {} opset 11 : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<3xf32>
}

// -----

// LayerNormalization (opset 17): negative axis normalized, statistics f32.
// CHECK-LABEL: func.func @forward
func.func @forward(%x: tensor<2x5x8xf16> {onnx.name = "x"}, %g: tensor<8xf16> {onnx.name = "g"}, %b: tensor<8xf16> {onnx.name = "b"}) -> (tensor<2x5x8xf16>, tensor<2x5x1xf32>) {
  // CHECK: graph.layer_norm %arg0, %arg1, %arg2 {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x5x8xf16>, tensor<2x5x1xf32>, tensor<2x5x1xf32>)
  %0:2 = onnx.node "LayerNormalization"(%x, %g, %b) {axis = -1 : i64} opset 17 : (tensor<2x5x8xf16>, tensor<8xf16>, tensor<8xf16>) -> (tensor<2x5x8xf16>, tensor<2x5x1xf32>)
  return %0#0, %0#1 : tensor<2x5x8xf16>, tensor<2x5x1xf32>
}

// -----

// InstanceNormalization: a layer norm over the spatial dimensions (marked
// graph.instance_norm, for amp-auto-cast) with a
// scale of ones, then the per-channel scale and bias.
// CHECK-LABEL: func.func @forward
// CHECK: %[[ONES:.*]] = graph.constant dense<1.000000e+00> : tensor<4x5xf32>
// CHECK: %[[Y:.*]], %{{.*}}, %{{.*}} = graph.layer_norm %arg0, %[[ONES]] {axis = 2 : i64, epsilon = 1.000000e-03 : f64, graph.instance_norm}
// CHECK: %[[S:.*]] = graph.reshape %arg1 : tensor<3xf32> to tensor<3x1x1xf32>
// CHECK: %[[M:.*]] = graph.mul %[[Y]], %[[S]]
// CHECK: %[[B:.*]] = graph.reshape %arg2 : tensor<3xf32> to tensor<3x1x1xf32>
// CHECK: graph.add %[[M]], %[[B]]
func.func @forward(%x: tensor<2x3x4x5xf32> {onnx.name = "x"}, %s: tensor<3xf32> {onnx.name = "s"}, %b: tensor<3xf32> {onnx.name = "b"}) -> !onnx.unknown {
  %0 = onnx.node "InstanceNormalization"(%x, %s, %b) {epsilon = 1.0e-3 : f32} opset 13 : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>) -> !onnx.unknown
  return %0 : !onnx.unknown
}
