// RUN: %amp-opt %s --canonicalize --split-input-file | FileCheck %s
//
// Integer constants fold only while the result stays small (4096 elements):
// broadcasting, concatenating or gathering small constants can make a large
// one, which a hostile model could use to fill the compiler's memory.

// CHECK-LABEL: func.func @small
// CHECK: %[[C:.*]] = graph.constant dense<3> : tensor<64x64xi64>
// CHECK-NEXT: return %[[C]]
func.func @small() -> tensor<64x64xi64> {
  %a = graph.constant dense<1> : tensor<64x1xi64>
  %b = graph.constant dense<2> : tensor<1x64xi64>
  %0 = graph.add %a, %b : (tensor<64x1xi64>, tensor<1x64xi64>) -> tensor<64x64xi64>
  return %0 : tensor<64x64xi64>
}

// -----

// 64 x 128 = 8192 elements from 64 + 128.
// CHECK-LABEL: func.func @broadcast
// CHECK: graph.add
func.func @broadcast() -> tensor<64x128xi64> {
  %a = graph.constant dense<1> : tensor<64x1xi64>
  %b = graph.constant dense<2> : tensor<1x128xi64>
  %0 = graph.add %a, %b : (tensor<64x1xi64>, tensor<1x128xi64>) -> tensor<64x128xi64>
  return %0 : tensor<64x128xi64>
}

// -----

// Three inputs of 2048: 6144 elements.
// CHECK-LABEL: func.func @concat
// CHECK: graph.concat
func.func @concat() -> tensor<6144xi64> {
  %a = graph.constant dense<1> : tensor<2048xi64>
  %0 = graph.concat %a, %a, %a {axis = 0 : i64} : (tensor<2048xi64>, tensor<2048xi64>, tensor<2048xi64>) -> tensor<6144xi64>
  return %0 : tensor<6144xi64>
}

// -----

// 4096 indices into rows of 2: 8192 elements.
// CHECK-LABEL: func.func @gather
// CHECK: graph.gather
func.func @gather() -> tensor<4096x2xi64> {
  %d = graph.constant dense<1> : tensor<2048x2xi64>
  %i = graph.constant dense<0> : tensor<4096xi64>
  %0 = graph.gather %d, %i {axis = 0 : i64} : (tensor<2048x2xi64>, tensor<4096xi64>) -> tensor<4096x2xi64>
  return %0 : tensor<4096x2xi64>
}

// -----

// Integer neg folds (ONNX's expanded functions negate axes), except
// INT64_MIN, whose negation overflows.
// CHECK-LABEL: func.func @neg
// CHECK-DAG: graph.constant dense<[-1, 2]> : tensor<2xi64>
// CHECK-DAG: %[[MIN:.*]] = graph.constant dense<-9223372036854775808> : tensor<i64>
// CHECK-DAG: graph.neg %[[MIN]]
func.func @neg() -> (tensor<2xi64>, tensor<i64>) {
  %a = graph.constant dense<[1, -2]> : tensor<2xi64>
  %0 = graph.neg %a : tensor<2xi64>
  %m = graph.constant dense<-9223372036854775808> : tensor<i64>
  %1 = graph.neg %m : tensor<i64>
  return %0, %1 : tensor<2xi64>, tensor<i64>
}
