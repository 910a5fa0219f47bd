// rt.update prints and parses back, in custom and generic form.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/ops.mlir | amp-opt | FileCheck %s
// RUN: amp-opt %t/ops.mlir --mlir-print-op-generic | amp-opt | FileCheck %s
// RUN: amp-opt %t/old-value.mlir | amp-opt | FileCheck %s --check-prefix=OLD

//--- ops.mlir

// One update per parameter: the new value may come from a kernel (here
// planned in the parameter's bytes), from a view, or be an input.
// CHECK-LABEL: func.func @updates()
// CHECK: %[[X:.*]] = rt.input "x" at 0 : tensor<4xf32>
// CHECK: %[[W:.*]] = rt.param "w" at 64 {init = dense<1.000000e+00> : tensor<4xf32>} : tensor<4xf32>
// CHECK: %[[M:.*]] = rt.param "m" at 128 {init = dense<0.000000e+00> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK: %[[S:.*]] = rt.param "s" at 192 {init = dense<0.000000e+00> : tensor<4xf32>} : tensor<4xf32>
// CHECK: %[[K:.*]] = rt.kernel "fused"(%[[X]], %[[W]]) at [64]
// CHECK: %[[V:.*]] = rt.view %[[K]] : tensor<4xf32> to tensor<2x2xf32>
// CHECK: rt.output "y" %[[K]] : tensor<4xf32>
// CHECK-NEXT: rt.update %[[W]], %[[K]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: rt.update %[[M]], %[[V]] : tensor<2x2xf32>, tensor<2x2xf32>
// CHECK-NEXT: rt.update %[[S]], %[[X]] : tensor<4xf32>, tensor<4xf32>
// CHECK-NEXT: return
func.func @updates() attributes {rt.arena_size = 256 : i64} {
  %x = rt.input "x" at 0 : tensor<4xf32>
  %w = rt.param "w" at 64 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %m = rt.param "m" at 128 {init = dense<0.0> : tensor<2x2xf32>} : tensor<2x2xf32>
  %s = rt.param "s" at 192 {init = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
  %k = rt.kernel "fused"(%x, %w) at [64] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>, %b: tensor<4xf32>):
    %0 = graph.sub %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    rt.yield %0 : tensor<4xf32>
  }
  %v = rt.view %k : tensor<4xf32> to tensor<2x2xf32>
  rt.output "y" %k : tensor<4xf32>
  rt.update %w, %k : tensor<4xf32>, tensor<4xf32>
  rt.update %m, %v : tensor<2x2xf32>, tensor<2x2xf32>
  rt.update %s, %x : tensor<4xf32>, tensor<4xf32>
  return
}

// A parameter with no update is fine (a frozen weight).
// CHECK-LABEL: func.func @no_update()
// CHECK-NOT: rt.update
// CHECK: return
func.func @no_update() attributes {rt.arena_size = 64 : i64} {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  rt.output "w" %w : tensor<4xf32>
  return
}

//--- old-value.mlir

// A parameter's value before the run may be another parameter's new value
// (state that remembers the previous weights); w is still updated once.
// OLD-LABEL: func.func @old_value()
// OLD: %[[W:.*]] = rt.param "w"
// OLD: %[[P:.*]] = rt.param "w.prev"
// OLD: %[[K:.*]] = rt.kernel "relu"(%[[W]])
// OLD: rt.update %[[W]], %[[K]] : tensor<4xf32>, tensor<4xf32>
// OLD-NEXT: rt.update %[[P]], %[[W]] : tensor<4xf32>, tensor<4xf32>
func.func @old_value() attributes {rt.arena_size = 192 : i64} {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %p = rt.param "w.prev" at 64 {init = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
  %k = rt.kernel "relu"(%w) at [128] : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.relu %a : tensor<4xf32>
    rt.yield %0 : tensor<4xf32>
  }
  rt.update %w, %k : tensor<4xf32>, tensor<4xf32>
  rt.update %p, %w : tensor<4xf32>, tensor<4xf32>
  return
}
