// Results tied to arguments (graph.updates) become rt.update, and the
// memory planner writes a new value into its parameter's own bytes when
// the kernel that produces it runs after the parameter's last read, or is
// that read and walks the data element for element (elementwise kernels
// and optimizer updates); otherwise the runtime copies it at the end.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/models.mlir -split-input-file -graph-build-training=optimizer=momentum -convert-graph-to-rt | FileCheck %s
// RUN: amp-opt %t/models.mlir -split-input-file -graph-build-training=optimizer=momentum -convert-graph-to-rt=reuse-memory=false | FileCheck %s --check-prefix=NOREUSE
// RUN: amp-opt %t/by-hand.mlir -split-input-file -convert-graph-to-rt | FileCheck %s --check-prefix=HAND
// RUN: amp-opt %t/invalid.mlir -split-input-file -verify-diagnostics -convert-graph-to-rt
// RUN: amp-opt %t/old-value.mlir -convert-graph-to-rt | FileCheck %s --check-prefix=OLD

//--- models.mlir

// A 2-layer MLP trained with momentum: every parameter and velocity is
// updated in place by its momentum_update kernel, and the step counter by
// the add that increments it.
// CHECK-LABEL: func.func @train_step()
// CHECK: rt.input "x"
// CHECK: %[[W1:.*]] = rt.param "w1" at [[W1OFF:[0-9]+]]
// CHECK: %[[B1:.*]] = rt.param "b1" at [[B1OFF:[0-9]+]]
// CHECK: %[[W2:.*]] = rt.param "w2" at [[W2OFF:[0-9]+]]
// CHECK: %[[B2:.*]] = rt.param "b2" at [[B2OFF:[0-9]+]]
// CHECK: %[[STEP:.*]] = rt.param "ampc.step" at [[STEPOFF:[0-9]+]] {init = dense<0> : tensor<i64>} : tensor<i64>
// CHECK: %[[W1V:.*]] = rt.param "w1.velocity" at [[W1VOFF:[0-9]+]] {init = dense<0.000000e+00> : tensor<5x3xf32>}
// CHECK: %[[B1V:.*]] = rt.param "b1.velocity" at [[B1VOFF:[0-9]+]]
// CHECK: %[[W2V:.*]] = rt.param "w2.velocity" at [[W2VOFF:[0-9]+]]
// CHECK: %[[B2V:.*]] = rt.param "b2.velocity" at [[B2VOFF:[0-9]+]]
// CHECK: %[[LR:.*]] = rt.kernel "lr_schedule"(%[[STEP]])
// CHECK: %[[UW2:.*]]:2 = rt.kernel "momentum_update"(%[[LR]], %[[STEP]], %[[W2]], %{{.*}}, %[[W2V]]) at {{\[}}[[W2OFF]], [[W2VOFF]]]
// CHECK: %[[UB2:.*]]:2 = rt.kernel "momentum_update"(%[[LR]], %[[STEP]], %[[B2]], %{{.*}}, %[[B2V]]) at {{\[}}[[B2OFF]], [[B2VOFF]]]
// CHECK: %[[UW1:.*]]:2 = rt.kernel "momentum_update"(%[[LR]], %[[STEP]], %[[W1]], %{{.*}}, %[[W1V]]) at {{\[}}[[W1OFF]], [[W1VOFF]]]
// CHECK: %[[UB1:.*]]:2 = rt.kernel "momentum_update"(%[[LR]], %[[STEP]], %[[B1]], %{{.*}}, %[[B1V]]) at {{\[}}[[B1OFF]], [[B1VOFF]]]
// CHECK: %[[NSTEP:.*]] = rt.kernel "add"(%[[STEP]], %{{.*}}) at {{\[}}[[STEPOFF]]]
// CHECK: rt.output "loss"
// CHECK: rt.output "logits"
// CHECK-NEXT: rt.update %[[W1]], %[[UW1]]#0 : tensor<5x3xf32>, tensor<5x3xf32>
// CHECK-NEXT: rt.update %[[W1V]], %[[UW1]]#1
// CHECK-NEXT: rt.update %[[B1]], %[[UB1]]#0
// CHECK-NEXT: rt.update %[[B1V]], %[[UB1]]#1
// CHECK-NEXT: rt.update %[[W2]], %[[UW2]]#0
// CHECK-NEXT: rt.update %[[W2V]], %[[UW2]]#1
// CHECK-NEXT: rt.update %[[B2]], %[[UB2]]#0
// CHECK-NEXT: rt.update %[[B2V]], %[[UB2]]#1
// CHECK-NEXT: rt.update %[[STEP]], %[[NSTEP]] : tensor<i64>, tensor<i64>
// CHECK-NEXT: return
// Without memory reuse every value has bytes of its own: no update is
// planned over its parameter.
// NOREUSE-LABEL: func.func @train_step()
// NOREUSE: rt.param "w2" at [[W2OFF:[0-9]+]]
// NOREUSE: rt.param "ampc.step" at [[STEPOFF:[0-9]+]]
// NOREUSE: rt.param "w2.velocity" at [[W2VOFF:[0-9]+]]
// NOREUSE: rt.kernel "momentum_update"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) at
// NOREUSE-NOT: {{[[ ]}}[[W2OFF]]{{[],]}}
// NOREUSE-NOT: {{[[ ]}}[[W2VOFF]]{{[],]}}
// NOREUSE-SAME: -> (tensor<2x5xf32>, tensor<2x5xf32>)
// NOREUSE: rt.kernel "add"
// NOREUSE-NOT: {{[[ ]}}[[STEPOFF]]{{[],]}}
// NOREUSE-SAME: -> tensor<i64>
// NOREUSE: rt.update
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<5x3xf32>, graph.trainable = true},
                   %b1: tensor<5xf32> {graph.name = "b1", graph.init = dense<0.0> : tensor<5xf32>, graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.name = "w2", graph.init = dense<0.25> : tensor<2x5xf32>, graph.trainable = true},
                   %b2: tensor<2xf32> {graph.name = "b2", graph.init = dense<0.0> : tensor<2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "logits"}) {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %r = graph.relu %h : tensor<4x5xf32>
  %y = graph.gemm %r, %w2, %b2 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %loss, %lp = graph.softmax_cross_entropy %y, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>)
  return %loss, %y : tensor<f32>, tensor<4x2xf32>
}

// -----

// The running statistics are written by batch_norm_training, which reads
// them in the same kernel and is not elementwise: their new values get
// bytes of their own (the runtime copies them at the end of the run).
// CHECK-LABEL: func.func @train_step()
// CHECK: %[[M:.*]] = rt.param "bn.mean" at [[MOFF:[0-9]+]]
// CHECK: %[[V:.*]] = rt.param "bn.var" at [[VOFF:[0-9]+]]
// CHECK: %[[BN:.*]]:5 = rt.kernel "batch_norm_training"(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]], %[[V]]) at
// CHECK-NOT: {{[[ ]}}[[MOFF]]{{[],]}}
// CHECK-NOT: {{[[ ]}}[[VOFF]]{{[],]}}
// CHECK-SAME: :
// CHECK: rt.update %[[M]], %[[BN]]#1
// CHECK-NEXT: rt.update %[[V]], %[[BN]]#2
func.func @forward(%x: tensor<2x3x2x2xf32> {graph.name = "x"},
                   %s: tensor<3xf32> {graph.name = "bn.scale", graph.init = dense<1.0> : tensor<3xf32>, graph.trainable = true},
                   %b: tensor<3xf32> {graph.name = "bn.bias", graph.init = dense<0.0> : tensor<3xf32>, graph.trainable = true},
                   %m: tensor<3xf32> {graph.name = "bn.mean", graph.init = dense<0.0> : tensor<3xf32>},
                   %v: tensor<3xf32> {graph.name = "bn.var", graph.init = dense<1.0> : tensor<3xf32>})
    -> (tensor<f32> {graph.name = "loss"}) {
  %y:5 = graph.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = graph.reduce_sum %y#0 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x2x2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

//--- by-hand.mlir

// w is read after its update: the new value cannot overwrite it.
// HAND-LABEL: func.func @read_after_update()
// HAND: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// HAND: %[[N:.*]] = rt.kernel "sgd_update"(%{{.*}}, %[[W]], %{{.*}}) at
// HAND-NOT: {{\[}}[[WOFF]]]
// HAND-SAME: :
// HAND: rt.kernel "add"(%[[W]], %{{.*}})
// HAND: rt.update %[[W]], %[[N]]
func.func @read_after_update(%x: tensor<4xf32> {graph.name = "x"},
    %w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>})
    -> (tensor<4xf32> {graph.name = "y"}, tensor<4xf32> {graph.name = "w", graph.updates = 1 : i64}) {
  %lr = graph.constant dense<0.5> : tensor<f32>
  %g = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %n = graph.sgd_update %lr, %w, %g : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %y = graph.add %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y, %n : tensor<4xf32>, tensor<4xf32>
}

// -----

// A fused elementwise kernel that reads w for the last time writes the new
// w over it (element i is read before it is written).
// HAND-LABEL: func.func @fused_update()
// HAND: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// HAND: %[[N:.*]] = rt.kernel "fused"({{.*}}%[[W]]{{.*}}) at {{\[}}[[WOFF]]]
// HAND: rt.update %[[W]], %[[N]]
func.func @fused_update(%x: tensor<4xf32> {graph.name = "x"},
    %w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>})
    -> (tensor<4xf32> {graph.name = "w", graph.updates = 1 : i64}) {
  %lr = graph.constant dense<0.5> : tensor<f32>
  %d = graph.mul %x, %lr : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  %n = graph.sub %w, %d : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// Any kernel may write the new value once w's last read is done.
// HAND-LABEL: func.func @after_last_read()
// HAND: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// HAND: rt.kernel "matmul"(%{{.*}}, %[[W]])
// HAND: %[[N:.*]] = rt.kernel "matmul"(%{{.*}}, %{{.*}}) at {{\[}}[[WOFF]]]
// HAND: rt.update %[[W]], %[[N]]
func.func @after_last_read(%x: tensor<4x4xf32> {graph.name = "x"},
    %w: tensor<4x4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4x4xf32>})
    -> (tensor<4x4xf32> {graph.name = "y"}, tensor<4x4xf32> {graph.name = "w", graph.updates = 1 : i64}) {
  %y = graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  %n = graph.matmul %x, %x : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %y, %n : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// A matmul reads every element of w for every output element: its result
// never overwrites w even when that is w's last read.
// HAND-LABEL: func.func @matmul_reads_param()
// HAND: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// HAND: %[[N:.*]] = rt.kernel "matmul"(%{{.*}}, %[[W]]) at
// HAND-NOT: {{\[}}[[WOFF]]]
// HAND-SAME: :
// HAND: rt.update %[[W]], %[[N]]
func.func @matmul_reads_param(%x: tensor<4x4xf32> {graph.name = "x"},
    %w: tensor<4x4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4x4xf32>})
    -> (tensor<4x4xf32> {graph.name = "w", graph.updates = 1 : i64}) {
  %n = graph.matmul %x, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
  return %n : tensor<4x4xf32>
}

//--- invalid.mlir

// expected-error @+1 {{'func.func' op result 0 updates argument 0, which is not a parameter (an argument with graph.init)}}
func.func @train_step(%x: tensor<4xf32> {graph.name = "x"})
    -> (tensor<4xf32> {graph.name = "x", graph.updates = 0 : i64}) {
  %n = graph.relu %x : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

// expected-error @+1 {{'func.func' op result 0 updates argument 3, which is not a parameter (an argument with graph.init)}}
func.func @train_step(%w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>})
    -> (tensor<4xf32> {graph.name = "w", graph.updates = 3 : i64}) {
  %n = graph.relu %w : tensor<4xf32>
  return %n : tensor<4xf32>
}

// -----

func.func @train_step(%w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>})
    -> (tensor<4xf16> {graph.name = "w", graph.updates = 0 : i64}) {
  %n = graph.cast %w : tensor<4xf32> to tensor<4xf16>
  // expected-error @+1 {{'rt.update' op gives parameter 'w' of type 'tensor<4xf32>' a value of type 'tensor<4xf16>'}}
  return %n : tensor<4xf16>
}

//--- old-value.mlir

// State that keeps the previous value of a parameter (w.prev = w, as a
// lookahead or EMA optimizer would): every update takes the value the step
// computed, so w.prev gets w as it was before this step. w's old value is
// read at the end of the run, so its new value must not be planned over it.
// OLD-LABEL: func.func @train_step()
// OLD: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// OLD: %[[P:.*]] = rt.param "w.prev"
// OLD: %[[N:.*]] = rt.kernel "add"(%[[W]], %{{.*}}) at
// OLD-NOT: {{\[}}[[WOFF]]]
// OLD-SAME: :
// OLD-DAG: rt.update %[[W]], %[[N]]
// OLD-DAG: rt.update %[[P]], %[[W]]
func.func @train_step(%x: tensor<4xf32> {graph.name = "x"},
    %w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>},
    %prev: tensor<4xf32> {graph.name = "w.prev", graph.init = dense<0.0> : tensor<4xf32>})
    -> (tensor<4xf32> {graph.name = "w", graph.updates = 1 : i64}, tensor<4xf32> {graph.name = "w.prev", graph.updates = 2 : i64}) {
  %n = graph.add %w, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %n, %w : tensor<4xf32>, tensor<4xf32>
}
