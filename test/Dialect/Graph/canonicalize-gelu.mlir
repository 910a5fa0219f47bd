// RUN: %amp-opt %s -canonicalize -split-input-file | FileCheck %s

// GELU written out, as PyTorch exports nn.GELU before opset 20, is one
// graph.gelu (GeluRecognition.cpp).

// The erf form in PyTorch's order: x / sqrt(2), erf, + 1, x *, * 0.5.
// CHECK-LABEL: func.func @erf_form
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[X]] : tensor<4xf32>
// CHECK-NEXT: return %[[G]]
func.func @erf_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// Other spellings: x * (1 / sqrt(2)), 1 + erf, 0.5 * x first; in f16, whose
// constants are the formula's rounded.
// CHECK-LABEL: func.func @erf_form_reordered
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf16>)
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[X]] : tensor<2x3xf16>
// CHECK-NEXT: return %[[G]]
func.func @erf_form_reordered(%x: tensor<2x3xf16>) -> tensor<2x3xf16> {
  %rsqrt2 = graph.constant dense<0.707107> : tensor<f16>
  %one = graph.constant dense<1.0> : tensor<f16>
  %half = graph.constant dense<0.5> : tensor<f16>
  %0 = graph.mul %rsqrt2, %x : (tensor<f16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %1 = graph.erf %0 : tensor<2x3xf16>
  %2 = graph.add %one, %1 : (tensor<f16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %3 = graph.mul %half, %x : (tensor<f16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  %4 = graph.mul %3, %2 : (tensor<2x3xf16>, tensor<2x3xf16>) -> tensor<2x3xf16>
  return %4 : tensor<2x3xf16>
}

// -----

// The tanh form in PyTorch's order, x^3 as x * (x * x).
// CHECK-LABEL: func.func @tanh_form
// CHECK-SAME: (%[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[G:.*]] = graph.gelu %[[X]] {approximate = "tanh"} : tensor<4xf32>
// CHECK-NEXT: return %[[G]]
func.func @tanh_form(%x: tensor<4xf32>) -> tensor<4xf32> {
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %c = graph.constant dense<4.471500e-02> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.mul %x, %0 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = graph.mul %1, %c : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.add %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %k : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = graph.tanh %4 : tensor<4xf32>
  %6 = graph.add %5, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %7 = graph.mul %x, %6 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %8 = graph.mul %7, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %8 : tensor<4xf32>
}

// -----

// x^3 as x ^ 3.
// CHECK-LABEL: func.func @tanh_form_pow
// CHECK-NEXT: graph.gelu %{{.*}} {approximate = "tanh"}
// CHECK-NEXT: return
func.func @tanh_form_pow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %three = graph.constant dense<3.0> : tensor<f32>
  %k = graph.constant dense<0.797884583> : tensor<f32>
  %c = graph.constant dense<4.471500e-02> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %1 = graph.pow %x, %three : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = graph.mul %c, %1 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = graph.add %2, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %k, %3 : (tensor<f32>, tensor<4xf32>) -> tensor<4xf32>
  %5 = graph.tanh %4 : tensor<4xf32>
  %6 = graph.add %5, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %h = graph.mul %6, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = graph.mul %x, %h : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %8 : tensor<4xf32>
}

// -----

// Not GELU: another constant (x / 2), and an erf whose value is also read
// elsewhere (replacing the chain would compute it twice) stay as they are.
// CHECK-LABEL: func.func @not_gelu
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @not_gelu(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %two = graph.constant dense<2.0> : tensor<f32>
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5> : tensor<f32>
  %0 = graph.div %x, %two : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %5 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %6 = graph.erf %5 : tensor<4xf32>
  %7 = graph.add %6, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %8 = graph.mul %x, %7 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %9 = graph.mul %8, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4, %9, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// 0.5, 1 and 3 must be exact (only the irrational constants may be rounded):
// x * (erf(x / sqrt(2)) + 1) * 0.5004 is not GELU.
// CHECK-LABEL: func.func @almost_half
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @almost_half(%x: tensor<4xf32>) -> tensor<4xf32> {
  %sqrt2 = graph.constant dense<1.41421354> : tensor<f32>
  %one = graph.constant dense<1.0> : tensor<f32>
  %half = graph.constant dense<0.5004> : tensor<f32>
  %0 = graph.div %x, %sqrt2 : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.erf %0 : tensor<4xf32>
  %2 = graph.add %1, %one : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %3 = graph.mul %x, %2 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = graph.mul %3, %half : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// A bf16 model's constants are the formula's rounded to bf16 (sqrt(2 / pi)
// is 0.796875, 1.3e-3 off); an f32 one 0.09% off (x / 1.4155) is not sqrt(2).
// CHECK-LABEL: func.func @rounded_to_the_type
// CHECK: graph.gelu %{{.*}} {approximate = "tanh"} : tensor<4xbf16>
// CHECK-NOT: graph.gelu
// CHECK: return
func.func @rounded_to_the_type(%x: tensor<4xbf16>, %y: tensor<4xf32>) -> (tensor<4xbf16>, tensor<4xf32>) {
  %k = graph.constant dense<0.796875> : tensor<bf16>
  %c = graph.constant dense<4.467770e-02> : tensor<bf16>
  %one = graph.constant dense<1.0> : tensor<bf16>
  %half = graph.constant dense<0.5> : tensor<bf16>
  %0 = graph.mul %x, %x : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %1 = graph.mul %x, %0 : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %2 = graph.mul %1, %c : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xbf16>
  %3 = graph.add %x, %2 : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %4 = graph.mul %3, %k : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xbf16>
  %5 = graph.tanh %4 : tensor<4xbf16>
  %6 = graph.add %5, %one : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xbf16>
  %7 = graph.mul %x, %6 : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %8 = graph.mul %7, %half : (tensor<4xbf16>, tensor<bf16>) -> tensor<4xbf16>
  %s = graph.constant dense<1.4155> : tensor<f32>
  %fone = graph.constant dense<1.0> : tensor<f32>
  %fhalf = graph.constant dense<0.5> : tensor<f32>
  %10 = graph.div %y, %s : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %11 = graph.erf %10 : tensor<4xf32>
  %12 = graph.add %11, %fone : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %13 = graph.mul %y, %12 : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %14 = graph.mul %13, %fhalf : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %8, %14 : tensor<4xbf16>, tensor<4xf32>
}
