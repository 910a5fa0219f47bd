// RUN: %amp-opt %s --canonicalize --split-input-file | FileCheck %s
//
// Comparisons, logical ops and where fold on small constants (GraphFold.cpp):
// the shape logic of exported models leaves no kernel. Floats compare as
// their values (f16 widened exactly), with NaN unequal to everything.

// CHECK-LABEL: func.func @compare_ints_and_floats
// CHECK-DAG: graph.constant dense<[true, false, false]> : tensor<3xi1>
// CHECK-DAG: graph.constant dense<[false, false, true]> : tensor<3xi1>
// CHECK-DAG: graph.constant dense<[false, true, false]> : tensor<3xi1>
// CHECK-NOT: graph.less
// CHECK-NOT: graph.equal
// CHECK-NOT: graph.logical
func.func @compare_ints_and_floats() -> (tensor<3xi1>, tensor<3xi1>, tensor<3xi1>) {
  %a = graph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = graph.constant dense<2> : tensor<i64>
  %0 = graph.less %a, %b : (tensor<3xi64>, tensor<i64>) -> tensor<3xi1>
  %x = graph.constant dense<[0x7E00, 1.0, 2.5]> : tensor<3xf16>
  %y = graph.constant dense<[0x7E00, 0.5, 2.5]> : tensor<3xf16>
  %1 = graph.equal %x, %y : (tensor<3xf16>, tensor<3xf16>) -> tensor<3xi1>
  %n = graph.logical_not %1 : tensor<3xi1>
  %2 = graph.logical_xor %n, %0 : (tensor<3xi1>, tensor<3xi1>) -> tensor<3xi1>
  return %0, %1, %2 : tensor<3xi1>, tensor<3xi1>, tensor<3xi1>
}

// -----

// A where of constants picks element by element; a condition that is one
// value forwards the operand it picks, whatever that operand is.
// CHECK-LABEL: func.func @where
// CHECK-DAG: %[[C:.*]] = graph.constant dense<[1, 7, 3]> : tensor<3xi64>
// CHECK-NOT: graph.where
// CHECK: return %[[C]], %arg0
func.func @where(%x: tensor<3xf32>) -> (tensor<3xi64>, tensor<3xf32>) {
  %c = graph.constant dense<[true, false, true]> : tensor<3xi1>
  %a = graph.constant dense<[1, 2, 3]> : tensor<3xi64>
  %b = graph.constant dense<7> : tensor<i64>
  %0 = graph.where %c, %a, %b : (tensor<3xi1>, tensor<3xi64>, tensor<i64>) -> tensor<3xi64>
  %t = graph.constant dense<true> : tensor<3xi1>
  %z = graph.constant dense<0.0> : tensor<f32>
  %1 = graph.where %t, %x, %z : (tensor<3xi1>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xi64>, tensor<3xf32>
}

// -----

// A comparison of a runtime value stays.
// CHECK-LABEL: func.func @runtime
// CHECK: graph.greater %arg0
func.func @runtime(%x: tensor<3xf32>) -> tensor<3xi1> {
  %z = graph.constant dense<0.0> : tensor<f32>
  %0 = graph.greater %x, %z : (tensor<3xf32>, tensor<f32>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}
