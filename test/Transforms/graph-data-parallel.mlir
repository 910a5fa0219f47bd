// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=4 | FileCheck %s
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=0.00006" | FileCheck %s --check-prefix=SMALL
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=0.00006 overlap=false" | FileCheck %s --check-prefix=NOOVERLAP
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=2 -amp-loss-scale=mode=dynamic -amp-fold-casts | FileCheck %s --check-prefix=SCALED
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 low-precision-exchange=false" | FileCheck %s --check-prefix=WIDE
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=3 -canonicalize -cse | FileCheck %s --check-prefix=KEPT
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=2 -amp-describe-step | FileCheck %s --check-prefix=INFO

// RUN: amp-opt %s -split-input-file -graph-build-training=accumulate=3 -graph-data-parallel=world-size=2 | FileCheck %s --check-prefix=ACCUM

// world-size=1 (the default) leaves the step as graph-build-training made it.
// RUN: amp-opt %s -split-input-file -graph-build-training > %t.plain
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel > %t.one
// RUN: diff %t.plain %t.one

// Two f32 layers. The backward pass makes w2's gradient first, then w1's:
// one bucket (25 MiB by default) holds both, after the last of them, and
// both updates follow it.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: graph.world_size = 4 : i64
// CHECK: %[[G2:.*]] = graph.matmul {{.*}} -> tensor<8x2xf32>
// CHECK: %[[G1:.*]] = graph.matmul {{.*}} -> tensor<8x8xf32>
// CHECK-NEXT: %[[X:.*]] = graph.all_reduce_start %[[G2]], %[[G1]] {world_size = 4 : i64} : (tensor<8x2xf32>, tensor<8x8xf32>) -> tensor<80xf32>
// CHECK-NEXT: %[[M:.*]]:2 = graph.all_reduce_wait %[[X]] {world_size = 4 : i64} : (tensor<80xf32>) -> (tensor<8x2xf32>, tensor<8x8xf32>)
// CHECK-NOT: graph.all_reduce_start
// CHECK-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#0
// CHECK-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#1

// 60 bytes a bucket: w2's gradient (64 bytes) and w1's (256) are each a
// bucket of their own, w2's exchange started as soon as it exists. With
// overlap (the default) it runs while w1's gradient is made, and its wait
// and update follow w1's start; w1's wait comes last, after w2's update.
// SMALL-LABEL: func.func @train_step(
// SMALL: %[[G2:.*]] = graph.matmul {{.*}} -> tensor<8x2xf32>
// SMALL-NEXT: %[[X2:.*]] = graph.all_reduce_start %[[G2]] {world_size = 2 : i64} : (tensor<8x2xf32>) -> tensor<16xf32>
// SMALL-NEXT: graph.transpose
// SMALL-NEXT: %[[G1:.*]] = graph.matmul {{.*}} -> tensor<8x8xf32>
// SMALL-NEXT: %[[X1:.*]] = graph.all_reduce_start %[[G1]] {world_size = 2 : i64} : (tensor<8x8xf32>) -> tensor<64xf32>
// SMALL-NEXT: %[[M2:.*]] = graph.all_reduce_wait %[[X2]] {world_size = 2 : i64} : (tensor<16xf32>) -> tensor<8x2xf32>
// SMALL-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M2]]
// SMALL-NEXT: %[[M1:.*]] = graph.all_reduce_wait %[[X1]] {world_size = 2 : i64} : (tensor<64xf32>) -> tensor<8x8xf32>
// SMALL-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M1]]

// Without overlap each wait follows its start at once, and the bucket's
// update follows it, before w1's gradient is made.
// NOOVERLAP-LABEL: func.func @train_step(
// NOOVERLAP: %[[G2:.*]] = graph.matmul {{.*}} -> tensor<8x2xf32>
// NOOVERLAP-NEXT: %[[X2:.*]] = graph.all_reduce_start %[[G2]]
// NOOVERLAP-NEXT: %[[M2:.*]] = graph.all_reduce_wait %[[X2]]
// NOOVERLAP-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M2]]
// NOOVERLAP: %[[G1:.*]] = graph.matmul {{.*}} -> tensor<8x8xf32>
// NOOVERLAP-NEXT: %[[X1:.*]] = graph.all_reduce_start %[[G1]]
// NOOVERLAP-NEXT: %[[M1:.*]] = graph.all_reduce_wait %[[X1]]
// NOOVERLAP-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M1]]

// With gradient accumulation, the steps that only add skip the exchange
// as they skip the updates: the same flag, the same on every rank.
// ACCUM-LABEL: func.func @train_step(
// ACCUM: %[[SKIP:.*]] = graph.cast %{{.*}} : tensor<i64> to tensor<i1>
// ACCUM: %[[X:.*]] = graph.all_reduce_start %{{.*}}, %{{.*}} skip %[[SKIP]] {world_size = 2 : i64} : ({{.*}}, {{.*}}, tensor<i1>) -> tensor<80xf32>
// ACCUM: %[[M:.*]]:2 = graph.all_reduce_wait %[[X]] skip %[[SKIP]] {world_size = 2 : i64} : (tensor<80xf32>, tensor<i1>) -> ({{.*}}, {{.*}})
// ACCUM: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#{{[01]}} skip %[[SKIP]]

// The Program's step information carries the world size.
// INFO-LABEL: func.func @train_step(
// INFO-SAME: graph.step_info = {{{.*}}world_size = 2 : i64}

// Canonicalization and CSE keep the exchange (it is not Pure).
// KEPT-LABEL: func.func @train_step(
// KEPT: %[[X:.*]] = graph.all_reduce_start {{.*}} {world_size = 3 : i64}
// KEPT: graph.all_reduce_wait %[[X]] {world_size = 3 : i64}

func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w1: tensor<8x8xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<8x8xf32>, graph.trainable = true},
                   %w2: tensor<8x2xf32> {graph.name = "w2", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %h = graph.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %m = graph.matmul %h, %w2 : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// An f16 gradient of an f32 master weight is exchanged in f16 (half the
// bytes; with low-precision-exchange=false in f32), then cast; loss scaling's one check reads the averaged
// gradient, so every rank finds the same overflow, and amp-fold-casts lets
// the check and the update read the f16 mean itself.
// SCALED-LABEL: func.func @train_step(
// SCALED: %[[G:.*]] = graph.matmul {{.*}} -> tensor<8x2xf16>
// SCALED: %[[X:.*]] = graph.all_reduce_start %[[G]] {world_size = 2 : i64} : (tensor<8x2xf16>) -> tensor<16xf16>
// SCALED: %[[M:.*]] = graph.all_reduce_wait %[[X]] {world_size = 2 : i64} : (tensor<16xf16>) -> tensor<8x2xf16>
// SCALED: %[[F:.*]] = amp.check_finite(%[[M]]), %{{.*}} : (tensor<8x2xf16>, tensor<f32>) -> tensor<i1>
// SCALED: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]] skip %[[F]] loss_scale
// WIDE-LABEL: func.func @train_step(
// WIDE: graph.all_reduce_start %{{.*}} {world_size = 2 : i64} : (tensor<8x2xf16>) -> tensor<16xf32>

func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w: tensor<8x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x8xf32> to tensor<4x8xf16>
  %wh = amp.cast %w : tensor<8x2xf32> to tensor<8x2xf16>
  %m = graph.matmul %xh, %wh : (tensor<4x8xf16>, tensor<8x2xf16>) -> tensor<4x2xf16>
  %y = amp.cast %m : tensor<4x2xf16> to tensor<4x2xf32>
  %loss = graph.reduce_mean %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Two weights used alike have one gradient after CSE: it is averaged once,
// and both updates read the mean.
// RUN: amp-opt %s -split-input-file -graph-build-training -cse -graph-data-parallel=world-size=2 | FileCheck %s --check-prefix=SHARED
// SHARED-LABEL: func.func @train_step(
// SHARED: %[[X:.*]] = graph.all_reduce_start %{{[^,]*}} {world_size = 2 : i64} : (tensor<8x2xf32>) -> tensor<16xf32>
// SHARED: %[[M:.*]] = graph.all_reduce_wait %[[X]] {world_size = 2 : i64} : (tensor<16xf32>) -> tensor<8x2xf32>
// SHARED-NOT: graph.all_reduce_start
// SHARED: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]
// SHARED: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]

func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w1: tensor<8x2xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true},
                   %w2: tensor<8x2xf32> {graph.name = "w2", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %a = graph.matmul %x, %w1 : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %b = graph.matmul %x, %w2 : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %s = graph.add %a, %b : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// One op (layer_norm_grad) makes the last gradient of two buckets: the
// starts follow it in the buckets' order, and so do the waits (every rank
// starts the same exchanges in the same order).
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=0.00001" | FileCheck %s --check-prefix=ORDER
// ORDER-LABEL: func.func @train_step(
// ORDER: %{{.*}}, %[[SG:.*]], %[[BG:.*]] = graph.layer_norm_grad
// ORDER-NEXT: %[[X0:.*]] = graph.all_reduce_start %[[BG]]
// ORDER-NEXT: %[[X1:.*]] = graph.all_reduce_start %[[SG]]
// ORDER-NEXT: %[[M0:.*]] = graph.all_reduce_wait %[[X0]]
// ORDER-NEXT: %[[M1:.*]] = graph.all_reduce_wait %[[X1]]
// ORDER-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M0]]
// ORDER-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M1]]

func.func @forward(%x: tensor<4x5xf32> {graph.name = "x"},
                   %g: tensor<5xf32> {graph.name = "g", graph.init = dense<1.0> : tensor<5xf32>, graph.trainable = true},
                   %b: tensor<5xf32> {graph.name = "b", graph.init = dense<0.0> : tensor<5xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %n, %mean, %inv = graph.layer_norm %x, %g, %b {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : (tensor<4x5xf32>, tensor<5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
  %loss = graph.reduce_mean %n {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x5xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}

// -----

// Batch norm keeps each rank's statistics unless asked; with
// sync-batch-norm the forward op and its gradient take the ranks' batches
// together.
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 sync-batch-norm" | FileCheck %s --check-prefix=SYNC
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2" | FileCheck %s --check-prefix=OWN
// SYNC-LABEL: func.func @train_step(
// SYNC: graph.batch_norm_training {{.*}}sync_ranks = 2 : i64
// SYNC: graph.batch_norm_grad {{.*}}{sync_ranks = 2 : i64}
// OWN-LABEL: func.func @train_step(
// OWN-NOT: sync_ranks
// OWN: return

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
