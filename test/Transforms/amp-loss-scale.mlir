// RUN: amp-opt %s -split-input-file -graph-build-training=optimizer=momentum -amp-loss-scale=mode=dynamic | FileCheck %s
// RUN: amp-opt %s -split-input-file -graph-build-training=optimizer=adam -amp-loss-scale="mode=static init-scale=1024" | FileCheck %s --check-prefix=STATIC
// RUN: amp-opt %s -split-input-file -graph-build-training -amp-loss-scale="mode=dynamic init-scale=32768 growth-interval=1000 decr-every-n=2 min-scale=1" | FileCheck %s --check-prefix=PADDLE
// RUN: amp-opt %s -split-input-file -graph-build-training=optimizer=momentum -amp-loss-scale=mode=dynamic -amp-fold-casts | FileCheck %s --check-prefix=FOLD

// mode=none, and auto on a step with no f16 in it (bf16 has f32's range),
// leave the step exactly as graph-build-training built it.
// RUN: amp-opt %s -split-input-file -graph-build-training > %t.plain
// RUN: amp-opt %s -split-input-file -graph-build-training -amp-loss-scale=mode=none > %t.none
// RUN: diff %t.plain %t.none
// RUN: amp-opt %s -split-input-file -graph-build-training -amp-loss-scale > %t.auto
// RUN: FileCheck %s --input-file=%t.auto --check-prefix=AUTO

// A linear layer in f16 as amp-auto-cast leaves it.
// CHECK-LABEL: func.func @train_step(
// The scale and its two counters are state of the step, after the
// optimizer's.
// CHECK-SAME: %[[STEP:arg[0-9]+]]: tensor<i64> {{{[^}]*}}graph.name = "ampc.step"
// CHECK-SAME: %[[S:arg[0-9]+]]: tensor<f32> {graph.init = dense<6.553600e+04> : tensor<f32>, graph.name = "loss_scale", graph.state}
// CHECK-SAME: %[[G:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "loss_scale.good_steps", graph.state}
// CHECK-SAME: %[[B:arg[0-9]+]]: tensor<i64> {graph.init = dense<0> : tensor<i64>, graph.name = "loss_scale.bad_steps", graph.state}
// The step returns the new scale state and found_inf.
// CHECK-SAME: tensor<f32> {graph.name = "loss_scale", graph.updates = [[SI:[0-9]+]] : i64}
// CHECK-SAME: tensor<i64> {graph.name = "loss_scale.good_steps", graph.updates = [[GI:[0-9]+]] : i64}
// CHECK-SAME: tensor<i64> {graph.name = "loss_scale.bad_steps", graph.updates = [[BI:[0-9]+]] : i64}
// CHECK-SAME: tensor<i1> {graph.name = "found_inf"})
// No seed constant is left: d loss / d loss is the scale, which the
// backward pass of the mean multiplies first.
// CHECK-NOT: graph.loss_seed
// CHECK: graph.reduce_mean
// CHECK-NOT: graph.loss_seed
// CHECK: graph.mul %[[S]], %{{.*}} : (tensor<f32>, tensor<f32>) -> tensor<f32>
// The backward matmul runs in f16 on scaled gradients; the weight gradient
// is cast up to f32 (the gradient of the working copy's cast) and checked,
// once, by a check that writes nothing but found_inf.
// CHECK: %[[DW:.*]] = amp.cast %{{.*}} : tensor<8x2xf16> to tensor<8x2xf32>
// CHECK: %[[F:.*]] = amp.check_finite(%[[DW]]), %[[S]] : (tensor<8x2xf32>, tensor<f32>) -> tensor<i1>
// CHECK-NOT: amp.check_finite
// The update reads the scaled gradient with the scale, and is skipped on
// overflow.
// CHECK: graph.momentum_update %{{.*}}, %[[STEP]], %{{.*}}, %[[DW]], %{{.*}} skip %[[F]] loss_scale %[[S]]
// The step counter is kept too.
// CHECK: %[[NSTEP:.*]] = amp.guard_update %[[F]], (%{{.*}}), (%[[STEP]]) : (tensor<i1>, tensor<i64>, tensor<i64>) -> tensor<i64>
// CHECK: %[[NS:.*]], %[[NG:.*]], %[[NB:.*]] = amp.update_scale %[[S]], %[[G]], %[[B]], %[[F]] {backoff = 5.000000e-01 : f64, decr_every_n = 1 : i64, growth = 2.000000e+00 : f64, growth_interval = 2000 : i64, max_scale = 3.4028234663852886E+38 : f64, min_scale = 1.1754943508222875E-38 : f64}
// CHECK: return %{{.*}}, %[[NSTEP]], %[[NS]], %[[NG]], %[[NB]], %[[F]] :

// Static: the scale is a constant, the check and the skip are the same,
// and there is no scale state.
// STATIC-LABEL: func.func @train_step(
// STATIC-NOT: loss_scale
// STATIC-SAME: tensor<i1> {graph.name = "found_inf"})
// STATIC: %[[S:.*]] = graph.constant dense<1.024000e+03> : tensor<f32>
// STATIC: %[[F:.*]] = amp.check_finite(%[[DW:.*]]), %[[S]]
// STATIC: graph.adam_update %{{.*}}, %{{.*}}, %{{.*}}, %[[DW]], %{{.*}}, %{{.*}} skip %[[F]] loss_scale %[[S]]
// STATIC-NOT: amp.update_scale
// STATIC: return

// PADDLE-LABEL: func.func @train_step(
// PADDLE-SAME: graph.init = dense<3.276800e+04> : tensor<f32>, graph.name = "loss_scale"
// PADDLE: amp.update_scale {{.*}} {backoff = 5.000000e-01 : f64, decr_every_n = 2 : i64, growth = 2.000000e+00 : f64, growth_interval = 1000 : i64, max_scale = 3.4028234663852886E+38 : f64, min_scale = 1.000000e+00 : f64}

// AUTO-LABEL: func.func @train_step(
// AUTO-SAME: graph.name = "loss_scale"
// AUTO: amp.check_finite

// amp-fold-casts then lets the check and the update read the f16 gradient
// itself: no f32 copy of it is left.
// FOLD-LABEL: func.func @train_step(
// FOLD-NOT: amp.cast {{.*}} : tensor<8x2xf16> to tensor<8x2xf32>
// FOLD: %[[F:.*]] = amp.check_finite(%[[DW:.*]]), %[[S:.*]] : (tensor<8x2xf16>, tensor<f32>) -> tensor<i1>
// FOLD: graph.momentum_update %{{.*}}, %{{.*}}, %{{.*}}, %[[DW]], %{{.*}} skip %[[F]] loss_scale %[[S]] {{.*}} : (tensor<f32>, tensor<i64>, tensor<8x2xf32>, tensor<8x2xf16>, tensor<8x2xf32>, tensor<i1>, tensor<f32>)
// FOLD-NOT: amp.cast {{.*}} : tensor<8x2xf16> to tensor<8x2xf32>
// FOLD: return
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

// -----

// bf16 only: auto is none (checked by the AUTO-NOT below and the diff
// above). Asked for, two layers get one check over both gradients, and
// both updates wait for it.
// AUTO-LABEL: func.func @train_step(
// AUTO-NOT: loss_scale
// AUTO-NOT: found_inf
// AUTO-NOT: amp.check_finite
// AUTO-NOT: skip
// AUTO: return
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[G2:.*]] = amp.cast %{{.*}} : tensor<8x2xbf16> to tensor<8x2xf32>
// CHECK-NOT: _update
// CHECK: %[[G1:.*]] = amp.cast %{{.*}} : tensor<8x8xbf16> to tensor<8x8xf32>
// CHECK-NOT: _update
// CHECK: %[[F:.*]] = amp.check_finite(%[[G2]], %[[G1]]), %[[S:.*]] : (tensor<8x2xf32>, tensor<8x8xf32>, tensor<f32>) -> tensor<i1>
// CHECK: graph.momentum_update {{.*}}, %[[G2]], {{.*}} skip %[[F]] loss_scale %[[S]]
// CHECK: graph.momentum_update {{.*}}, %[[G1]], {{.*}} skip %[[F]] loss_scale %[[S]]
// FOLD-LABEL: func.func @train_step(
// FOLD: %[[F:.*]] = amp.check_finite(%[[G2:.*]], %[[G1:.*]]), %{{.*}} : (tensor<8x2xbf16>, tensor<8x8xbf16>, tensor<f32>) -> tensor<i1>
// FOLD: graph.momentum_update {{.*}}, %[[G2]], {{.*}} skip %[[F]] loss_scale
// FOLD: graph.momentum_update {{.*}}, %[[G1]], {{.*}} skip %[[F]] loss_scale
func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w1: tensor<8x8xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<8x8xf32>, graph.trainable = true},
                   %w2: tensor<8x2xf32> {graph.name = "w2", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x8xf32> to tensor<4x8xbf16>
  %w1h = amp.cast %w1 : tensor<8x8xf32> to tensor<8x8xbf16>
  %w2h = amp.cast %w2 : tensor<8x2xf32> to tensor<8x2xbf16>
  %h = graph.matmul %xh, %w1h : (tensor<4x8xbf16>, tensor<8x8xbf16>) -> tensor<4x8xbf16>
  %m = graph.matmul %h, %w2h : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  %y = amp.cast %m : tensor<4x2xbf16> to tensor<4x2xf32>
  %loss = graph.reduce_mean %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
