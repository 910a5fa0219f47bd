// Gradient accumulation (graph-build-training accumulate=N): each step adds
// its gradient to the state <p>.grad_sum, the state ampc.micro_step counts
// the steps since the last update, and only every N-th step updates, with
// the mean of the sums; the other steps skip the update and leave ampc.step
// as it was. amp-loss-scale after it checks once per update and moves the
// scale only at updates.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/f32.mlir -graph-build-training=accumulate=3 | FileCheck %t/f32.mlir
// accumulate=1 is the plain step, with no accumulation state or skip.
// RUN: amp-opt %t/f32.mlir -graph-build-training > %t/plain
// RUN: amp-opt %t/f32.mlir -graph-build-training=accumulate=1 > %t/one
// RUN: diff %t/plain %t/one
// RUN: FileCheck %t/f32.mlir --check-prefix=PLAIN --input-file=%t/one
// RUN: amp-opt %t/f16.mlir -graph-build-training="optimizer=momentum accumulate=3" -amp-loss-scale=mode=dynamic > %t/scaled
// RUN: FileCheck %t/f16.mlir --input-file=%t/scaled
// One check per update: a single amp.check_finite in the step.
// RUN: grep -c amp.check_finite %t/scaled | FileCheck %t/f16.mlir --check-prefix=COUNT

//--- f32.mlir
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:arg1]]: tensor<3x5xf32> {{{[^}]*}}graph.name = "w"
// CHECK-SAME: %[[V:arg2]]: tensor<5x2xf32> {{{[^}]*}}graph.name = "v"
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}
// CHECK-SAME: %arg[[MI:[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.micro_step", graph.state}
// CHECK-SAME: %arg[[WSI:[0-9]+]]: tensor<3x5xf32> {graph.init = dense<0.000000e+00> : tensor<3x5xf32>, graph.name = "w.grad_sum", graph.state}
// CHECK-SAME: %arg[[VSI:[0-9]+]]: tensor<5x2xf32> {graph.init = dense<0.000000e+00> : tensor<5x2xf32>, graph.name = "v.grad_sum", graph.state})
// CHECK-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<i64> {graph.name = "ampc.micro_step", graph.updates = [[MI]] : i64}, tensor<3x5xf32> {graph.name = "w.grad_sum", graph.updates = [[WSI]] : i64}, tensor<3x5xf32> {graph.name = "w", graph.updates = 1 : i64}, tensor<5x2xf32> {graph.name = "v.grad_sum", graph.updates = [[VSI]] : i64}, tensor<5x2xf32> {graph.name = "v", graph.updates = 2 : i64}, tensor<i64> {graph.name = "ampc.step", graph.updates = 3 : i64})
// The host loop reads N from the step (the Program's StepInfo.accumulate).
// CHECK-SAME: attributes {{{.*}}graph.accumulate_steps = 3 : i64
// CHECK: %[[LR:.*]] = graph.lr_schedule %[[STEP]]
// The micro-step counter: next = micro + 1; between updates while N - next
// is not 0; it restarts at 0 on the update.
// CHECK: %[[ONE:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[NEXT:.*]] = graph.add %arg[[MI]], %[[ONE]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[N:.*]] = graph.constant dense<3> : tensor<i64>
// CHECK-NEXT: %[[LEFT:.*]] = graph.sub %[[N]], %[[NEXT]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[BETWEEN:.*]] = graph.cast %[[LEFT]] : tensor<i64> to tensor<i1>
// CHECK-NEXT: %[[ZERO:.*]] = graph.constant dense<0> : tensor<i64>
// CHECK-NEXT: %[[NMICRO:.*]] = graph.where %[[BETWEEN]], %[[NEXT]], %[[ZERO]] : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// The two weight gradients of this step.
// CHECK: %[[GV:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<5x4xf32>, tensor<4x2xf32>) -> tensor<5x2xf32>
// CHECK: %[[GW:.*]] = graph.matmul %{{.*}}, %{{.*}} : (tensor<3x4xf32>, tensor<4x5xf32>) -> tensor<3x5xf32>
// Each is added to its sum; the sum restarts at 0 after an update; the
// update reads sum / 3 and is skipped between updates.
// CHECK-NEXT: %[[TW:.*]] = graph.add %arg[[WSI]], %[[GW]] : (tensor<3x5xf32>, tensor<3x5xf32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[ZW:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NWSUM:.*]] = graph.where %[[BETWEEN]], %[[TW]], %[[ZW]] : (tensor<i1>, tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[THIRDW:.*]] = graph.constant dense<0.333333343> : tensor<f32>
// CHECK-NEXT: %[[MW:.*]] = graph.mul %[[TW]], %[[THIRDW]] : (tensor<3x5xf32>, tensor<f32>) -> tensor<3x5xf32>
// CHECK-NEXT: %[[UW:.*]] = graph.sgd_update %[[LR]], %[[W]], %[[MW]] skip %[[BETWEEN]] :
// CHECK-NEXT: %[[TV:.*]] = graph.add %arg[[VSI]], %[[GV]] : (tensor<5x2xf32>, tensor<5x2xf32>) -> tensor<5x2xf32>
// CHECK-NEXT: %[[ZV:.*]] = graph.constant dense<0.000000e+00> : tensor<f32>
// CHECK-NEXT: %[[NVSUM:.*]] = graph.where %[[BETWEEN]], %[[TV]], %[[ZV]] : (tensor<i1>, tensor<5x2xf32>, tensor<f32>) -> tensor<5x2xf32>
// CHECK-NEXT: %[[THIRDV:.*]] = graph.constant dense<0.333333343> : tensor<f32>
// CHECK-NEXT: %[[MV:.*]] = graph.mul %[[TV]], %[[THIRDV]] : (tensor<5x2xf32>, tensor<f32>) -> tensor<5x2xf32>
// CHECK-NEXT: %[[UV:.*]] = graph.sgd_update %[[LR]], %[[V]], %[[MV]] skip %[[BETWEEN]] :
// ampc.step counts updates: it stays between them.
// CHECK-NEXT: %[[ONES:.*]] = graph.constant dense<1> : tensor<i64>
// CHECK-NEXT: %[[INC:.*]] = graph.add %[[STEP]], %[[ONES]] : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: %[[NSTEP:.*]] = graph.where %[[BETWEEN]], %[[STEP]], %[[INC]] : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK-NEXT: return %{{.*}}, %[[NMICRO]], %[[NWSUM]], %[[UW]], %[[NVSUM]], %[[UV]], %[[NSTEP]] :

// PLAIN-LABEL: func.func @train_step(
// PLAIN-NOT: micro_step
// PLAIN-NOT: accumulate_steps
// PLAIN-NOT: grad_sum
// PLAIN-NOT: skip
// ONE: return
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x5xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x5xf32>, graph.trainable = true},
                   %v: tensor<5x2xf32> {graph.name = "v", graph.init = dense<0.25> : tensor<5x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %h = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %r = graph.relu %h : tensor<4x5xf32>
  %y = graph.matmul %r, %v : (tensor<4x5xf32>, tensor<5x2xf32>) -> tensor<4x2xf32>
  %sq = graph.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %sq {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

//--- f16.mlir
// A linear layer in f16 as amp-auto-cast leaves it (amp-loss-scale.mlir's),
// accumulated over 3 steps and loss-scaled dynamically.
// COUNT: {{^}}1{{$}}
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[W:arg1]]: tensor<8x2xf32>
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {{{[^}]*}}graph.name = "ampc.step"
// CHECK-SAME: %[[MICRO:arg[0-9]+]]: tensor<i64> {{{[^}]*}}graph.name = "ampc.micro_step"
// CHECK-SAME: %[[VEL:arg[0-9]+]]: tensor<8x2xf32> {{{[^}]*}}graph.name = "w.velocity"
// CHECK-SAME: %[[SUM:arg[0-9]+]]: tensor<8x2xf32> {{{[^}]*}}graph.name = "w.grad_sum"
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<f32> {{{[^}]*}}graph.name = "loss_scale"
// CHECK-SAME: %[[G:arg[0-9]+]]: tensor<i64> {{{[^}]*}}graph.name = "loss_scale.good_steps"
// CHECK-SAME: %[[B:arg[0-9]+]]: tensor<i64> {{{[^}]*}}graph.name = "loss_scale.bad_steps"
// CHECK: %[[NEXT:.*]] = graph.add %[[MICRO]], %{{.*}} : (tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[BETWEEN:.*]] = graph.cast %{{.*}} : tensor<i64> to tensor<i1>
// CHECK: %[[NMICRO:.*]] = graph.where %[[BETWEEN]], %[[NEXT]], %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// The seed is the scale: the sums hold scaled gradients, which the update
// unscales as it reads them, as the scale does not move between updates.
// CHECK: graph.mul %[[S]], %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// CHECK: %[[DW:.*]] = amp.cast %{{.*}} : tensor<8x2xf16> to tensor<8x2xf32>
// CHECK-NEXT: %[[TOTAL:.*]] = graph.add %[[SUM]], %[[DW]]
// CHECK: %[[NSUM:.*]] = graph.where %[[BETWEEN]], %[[TOTAL]], %{{.*}} : (tensor<i1>, tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
// CHECK: %[[MEAN:.*]] = graph.mul %[[TOTAL]], %{{.*}} : (tensor<8x2xf32>, tensor<f32>) -> tensor<8x2xf32>
// CHECK: %[[COUNTED:.*]] = graph.where %[[BETWEEN]], %[[STEP]], %{{.*}} : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// The check runs on the mean at updates only (skip: found_inf is false
// between them).
// CHECK: %[[F:.*]] = amp.check_finite(%[[MEAN]]), %[[S]] skip %[[BETWEEN]] : (tensor<8x2xf32>, tensor<f32>, tensor<i1>) -> tensor<i1>
// The update is skipped between updates and on overflow.
// CHECK-NEXT: %[[SKIP:.*]] = graph.where %[[BETWEEN]], %[[BETWEEN]], %[[F]] : (tensor<i1>, tensor<i1>, tensor<i1>) -> tensor<i1>
// CHECK-NEXT: %[[P:.*]], %[[PV:.*]] = graph.momentum_update %{{.*}}, %[[STEP]], %[[W]], %[[MEAN]], %[[VEL]] skip %[[SKIP]] loss_scale %[[S]]
// The update counter is kept on overflow.
// CHECK-NEXT: %[[NSTEP:.*]] = amp.guard_update %[[F]], (%[[COUNTED]]), (%[[STEP]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// The scale state moves at updates only.
// CHECK-NEXT: %[[NS:.*]], %[[NG:.*]], %[[NB:.*]] = amp.update_scale %[[S]], %[[G]], %[[B]], %[[F]]
// CHECK-NEXT: %[[KEEP:.*]]:3 = amp.guard_update %[[BETWEEN]], (%[[NS]], %[[NG]], %[[NB]]), (%[[S]], %[[G]], %[[B]])
// The micro-step counter and the sums restart after an update even when it
// overflowed: they are not guarded.
// CHECK-NEXT: return %{{.*}}, %[[NMICRO]], %[[NSUM]], %[[P]], %[[PV]], %[[NSTEP]], %[[KEEP]]#0, %[[KEEP]]#1, %[[KEEP]]#2, %[[F]] :
func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w: tensor<8x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %wh = amp.cast %w : tensor<8x2xf32> to tensor<8x2xf16>
  %m = graph.matmul %xh, %wh : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  %y = amp.cast %m : tensor<4x2xf16> to tensor<4x2xf32>
  %sq = graph.mul %y, %y : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %sq {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
