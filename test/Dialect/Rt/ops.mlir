// RUN: amp-opt %s | amp-opt | FileCheck %s
// RUN: amp-opt %s --mlir-print-op-generic | amp-opt | FileCheck %s

// CHECK-LABEL: func.func @all_ops()
// CHECK-SAME: rt.arena_size = 256
// CHECK: %[[X:.*]] = rt.input "x" at 0 : tensor<2x4xf32>
// CHECK: %[[W:.*]] = rt.param "w" at 64 {init = dense<1.000000e+00> : tensor<4xf32>} : tensor<4xf32>
// CHECK: %[[V:.*]] = rt.view %[[X]] : tensor<2x4xf32> to tensor<8xf32>
// CHECK: %[[K:.*]] = rt.kernel "fused"(%[[X]], %[[W]]) at [128] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf16> {
// CHECK: ^bb0(%[[A:.*]]: tensor<2x4xf32>, %[[B:.*]]: tensor<4xf32>):
// CHECK:   graph.add %[[A]], %[[B]]
// CHECK:   rt.yield %{{.*}} : tensor<2x4xf16>
// CHECK: rt.output "y" %[[K]] : tensor<2x4xf16>
// CHECK: rt.output "flat" %[[V]] : tensor<8xf32>
func.func @all_ops() attributes {rt.arena_size = 256 : i64} {
  %x = rt.input "x" at 0 : tensor<2x4xf32>
  %w = rt.param "w" at 64 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %v = rt.view %x : tensor<2x4xf32> to tensor<8xf32>
  %k = rt.kernel "fused"(%x, %w) at [128] : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf16> {
  ^bb0(%a: tensor<2x4xf32>, %b: tensor<4xf32>):
    %0 = graph.add %a, %b : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
    %1 = graph.cast %0 : tensor<2x4xf32> to tensor<2x4xf16>
    rt.yield %1 : tensor<2x4xf16>
  }
  rt.output "y" %k : tensor<2x4xf16>
  rt.output "flat" %v : tensor<8xf32>
  return
}

// CHECK-LABEL: func.func @multi_result_kernel()
// CHECK: %{{.*}}:2 = rt.kernel "dropout"(%{{.*}}) at [64, 0]
func.func @multi_result_kernel() attributes {rt.arena_size = 128 : i64} {
  %x = rt.input "x" at 0 : tensor<4xf32>
  %y:2 = rt.kernel "dropout"(%x) at [64, 0] : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>) {
  ^bb0(%a: tensor<4xf32>):
    %o, %m = graph.dropout %a {ratio = 0.5 : f64, training = true, seed = 7 : i64} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
    rt.yield %o, %m : tensor<4xf32>, tensor<4xi1>
  }
  rt.output "y" %y#0 : tensor<4xf32>
  return
}

// A gemm kernel with an epilogue: the bias gradient as a second result.
// CHECK-LABEL: func.func @gemm_epilogue()
// CHECK: %{{.*}}:2 = rt.kernel "gemm"(%{{.*}}, %{{.*}}) at [128, 192] {epilogue = "bgrad"}
// CHECK: graph.gemm
// CHECK: graph.reduce_sum
func.func @gemm_epilogue() attributes {rt.arena_size = 256 : i64} {
  %dy = rt.input "dy" at 0 : tensor<4x2xf16>
  %x = rt.input "x" at 64 : tensor<4x3xf16>
  %k:2 = rt.kernel "gemm"(%dy, %x) at [128, 192] {epilogue = "bgrad"} : (tensor<4x2xf16>, tensor<4x3xf16>) -> (tensor<2x3xf16>, tensor<1x2xf16>) {
  ^bb0(%a: tensor<4x2xf16>, %b: tensor<4x3xf16>):
    %0 = graph.gemm %a, %b {trans_a = true} : (tensor<4x2xf16>, tensor<4x3xf16>) -> tensor<2x3xf16>
    %1 = graph.reduce_sum %a {axes = array<i64: 0>} : (tensor<4x2xf16>) -> tensor<1x2xf16>
    rt.yield %0, %1 : tensor<2x3xf16>, tensor<1x2xf16>
  }
  rt.output "dw" %k#0 : tensor<2x3xf16>
  rt.output "db" %k#1 : tensor<1x2xf16>
  return
}
