// convert-graph-to-rt fuses post-ops into gemm kernels (GemmEpilogues.cpp,
// runtime/GemmEpilogue.h): an activation after the GEMM, an activation's
// gradient after the dX GEMM, a bias gradient beside the dW GEMM; and
// leaves apart what does not fit. With fuse=false nothing is fused.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/forms.mlir -split-input-file -convert-graph-to-rt | FileCheck %s
// RUN: amp-opt %t/forms.mlir -split-input-file -convert-graph-to-rt=fuse=false | FileCheck %s --check-prefix=NOFUSE
// RUN: amp-opt %t/apart.mlir -split-input-file -convert-graph-to-rt | FileCheck %s --check-prefix=APART
// RUN: amp-opt %t/step.mlir -graph-build-training=optimizer=sgd -convert-graph-to-rt | FileCheck %s --check-prefix=STEP
// RUN: amp-opt %t/gelu-step.mlir -graph-build-training=optimizer=sgd -convert-graph-to-rt | FileCheck %s --check-prefix=GSTEP

//--- forms.mlir

// relu after a gemm with a bias along the last dim: one kernel, the bias
// still the gemm's c; the pre-activation is never a kernel result.
// CHECK-LABEL: func.func @relu_bias()
// CHECK: %[[X:.*]] = rt.input "x"
// CHECK: %[[W:.*]] = rt.param "w"
// CHECK: %[[B:.*]] = rt.param "b"
// CHECK: %[[Y:.*]] = rt.kernel "gemm"(%[[X]], %[[W]], %[[B]]) at [{{[0-9]+}}] {epilogue = "relu"} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> tensor<4x5xf16> {
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x3xf16>, %[[A1:.*]]: tensor<5x3xf16>, %[[A2:.*]]: tensor<5xf16>):
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[A0]], %[[A1]], %[[A2]] {trans_b = true}
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[G]] : tensor<4x5xf16>
// CHECK-NEXT: rt.yield %[[R]] : tensor<4x5xf16>
// CHECK: rt.output "y" %[[Y]]
// NOFUSE-LABEL: func.func @relu_bias()
// NOFUSE-NOT: epilogue
// NOFUSE: rt.kernel "gemm"
// NOFUSE: rt.kernel "relu"
func.func @relu_bias(%x: tensor<4x3xf16> {graph.name = "x"},
                     %w: tensor<5x3xf16> {graph.name = "w", graph.init = dense<0.5> : tensor<5x3xf16>},
                     %b: tensor<5xf16> {graph.name = "b", graph.init = dense<0.0> : tensor<5xf16>})
    -> (tensor<4x5xf16> {graph.name = "y"}) {
  %h = graph.gemm %x, %w, %b {trans_b = true} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> tensor<4x5xf16>
  %y = graph.relu %h : tensor<4x5xf16>
  return %y : tensor<4x5xf16>
}

// -----

// Without a bias; gelu carries its approximation into the kernel.
// CHECK-LABEL: func.func @gelu()
// CHECK: rt.kernel "gemm"(%{{.*}}, %{{.*}}) at [{{[0-9]+}}] {epilogue = "gelu"} : (tensor<4x3xbf16>, tensor<3x5xbf16>) -> tensor<4x5xbf16>
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[G:.*]] = graph.gemm
// CHECK-NEXT: %[[Y:.*]] = graph.gelu %[[G]] {approximate = "tanh"}
// CHECK-NEXT: rt.yield %[[Y]]
// NOFUSE-LABEL: func.func @gelu()
// NOFUSE-NOT: epilogue
// NOFUSE: rt.kernel "gelu"
func.func @gelu(%x: tensor<4x3xbf16> {graph.name = "x"},
                %w: tensor<3x5xbf16> {graph.name = "w", graph.init = dense<0.5> : tensor<3x5xbf16>})
    -> (tensor<4x5xbf16> {graph.name = "y"}) {
  %h = graph.gemm %x, %w : (tensor<4x3xbf16>, tensor<3x5xbf16>) -> tensor<4x5xbf16>
  %y = graph.gelu %h {approximate = "tanh"} : tensor<4x5xbf16>
  return %y : tensor<4x5xbf16>
}

// -----

// gelu's gradient reads the pre-activation: the kernel writes it as a
// second result (gelu_aux), which the gradient then reads.
// CHECK-LABEL: func.func @gelu_aux()
// CHECK: %[[K:.*]]:2 = rt.kernel "gemm"(%{{.*}}, %{{.*}}, %{{.*}}) at [{{[0-9]+}}, {{[0-9]+}}] {epilogue = "gelu_aux"} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> (tensor<4x5xf16>, tensor<4x5xf16>)
// CHECK-NEXT: ^bb0
// CHECK-NEXT: %[[G:.*]] = graph.gemm
// CHECK-NEXT: %[[Y:.*]] = graph.gelu %[[G]] :
// CHECK-NEXT: rt.yield %[[Y]], %[[G]] : tensor<4x5xf16>, tensor<4x5xf16>
// CHECK: rt.kernel "gelu_grad"(%{{.*}}, %[[K]]#1)
// CHECK: rt.output "y" %[[K]]#0
func.func @gelu_aux(%x: tensor<4x3xf16> {graph.name = "x"},
                    %dy: tensor<4x5xf16> {graph.name = "dy"},
                    %w: tensor<5x3xf16> {graph.name = "w", graph.init = dense<0.5> : tensor<5x3xf16>},
                    %b: tensor<5xf16> {graph.name = "b", graph.init = dense<0.0> : tensor<5xf16>})
    -> (tensor<4x5xf16> {graph.name = "y"}, tensor<4x5xf16> {graph.name = "dh"}) {
  %h = graph.gemm %x, %w, %b {trans_b = true} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> tensor<4x5xf16>
  %y = graph.gelu %h : tensor<4x5xf16>
  %dh = graph.gelu_grad %dy, %h : tensor<4x5xf16>
  return %y, %dh : tensor<4x5xf16>, tensor<4x5xf16>
}

// -----

// The dX GEMM and the activation's gradient: the forward value is the
// kernel's last input (after a, b; c is absent).
// CHECK-LABEL: func.func @drelu_dgelu()
// CHECK: %[[DY:.*]] = rt.input "dy"
// CHECK: %[[Y:.*]] = rt.input "y"
// CHECK: %[[H:.*]] = rt.input "h"
// CHECK: %[[W:.*]] = rt.param "w"
// CHECK: rt.kernel "gemm"(%[[DY]], %[[W]], %[[Y]]) at [{{[0-9]+}}] {epilogue = "drelu"} : (tensor<4x5xf16>, tensor<5x3xf16>, tensor<4x3xf16>) -> tensor<4x3xf16>
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<4x5xf16>, %[[A1:.*]]: tensor<5x3xf16>, %[[A2:.*]]: tensor<4x3xf16>):
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[A0]], %[[A1]] {beta = 0.000000e+00 : f64}
// CHECK-NEXT: %[[D:.*]] = graph.relu_grad %[[G]], %[[A2]] : tensor<4x3xf16>
// CHECK-NEXT: rt.yield %[[D]]
// CHECK: rt.kernel "gemm"(%[[DY]], %[[W]], %[[H]]) at [{{[0-9]+}}] {epilogue = "dgelu"}
// CHECK-NEXT: ^bb0
// CHECK-NEXT: graph.gemm
// CHECK-NEXT: graph.gelu_grad %{{.*}}, %{{.*}} {approximate = "tanh"}
// NOFUSE-LABEL: func.func @drelu_dgelu()
// NOFUSE-NOT: epilogue
// NOFUSE: rt.kernel "relu_grad"
// NOFUSE: rt.kernel "gelu_grad"
func.func @drelu_dgelu(%dy: tensor<4x5xf16> {graph.name = "dy"},
                       %y: tensor<4x3xf16> {graph.name = "y"},
                       %h: tensor<4x3xf16> {graph.name = "h"},
                       %w: tensor<5x3xf16> {graph.name = "w", graph.init = dense<0.5> : tensor<5x3xf16>})
    -> (tensor<4x3xf16> {graph.name = "dx"}, tensor<4x3xf16> {graph.name = "dx2"}) {
  %g = graph.gemm %dy, %w {beta = 0.0 : f64} : (tensor<4x5xf16>, tensor<5x3xf16>) -> tensor<4x3xf16>
  %dx = graph.relu_grad %g, %y : tensor<4x3xf16>
  %g2 = graph.gemm %dy, %w {beta = 0.0 : f64} : (tensor<4x5xf16>, tensor<5x3xf16>) -> tensor<4x3xf16>
  %dx2 = graph.gelu_grad %g2, %h {approximate = "tanh"} : tensor<4x3xf16>
  return %dx, %dx2 : tensor<4x3xf16>, tensor<4x3xf16>
}

// -----

// The bias gradient (reduce_sum of dY over the batch) rides on the dW GEMM,
// which reads the same dY under trans_a: a second result, where the dW
// GEMM stood.
// CHECK-LABEL: func.func @bgrad()
// CHECK: %[[DY:.*]] = rt.input "dy"
// CHECK: %[[X:.*]] = rt.input "x"
// CHECK: %[[K:.*]]:2 = rt.kernel "gemm"(%[[DY]], %[[X]]) at [{{[0-9]+}}, {{[0-9]+}}] {epilogue = "bgrad"} : (tensor<8x5xf16>, tensor<8x3xf16>) -> (tensor<5x3xf16>, tensor<1x5xf16>)
// CHECK-NEXT: ^bb0(%[[A0:.*]]: tensor<8x5xf16>, %[[A1:.*]]: tensor<8x3xf16>):
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[A0]], %[[A1]] {beta = 0.000000e+00 : f64, trans_a = true}
// CHECK-NEXT: %[[S:.*]] = graph.reduce_sum %[[A0]] {axes = array<i64: 0>}
// CHECK-NEXT: rt.yield %[[G]], %[[S]] : tensor<5x3xf16>, tensor<1x5xf16>
// CHECK: %[[DB:.*]] = rt.view %[[K]]#1 : tensor<1x5xf16> to tensor<5xf16>
// CHECK: rt.output "dw" %[[K]]#0
// CHECK: rt.output "db" %[[DB]]
// NOFUSE-LABEL: func.func @bgrad()
// NOFUSE-NOT: epilogue
// NOFUSE: rt.kernel "reduce_sum"
func.func @bgrad(%dy: tensor<8x5xf16> {graph.name = "dy"},
                 %x: tensor<8x3xf16> {graph.name = "x"})
    -> (tensor<5x3xf16> {graph.name = "dw"}, tensor<5xf16> {graph.name = "db"}) {
  %dw = graph.gemm %dy, %x {beta = 0.0 : f64, trans_a = true} : (tensor<8x5xf16>, tensor<8x3xf16>) -> tensor<5x3xf16>
  %s = graph.reduce_sum %dy {axes = array<i64: 0>} : (tensor<8x5xf16>) -> tensor<1x5xf16>
  %db = graph.reshape %s : tensor<1x5xf16> to tensor<5xf16>
  return %dw, %db : tensor<5x3xf16>, tensor<5xf16>
}

//--- apart.mlir

// The pre-activation has a second reader and relu has no aux form (its
// gradient reads relu's output): nothing to fuse.
// APART-LABEL: func.func @two_users()
// APART-NOT: epilogue
// APART: rt.kernel "gemm"
// APART: rt.kernel "relu"
func.func @two_users(%x: tensor<4x3xf32> {graph.name = "x"},
                     %w: tensor<3x5xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x5xf32>})
    -> (tensor<4x5xf32> {graph.name = "y"}, tensor<4x5xf32> {graph.name = "h"}) {
  %h = graph.gemm %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %y = graph.relu %h : tensor<4x5xf32>
  return %y, %h : tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A c that is not a vector along the last dim ([4, 1], [4, 5]), or a bias
// added with beta != 1, is no cuBLASLt bias: the gemm keeps it and runs
// alone. A [1, 5] c is the same bytes as a [5] one and fuses.
// APART-LABEL: func.func @bias_shapes()
// APART-NOT: epilogue
// APART: rt.kernel "gemm"
// APART: rt.kernel "relu"
// APART: rt.kernel "gemm"
// APART: rt.kernel "relu"
// APART: rt.kernel "gemm"
// APART: rt.kernel "relu"
// APART: rt.kernel "gemm"({{.*}}) at [{{[0-9]+}}] {epilogue = "relu"} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<1x5xf32>)
func.func @bias_shapes(%x: tensor<4x3xf32> {graph.name = "x"},
                       %w: tensor<3x5xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x5xf32>},
                       %c: tensor<4x1xf32> {graph.name = "c", graph.init = dense<0.5> : tensor<4x1xf32>},
                       %f: tensor<4x5xf32> {graph.name = "f", graph.init = dense<0.5> : tensor<4x5xf32>},
                       %b: tensor<5xf32> {graph.name = "b", graph.init = dense<0.5> : tensor<5xf32>},
                       %r: tensor<1x5xf32> {graph.name = "r", graph.init = dense<0.5> : tensor<1x5xf32>})
    -> (tensor<4x5xf32> {graph.name = "y"}, tensor<4x5xf32> {graph.name = "y2"},
        tensor<4x5xf32> {graph.name = "y3"}, tensor<4x5xf32> {graph.name = "y4"}) {
  %h = graph.gemm %x, %w, %c : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  %y = graph.relu %h : tensor<4x5xf32>
  %h2 = graph.gemm %x, %w, %f : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %y2 = graph.relu %h2 : tensor<4x5xf32>
  %h3 = graph.gemm %x, %w, %b {beta = 2.0 : f64} : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %y3 = graph.relu %h3 : tensor<4x5xf32>
  %h4 = graph.gemm %x, %w, %r : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<1x5xf32>) -> tensor<4x5xf32>
  %y4 = graph.relu %h4 : tensor<4x5xf32>
  return %y, %y2, %y3, %y4 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>
}

// -----

// A reduce_sum over the other axis, or beside a gemm without trans_a (whose
// contracted dim is not a's axis 0): no bias gradient.
// APART-LABEL: func.func @not_bgrad()
// APART-NOT: epilogue
// APART: rt.kernel "gemm"
// APART: rt.kernel "reduce_sum"
// APART: rt.kernel "gemm"
// APART: rt.kernel "reduce_sum"
func.func @not_bgrad(%dy: tensor<8x5xf32> {graph.name = "dy"},
                     %x: tensor<8x3xf32> {graph.name = "x"},
                     %dy2: tensor<8x5xf32> {graph.name = "dy2"},
                     %v: tensor<5x3xf32> {graph.name = "v"})
    -> (tensor<5x3xf32> {graph.name = "dw"}, tensor<8x1xf32> {graph.name = "s"},
        tensor<8x3xf32> {graph.name = "p"}, tensor<1x5xf32> {graph.name = "s0"}) {
  %dw = graph.gemm %dy, %x {beta = 0.0 : f64, trans_a = true} : (tensor<8x5xf32>, tensor<8x3xf32>) -> tensor<5x3xf32>
  %s = graph.reduce_sum %dy {axes = array<i64: 1>} : (tensor<8x5xf32>) -> tensor<8x1xf32>
  %p = graph.gemm %dy2, %v : (tensor<8x5xf32>, tensor<5x3xf32>) -> tensor<8x3xf32>
  %s0 = graph.reduce_sum %dy2 {axes = array<i64: 0>} : (tensor<8x5xf32>) -> tensor<1x5xf32>
  return %dw, %s, %p, %s0 : tensor<5x3xf32>, tensor<8x1xf32>, tensor<8x3xf32>, tensor<1x5xf32>
}

//--- step.mlir

// A 2-layer MLP's training step: relu into the first GEMM, relu_grad
// (reading relu's output) into the dX GEMM, each bias gradient into its
// dW GEMM. Only the GEMM kernels are checked.
// STEP-LABEL: func.func @train_step()
// STEP: %[[X:.*]] = rt.input "x"
// STEP: %[[W1:.*]] = rt.param "w1"
// STEP: %[[B1:.*]] = rt.param "b1"
// STEP: %[[W2:.*]] = rt.param "w2"
// STEP: %[[B2:.*]] = rt.param "b2"
// STEP: %[[R:.*]] = rt.kernel "gemm"(%[[X]], %[[W1]], %[[B1]]) {{.*}} {epilogue = "relu"}
// STEP: %[[Y:.*]] = rt.kernel "gemm"(%[[R]], %[[W2]], %[[B2]]) at
// STEP-NOT: epilogue
// STEP-SAME: -> tensor<4x2xf32>
// STEP: %[[DY:.*]] = rt.kernel "softmax_cross_entropy_grad"
// STEP: %[[DR:.*]] = rt.kernel "gemm"(%[[DY]], %[[W2]], %[[R]]) {{.*}} {epilogue = "drelu"}
// STEP: %[[DW2:.*]]:2 = rt.kernel "gemm"(%[[DY]], %[[R]]) {{.*}} {epilogue = "bgrad"}
// STEP: rt.kernel "sgd_update"({{.*}}, %[[W2]], %[[DW2]]#0
// STEP: %[[DW1:.*]]:2 = rt.kernel "gemm"(%[[DR]], %[[X]]) {{.*}} {epilogue = "bgrad"}
// STEP-NOT: rt.kernel "relu
// STEP-NOT: rt.kernel "reduce_sum"
// STEP: return
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<5x3xf32>, graph.trainable = true},
                   %b1: tensor<5xf32> {graph.name = "b1", graph.init = dense<0.0> : tensor<5xf32>, graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.name = "w2", graph.init = dense<0.25> : tensor<2x5xf32>, graph.trainable = true},
                   %b2: tensor<2xf32> {graph.name = "b2", graph.init = dense<0.0> : tensor<2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %r = graph.relu %h : tensor<4x5xf32>
  %y = graph.gemm %r, %w2, %b2 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %loss, %lp = graph.softmax_cross_entropy %y, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>)
  return %loss : tensor<f32>
}

//--- gelu-step.mlir

// The same step with gelu: its gradient reads the pre-activation, which the
// first GEMM kernel writes beside gelu's output (gelu_aux) and the second
// layer's dX GEMM reads (dgelu).
// GSTEP-LABEL: func.func @train_step()
// GSTEP: %[[X:.*]] = rt.input "x"
// GSTEP: %[[W1:.*]] = rt.param "w1"
// GSTEP: %[[B1:.*]] = rt.param "b1"
// GSTEP: %[[W2:.*]] = rt.param "w2"
// GSTEP: %[[H:.*]]:2 = rt.kernel "gemm"(%[[X]], %[[W1]], %[[B1]]) {{.*}} {epilogue = "gelu_aux"}
// GSTEP: graph.gelu %{{.*}} {approximate = "tanh"}
// GSTEP: %[[DY:.*]] = rt.kernel "softmax_cross_entropy_grad"
// GSTEP: %[[DH:.*]] = rt.kernel "gemm"(%[[DY]], %[[W2]], %[[H]]#1) {{.*}} {epilogue = "dgelu"}
// GSTEP: graph.gelu_grad %{{.*}}, %{{.*}} {approximate = "tanh"}
// GSTEP: rt.kernel "gemm"(%[[DY]], %[[H]]#0) {{.*}} {epilogue = "bgrad"}
// GSTEP: rt.kernel "gemm"(%[[DH]], %[[X]]) {{.*}} {epilogue = "bgrad"}
// GSTEP-NOT: rt.kernel "gelu
// GSTEP: return
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<5x3xf32>, graph.trainable = true},
                   %b1: tensor<5xf32> {graph.name = "b1", graph.init = dense<0.0> : tensor<5xf32>, graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.name = "w2", graph.init = dense<0.25> : tensor<2x5xf32>, graph.trainable = true},
                   %b2: tensor<2xf32> {graph.name = "b2", graph.init = dense<0.0> : tensor<2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %r = graph.gelu %h {approximate = "tanh"} : tensor<4x5xf32>
  %y = graph.gemm %r, %w2, %b2 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %loss, %lp = graph.softmax_cross_entropy %y, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>)
  return %loss : tensor<f32>
}
