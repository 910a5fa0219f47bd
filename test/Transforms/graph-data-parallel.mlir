// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=4 | FileCheck %s
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=0.00006" | FileCheck %s --check-prefix=SMALL
// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=2 -amp-loss-scale=mode=dynamic -amp-fold-casts | FileCheck %s --check-prefix=SCALED
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
// CHECK-NEXT: %[[M:.*]]:2 = graph.all_reduce_mean %[[G2]], %[[G1]] {world_size = 4 : i64} : (tensor<8x2xf32>, tensor<8x8xf32>) -> (tensor<8x2xf32>, tensor<8x8xf32>)
// CHECK-NOT: graph.all_reduce_mean
// CHECK-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#0
// CHECK-DAG: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#1

// 60 bytes a bucket: w2's gradient (64 bytes) and w1's (256) are each a
// bucket of their own, w2's placed as soon as it exists, and its update
// right after it, before w1's gradient is made.
// SMALL-LABEL: func.func @train_step(
// SMALL: %[[G2:.*]] = graph.matmul {{.*}} -> tensor<8x2xf32>
// SMALL-NEXT: %[[M2:.*]] = graph.all_reduce_mean %[[G2]] {world_size = 2 : i64} : (tensor<8x2xf32>) -> tensor<8x2xf32>
// SMALL-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M2]]
// SMALL: %[[G1:.*]] = graph.matmul {{.*}} -> tensor<8x8xf32>
// SMALL-NEXT: %[[M1:.*]] = graph.all_reduce_mean %[[G1]] {world_size = 2 : i64} : (tensor<8x8xf32>) -> tensor<8x8xf32>
// SMALL-NEXT: graph.sgd_update %{{.*}}, %{{.*}}, %[[M1]]

// With gradient accumulation, the steps that only add skip the exchange
// as they skip the updates: the same flag, the same on every rank.
// ACCUM-LABEL: func.func @train_step(
// ACCUM: %[[SKIP:.*]] = graph.cast %{{.*}} : tensor<i64> to tensor<i1>
// ACCUM: %[[M:.*]]:2 = graph.all_reduce_mean %{{.*}}, %{{.*}} skip %[[SKIP]] {world_size = 2 : i64} : ({{.*}}, {{.*}}, tensor<i1>) -> ({{.*}}, {{.*}})
// ACCUM: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]]#{{[01]}} skip %[[SKIP]]

// The Program's step information carries the world size.
// INFO-LABEL: func.func @train_step(
// INFO-SAME: graph.step_info = {{{.*}}world_size = 2 : i64}

// Canonicalization and CSE keep the exchange (it is not Pure).
// KEPT-LABEL: func.func @train_step(
// KEPT: graph.all_reduce_mean {{.*}} {world_size = 3 : i64}

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

// An f16 gradient of an f32 master weight is averaged in f16 (half the
// bytes), then cast; loss scaling's one check reads the averaged
// gradient, so every rank finds the same overflow, and amp-fold-casts lets
// the check and the update read the f16 mean itself.
// SCALED-LABEL: func.func @train_step(
// SCALED: %[[G:.*]] = graph.matmul {{.*}} -> tensor<8x2xf16>
// SCALED: %[[M:.*]] = graph.all_reduce_mean %[[G]] {world_size = 2 : i64} : (tensor<8x2xf16>) -> tensor<8x2xf16>
// SCALED: %[[F:.*]] = amp.check_finite(%[[M]]), %{{.*}} : (tensor<8x2xf16>, tensor<f32>) -> tensor<i1>
// SCALED: graph.sgd_update %{{.*}}, %{{.*}}, %[[M]] skip %[[F]] loss_scale

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
// SHARED: %[[M:.*]] = graph.all_reduce_mean %{{[^,]*}} {world_size = 2 : i64} : (tensor<8x2xf32>) -> tensor<8x2xf32>
// SHARED-NOT: graph.all_reduce_mean
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
