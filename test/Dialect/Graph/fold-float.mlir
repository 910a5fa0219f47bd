// RUN: %amp-opt %s --canonicalize --split-input-file | FileCheck %s
//
// Float arithmetic on small constants folds (GraphFold.cpp), computed as
// the runtime computes it: f16 and bf16 in f32 and rounded once, f32 in
// f32, f64 in f64. PyTorch exports an attention's scale as
// Pow(head_dim, -0.5) from the input's shape; it folds to one constant.

// CHECK-LABEL: func.func @attention_scale
// CHECK: %[[C:.*]] = graph.constant dense<0.176776692> : tensor<f32>
// CHECK-NEXT: return %[[C]]
func.func @attention_scale() -> tensor<f32> {
  %d = graph.constant dense<32.0> : tensor<f32>
  %e = graph.constant dense<-0.5> : tensor<f32>
  %0 = graph.pow %d, %e : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// 0.1f + 0.2f in f32 is f32's 0.3; 0.1 + 0.2 in f64 is 0.30000000000000004,
// as C computes it. The f32 operands broadcast.
// CHECK-LABEL: func.func @add_by_type
// CHECK-DAG: graph.constant dense<3.000000e-01> : tensor<2xf32>
// CHECK-DAG: graph.constant dense<0.30000000000000004> : tensor<f64>
// CHECK-NOT: graph.add
func.func @add_by_type() -> (tensor<2xf32>, tensor<f64>) {
  %a = graph.constant dense<0.1> : tensor<2xf32>
  %b = graph.constant dense<0.2> : tensor<f32>
  %0 = graph.add %a, %b : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %c = graph.constant dense<0.1> : tensor<f64>
  %d = graph.constant dense<0.2> : tensor<f64>
  %1 = graph.add %c, %d : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %0, %1 : tensor<2xf32>, tensor<f64>
}

// -----

// f16: 1/3 computed in f32 and rounded to f16 once; x / 0 is inf; the
// operands broadcast.
// CHECK-LABEL: func.func @f16_div
// CHECK: graph.constant dense<[3.332520e-01, 0x7C00]> : tensor<2xf16>
// CHECK-NOT: graph.div
func.func @f16_div() -> tensor<2xf16> {
  %a = graph.constant dense<1.0> : tensor<f16>
  %b = graph.constant dense<[3.0, 0.0]> : tensor<2xf16>
  %0 = graph.div %a, %b : (tensor<f16>, tensor<2xf16>) -> tensor<2xf16>
  return %0 : tensor<2xf16>
}

// -----

// A float operand that is not constant (a function argument) does not fold,
// nor does a result above 4096 elements.
// CHECK-LABEL: func.func @not_constant
// CHECK: graph.mul
// CHECK: graph.sub
func.func @not_constant(%x: tensor<f32>) -> (tensor<f32>, tensor<64x128xf32>) {
  %c = graph.constant dense<2.0> : tensor<f32>
  %0 = graph.mul %x, %c : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %a = graph.constant dense<1.0> : tensor<64x1xf32>
  %b = graph.constant dense<2.0> : tensor<1x128xf32>
  %1 = graph.sub %a, %b : (tensor<64x1xf32>, tensor<1x128xf32>) -> tensor<64x128xf32>
  return %0, %1 : tensor<f32>, tensor<64x128xf32>
}

// -----

// A small float constant casts at compile time: rounded once to a float
// type (an exported epsilon), truncated toward zero to an integer; a value
// out of int64's range is left to the runtime.
// CHECK-LABEL: func.func @cast_float_constants
// CHECK-DAG: graph.constant dense<9.99999996E-13> : tensor<f32>
// CHECK-DAG: graph.constant dense<[2, -2]> : tensor<2xi64>
// CHECK-DAG: %[[BIG:.*]] = graph.constant dense<1.000000e+30> : tensor<f64>
// CHECK-DAG: graph.cast %[[BIG]]
func.func @cast_float_constants() -> (tensor<f32>, tensor<2xi64>, tensor<i64>) {
  %e = graph.constant dense<1.0e-12> : tensor<f64>
  %0 = graph.cast %e : tensor<f64> to tensor<f32>
  %t = graph.constant dense<[2.7, -2.7]> : tensor<2xf32>
  %1 = graph.cast %t : tensor<2xf32> to tensor<2xi64>
  %b = graph.constant dense<1.0e30> : tensor<f64>
  %2 = graph.cast %b : tensor<f64> to tensor<i64>
  return %0, %1, %2 : tensor<f32>, tensor<2xi64>, tensor<i64>
}
