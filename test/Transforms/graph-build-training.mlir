// graph-build-training turns @forward into @train_step: backward graph,
// one optimizer update per trained parameter placed right after the
// parameter's last use, state arguments with their initial values, and
// results tied to the arguments they replace. Each part below is compiled
// with its own options (split-file); the models part holds several modules
// (-split-input-file).

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/mlp.mlir -graph-build-training=optimizer=momentum | FileCheck %s --check-prefix=MLP --implicit-check-not='-> tensor<4x3xf32>'
// RUN: amp-opt %t/mlp.mlir -graph-build-training=freeze=w2,b2 | FileCheck %s --check-prefix=LAST --implicit-check-not='-> tensor<4x3xf32>'
// RUN: amp-opt %t/mlp.mlir -graph-build-training=freeze=w1,b1 | FileCheck %s --check-prefix=FIRST --implicit-check-not='-> tensor<4x3xf32>'
// RUN: amp-opt %t/models.mlir -split-input-file -graph-build-training=optimizer=momentum | FileCheck %s
// RUN: amp-opt %t/shared.mlir -graph-build-training="optimizer=momentum freeze=frozen" | FileCheck %s --check-prefix=FREEZE
// RUN: amp-opt %t/shared.mlir -graph-build-training=optimizer=momentum | FileCheck %s --check-prefix=NOFREEZE
// RUN: amp-opt %t/losses.mlir -graph-build-training=loss=l1 | FileCheck %s --check-prefix=L1
// RUN: amp-opt %t/losses.mlir -graph-build-training=loss=mse | FileCheck %s --check-prefix=MSE

//--- mlp.mlir

// A 2-layer MLP. The function is renamed, `ampc.step` and one velocity per
// parameter are appended as state (zeros, graph.state), and the learning
// rate of the step is computed first. The input batch `x` needs no
// gradient: no op produces one (the implicit check-not: only a gradient of
// x would be a tensor<4x3xf32> result).
// MLP-LABEL: func.func @train_step(
// MLP-SAME: %[[X:arg[0-9]+]]: tensor<4x3xf32> {graph.name = "x"}
// MLP-SAME: %[[LAB:arg[0-9]+]]: tensor<4xi64> {graph.name = "labels"}
// MLP-SAME: %[[W1:arg[0-9]+]]: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>, graph.name = "w1", graph.trainable = true}
// MLP-SAME: %[[B1:arg[0-9]+]]: tensor<5xf32> {graph.init = dense<0.000000e+00> : tensor<5xf32>, graph.name = "b1", graph.trainable = true}
// MLP-SAME: %[[W2:arg[0-9]+]]: tensor<2x5xf32> {graph.init = dense<2.500000e-01> : tensor<2x5xf32>, graph.name = "w2", graph.trainable = true}
// MLP-SAME: %[[B2:arg[0-9]+]]: tensor<2xf32> {graph.init = dense<0.000000e+00> : tensor<2xf32>, graph.name = "b2", graph.trainable = true}
// MLP-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}
// MLP-SAME: %[[W1V:arg[0-9]+]]: tensor<5x3xf32> {graph.init = dense<0.000000e+00> : tensor<5x3xf32>, graph.name = "w1.velocity", graph.state}
// MLP-SAME: %[[B1V:arg[0-9]+]]: tensor<5xf32> {graph.init = dense<0.000000e+00> : tensor<5xf32>, graph.name = "b1.velocity", graph.state}
// MLP-SAME: %[[W2V:arg[0-9]+]]: tensor<2x5xf32> {graph.init = dense<0.000000e+00> : tensor<2x5xf32>, graph.name = "w2.velocity", graph.state}
// MLP-SAME: %[[B2V:arg[0-9]+]]: tensor<2xf32> {graph.init = dense<0.000000e+00> : tensor<2xf32>, graph.name = "b2.velocity", graph.state})
// The forward results come first, then each new value tied to the
// argument (by index) it replaces.
// MLP-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "logits"},
// MLP-SAME: tensor<5x3xf32> {graph.name = "w1", graph.updates = 2 : i64}, tensor<5x3xf32> {graph.name = "w1.velocity", graph.updates = 7 : i64},
// MLP-SAME: tensor<5xf32> {graph.name = "b1", graph.updates = 3 : i64}, tensor<5xf32> {graph.name = "b1.velocity", graph.updates = 8 : i64},
// MLP-SAME: tensor<2x5xf32> {graph.name = "w2", graph.updates = 4 : i64}, tensor<2x5xf32> {graph.name = "w2.velocity", graph.updates = 9 : i64},
// MLP-SAME: tensor<2xf32> {graph.name = "b2", graph.updates = 5 : i64}, tensor<2xf32> {graph.name = "b2.velocity", graph.updates = 10 : i64},
// MLP-SAME: tensor<i64> {graph.name = "ampc.step", graph.updates = 6 : i64})
// MLP-SAME: attributes {graph.loss = "loss"}
// MLP-NEXT: %[[LR:.*]] = graph.lr_schedule %[[STEP]] {base_lr = 1.000000e-02 : f64} : (tensor<i64>) -> tensor<f32>
// MLP-NEXT: %[[H:.*]] = graph.gemm %[[X]], %[[W1]], %[[B1]] {trans_b = true}
// MLP-NEXT: %[[R:.*]] = graph.relu %[[H]]
// MLP-NEXT: %[[Y:.*]] = graph.gemm %[[R]], %[[W2]], %[[B2]] {trans_b = true}
// MLP-NEXT: %[[LOSS:.*]], %[[LP:.*]] = graph.softmax_cross_entropy %[[Y]], %[[LAB]]
// The seed gradient of the loss is 1, marked for amp-loss-scale.
// MLP-NEXT: %[[SEED:.*]] = graph.constant {graph.loss_seed} dense<1.000000e+00> : tensor<f32>
// MLP-NEXT: %[[DY:.*]] = graph.softmax_cross_entropy_grad %[[SEED]], %[[LP]], %[[LAB]]
// Y = R * W2^T: dR = dY * W2 and dW2 = dY^T * R, transposes in the flags.
// MLP-NEXT: %[[DR:.*]] = graph.gemm %[[DY]], %[[W2]] {beta = 0.000000e+00 : f64} : (tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<4x5xf32>
// MLP-NEXT: %[[DW2:.*]] = graph.gemm %[[DY]], %[[R]] {beta = 0.000000e+00 : f64, trans_a = true} : (tensor<4x2xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
// w2's last use is dR's gemm and its gradient is ready: it is updated
// here, before any backward op of the first layer.
// MLP-NEXT: %[[NW2:.*]], %[[NW2V:.*]] = graph.momentum_update %[[LR]], %[[STEP]], %[[W2]], %[[DW2]], %[[W2V]] {alpha = 9.000000e-01 : f64, beta = 1.000000e+00 : f64}
// MLP-NEXT: %[[DB2S:.*]] = graph.reduce_sum %[[DY]] {axes = array<i64: 0>}
// MLP-NEXT: %[[DB2:.*]] = graph.reshape %[[DB2S]] : tensor<1x2xf32> to tensor<2xf32>
// MLP-NEXT: %[[NB2:.*]], %[[NB2V:.*]] = graph.momentum_update %[[LR]], %[[STEP]], %[[B2]], %[[DB2]], %[[B2V]]
// relu's gradient reads relu's output R (R > 0 exactly where H > 0), not
// the pre-activation H, so H dies in the forward pass.
// MLP-NEXT: %[[DH:.*]] = graph.relu_grad %[[DR]], %[[R]] : tensor<4x5xf32>
// MLP-NEXT: %[[DW1:.*]] = graph.gemm %[[DH]], %[[X]] {beta = 0.000000e+00 : f64, trans_a = true} : (tensor<4x5xf32>, tensor<4x3xf32>) -> tensor<5x3xf32>
// MLP-NEXT: %[[NW1:.*]], %[[NW1V:.*]] = graph.momentum_update %[[LR]], %[[STEP]], %[[W1]], %[[DW1]], %[[W1V]]
// MLP-NEXT: %[[DB1S:.*]] = graph.reduce_sum %[[DH]] {axes = array<i64: 0>}
// MLP-NEXT: %[[DB1:.*]] = graph.reshape %[[DB1S]] : tensor<1x5xf32> to tensor<5xf32>
// MLP-NEXT: %[[NB1:.*]], %[[NB1V:.*]] = graph.momentum_update %[[LR]], %[[STEP]], %[[B1]], %[[DB1]], %[[B1V]]
// MLP-NEXT: %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
// MLP-NEXT: %[[NSTEP:.*]] = graph.add %[[STEP]], %[[ONE]]
// MLP-NEXT: return %[[LOSS]], %[[Y]], %[[NW1]], %[[NW1V]], %[[NB1]], %[[NB1V]], %[[NW2]], %[[NW2V]], %[[NB2]], %[[NB2V]], %[[NSTEP]] :
// Freezing the last layer still propagates the gradient through it to the
// first layer (dR = dY * W2), but computes no dW2 and updates nothing there.
// LAST-LABEL: func.func @train_step(
// LAST-NOT: velocity
// LAST-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "logits"}, tensor<5x3xf32> {graph.name = "w1", graph.updates = 2 : i64}, tensor<5xf32> {graph.name = "b1", graph.updates = 3 : i64}, tensor<i64> {graph.name = "ampc.step", graph.updates = 6 : i64})
// LAST: graph.softmax_cross_entropy_grad
// LAST-NOT: -> tensor<2x5xf32>
// LAST: %[[DR:.*]] = graph.gemm %{{.*}}, %arg4 {beta = 0.000000e+00 : f64} : (tensor<4x2xf32>, tensor<2x5xf32>) -> tensor<4x5xf32>
// LAST-NEXT: graph.relu_grad %[[DR]]
// LAST-NOT: -> tensor<2x5xf32>
// LAST: graph.sgd_update %{{.*}}, %arg2,
// LAST: graph.sgd_update %{{.*}}, %arg3,
// LAST-NOT: _update
// LAST: return
// Freezing the first layer stops the backward pass at the second: no
// relu_grad, no gradient into the first layer.
// FIRST-LABEL: func.func @train_step(
// FIRST-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "logits"}, tensor<2x5xf32> {graph.name = "w2", graph.updates = 4 : i64}, tensor<2xf32> {graph.name = "b2", graph.updates = 5 : i64}, tensor<i64> {graph.name = "ampc.step", graph.updates = 6 : i64})
// FIRST: graph.softmax_cross_entropy_grad
// FIRST-NOT: -> tensor<4x5xf32>
// FIRST: graph.sgd_update %{{.*}}, %arg4,
// FIRST-NOT: -> tensor<4x5xf32>
// FIRST: graph.sgd_update %{{.*}}, %arg5,
// FIRST-NOT: relu_grad
// FIRST: return
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

//--- models.mlir
// Training-mode batch normalization: scale and bias are trained from
// batch_norm_grad (fed by the forward op's batch statistics); the running
// statistics are no trained parameters (no velocity) but state the forward
// op updates, so its new values are results tied to their arguments.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<2x3x2x2xf32> {graph.name = "x"}
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<1.000000e+00> : tensor<3xf32>, graph.name = "bn.scale", graph.trainable = true}
// CHECK-SAME: %[[B:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.bias", graph.trainable = true}
// CHECK-SAME: %[[M:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.mean"}
// CHECK-SAME: %[[V:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<1.000000e+00> : tensor<3xf32>, graph.name = "bn.var"}
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}
// CHECK-SAME: %[[SV:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.scale.velocity", graph.state}
// CHECK-SAME: %[[BV:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.bias.velocity", graph.state})
// CHECK-SAME: -> (tensor<f32> {graph.name = "loss"},
// CHECK-SAME: tensor<3xf32> {graph.name = "bn.scale", graph.updates = 1 : i64}, tensor<3xf32> {graph.name = "bn.scale.velocity", graph.updates = 6 : i64},
// CHECK-SAME: tensor<3xf32> {graph.name = "bn.bias", graph.updates = 2 : i64}, tensor<3xf32> {graph.name = "bn.bias.velocity", graph.updates = 7 : i64},
// CHECK-SAME: tensor<3xf32> {graph.name = "bn.mean", graph.updates = 3 : i64}, tensor<3xf32> {graph.name = "bn.var", graph.updates = 4 : i64},
// CHECK-SAME: tensor<i64> {graph.name = "ampc.step", graph.updates = 5 : i64})
// CHECK: %[[Y:[a-z_0-9]+]], %[[NM:[a-z_0-9]+]], %[[NV:[a-z_0-9]+]], %[[BM:[a-z_0-9]+]], %[[BIS:[a-z_0-9]+]] = graph.batch_norm_training %[[X]], %[[S]], %[[B]], %[[M]], %[[V]]
// CHECK: %{{.*}}, %[[DS:.*]], %[[DB:.*]] = graph.batch_norm_grad %{{.*}}, %[[X]], %[[S]], %[[BM]], %[[BIS]]
// CHECK-DAG: %[[NS:[a-z_0-9]+]], %[[NSV:[a-z_0-9]+]] = graph.momentum_update %{{.*}}, %[[STEP]], %[[S]], %[[DS]], %[[SV]]
// CHECK-DAG: %[[NB:[a-z_0-9]+]], %[[NBV:[a-z_0-9]+]] = graph.momentum_update %{{.*}}, %[[STEP]], %[[B]], %[[DB]], %[[BV]]
// CHECK: %[[NSTEP:.*]] = graph.add %[[STEP]]
// CHECK-NEXT: return %{{.*}}, %[[NS]], %[[NSV]], %[[NB]], %[[NBV]], %[[NM]], %[[NV]], %[[NSTEP]] :
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

// -----

// No parameter is trained (scale and bias are not trainable), but the
// running statistics of the batch norm are state that the step updates
// (re-estimating the statistics of a frozen model): the step is built, with
// no gradient, learning rate or update, and it still counts.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:arg[0-9]+]]: tensor<2x3x2x2xf32> {graph.name = "x"}
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state})
// CHECK-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<3xf32> {graph.name = "bn.mean", graph.updates = 3 : i64}, tensor<3xf32> {graph.name = "bn.var", graph.updates = 4 : i64}, tensor<i64> {graph.name = "ampc.step", graph.updates = 5 : i64})
// CHECK-NEXT: %[[Y:[a-z_0-9]+]], %[[NM:[a-z_0-9]+]], %[[NV:[a-z_0-9]+]], %{{.*}}, %{{.*}} = graph.batch_norm_training %[[X]]
// CHECK-NEXT: %[[L:.*]] = graph.reduce_sum %[[Y]]
// CHECK-NEXT: %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[N:.*]] = graph.add %[[STEP]], %[[ONE]]
// CHECK-NEXT: return %[[L]], %[[NM]], %[[NV]], %[[N]] :
func.func @forward(%x: tensor<2x3x2x2xf32> {graph.name = "x"},
                   %s: tensor<3xf32> {graph.name = "bn.scale", graph.init = dense<1.0> : tensor<3xf32>, graph.trainable = false},
                   %b: tensor<3xf32> {graph.name = "bn.bias", graph.init = dense<0.0> : tensor<3xf32>, graph.trainable = false},
                   %m: tensor<3xf32> {graph.name = "bn.mean", graph.init = dense<0.0> : tensor<3xf32>},
                   %v: tensor<3xf32> {graph.name = "bn.var", graph.init = dense<1.0> : tensor<3xf32>})
    -> (tensor<f32> {graph.name = "loss"}) {
  %y:5 = graph.batch_norm_training %x, %s, %b, %m, %v {epsilon = 1.0e-5 : f64, momentum = 0.9 : f64} : (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<2x3x2x2xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = graph.reduce_sum %y#0 {axes = array<i64: 0, 1, 2, 3>, keepdims = false} : (tensor<2x3x2x2xf32>) -> tensor<f32>
  return %r : tensor<f32>
}

//--- shared.mlir

// `w` is used by two matmuls: its gradient is the sum of both. `unused`
// does not reach the loss and `frozen` is frozen by the option: neither gets
// an update or state.
// FREEZE-LABEL: func.func @train_step(
// FREEZE-SAME: %[[X:arg[0-9]+]]: tensor<4x3xf32>
// FREEZE-SAME: %[[W:arg[0-9]+]]: tensor<3x3xf32> {graph.init = dense<5.000000e-01> : tensor<3x3xf32>, graph.name = "w", graph.trainable = true}
// FREEZE-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}
// FREEZE-SAME: %[[WV:arg[0-9]+]]: tensor<3x3xf32> {graph.init = dense<0.000000e+00> : tensor<3x3xf32>, graph.name = "w.velocity", graph.state})
// FREEZE-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<3x3xf32> {graph.name = "w", graph.updates = 1 : i64}, tensor<3x3xf32> {graph.name = "w.velocity", graph.updates = 5 : i64}, tensor<i64> {graph.name = "ampc.step", graph.updates = 4 : i64})
// FREEZE: %[[H:.*]] = graph.matmul %[[X]], %[[W]]
// FREEZE: graph.matmul %[[H]], %[[W]]
// Both uses contribute a gradient; they are added, and the sum updates w.
// FREEZE: %[[GA:.*]] = graph.matmul {{.*}} -> tensor<3x3xf32>
// FREEZE: %[[GB:.*]] = graph.matmul {{.*}} -> tensor<3x3xf32>
// FREEZE-NEXT: %[[G:.*]] = graph.add %[[GA]], %[[GB]] : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3x3xf32>
// FREEZE-NEXT: graph.momentum_update %{{.*}}, %[[STEP]], %[[W]], %[[G]], %[[WV]]
// FREEZE-NOT: _update
// FREEZE: return
// Unfrozen, `frozen` (a bias broadcast over the batch) is trained from the
// batch-summed gradient; `unused` still is not.
// NOFREEZE-LABEL: func.func @train_step(
// NOFREEZE-SAME: %[[F:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<2.000000e+00> : tensor<3xf32>, graph.name = "frozen", graph.trainable = true}
// NOFREEZE-SAME: graph.name = "w.velocity", graph.state
// NOFREEZE-SAME: %[[FV:arg[0-9]+]]: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "frozen.velocity", graph.state})
// NOFREEZE-NOT: unused.velocity
// NOFREEZE-SAME: tensor<3xf32> {graph.name = "frozen", graph.updates = 3 : i64}
// NOFREEZE-NOT: graph.name = "unused", graph.updates
// NOFREEZE: %[[DFS:.*]] = graph.reduce_sum {{.*}} {axes = array<i64: 0>}
// NOFREEZE-NEXT: %[[DF:.*]] = graph.reshape %[[DFS]] : tensor<1x3xf32> to tensor<3xf32>
// NOFREEZE-NEXT: graph.momentum_update %{{.*}}, %{{.*}}, %[[F]], %[[DF]], %[[FV]]
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x3xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x3xf32>, graph.trainable = true},
                   %unused: tensor<3xf32> {graph.name = "unused", graph.init = dense<1.0> : tensor<3xf32>, graph.trainable = true},
                   %frozen: tensor<3xf32> {graph.name = "frozen", graph.init = dense<2.0> : tensor<3xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %1 = graph.matmul %0, %w : (tensor<4x3xf32>, tensor<3x3xf32>) -> tensor<4x3xf32>
  %2 = graph.add %1, %frozen : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  %3 = graph.reduce_mean %2 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x3xf32>) -> tensor<f32>
  return %3 : tensor<f32>
}

//--- losses.mlir

// Two scalar outputs and none named 'loss': the option picks one, and only
// its backward graph is built (|h| differentiates to abs_grad, h * h to
// two products added).
// L1-LABEL: func.func @train_step(
// L1-SAME: -> (tensor<f32> {graph.name = "mse"}, tensor<f32> {graph.name = "l1"}, tensor<3x2xf32> {graph.name = "w", graph.updates = 1 : i64}
// L1-SAME: attributes {graph.loss = "l1"}
// L1: %[[H:.*]] = graph.matmul
// L1: graph.reduce_sum
// L1-NOT: graph.mul
// L1: %[[G:.*]] = graph.abs_grad %{{.*}}, %[[H]]
// L1-NOT: graph.mul
// L1: graph.matmul %{{.*}}, %[[G]]
// L1-NEXT: graph.sgd_update
// MSE-LABEL: func.func @train_step(
// MSE-SAME: attributes {graph.loss = "mse"}
// MSE: %[[H:.*]] = graph.matmul
// MSE: graph.constant {graph.loss_seed} dense<1.000000e+00> : tensor<f32>
// MSE-NOT: graph.abs_grad
// MSE: %[[P:.*]] = graph.mul %{{.*}}, %[[H]]
// MSE-NEXT: %[[Q:.*]] = graph.mul %{{.*}}, %[[H]]
// MSE-NEXT: %[[G:.*]] = graph.add %[[Q]], %[[P]]
// MSE-NOT: graph.abs_grad
// MSE: graph.matmul %{{.*}}, %[[G]]
// MSE-NEXT: graph.sgd_update
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "mse"}, tensor<f32> {graph.name = "l1"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = graph.mul %0, %0 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = graph.reduce_mean %1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  %3 = graph.abs %0 : tensor<4x2xf32>
  %4 = graph.reduce_sum %3 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %2, %4 : tensor<f32>, tensor<f32>
}
