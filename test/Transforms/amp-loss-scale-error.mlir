// Every bad amp-loss-scale option, and every step it cannot scale, is
// refused with a message that names the option or what is missing.

// RUN: rm -rf %t && split-file %s %t
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=mode=always 2>&1 | FileCheck %s --check-prefix=MODE
// MODE: for the --mode option: 'always' is not auto, none, static or dynamic
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=init-scale=0 2>&1 | FileCheck %s --check-prefix=INIT
// INIT: error: amp-loss-scale: option 'init-scale' must be a positive finite f32, got 0
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=init-scale=1e39 2>&1 | FileCheck %s --check-prefix=INIT-BIG
// INIT-BIG: error: amp-loss-scale: option 'init-scale' must be a positive finite f32, got 1e+39
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=scale-growth=0.5 2>&1 | FileCheck %s --check-prefix=GROWTH
// GROWTH: error: amp-loss-scale: option 'scale-growth' must be a finite f32 >= 1, got 0.5
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=scale-backoff=2 2>&1 | FileCheck %s --check-prefix=BACKOFF
// BACKOFF: error: amp-loss-scale: option 'scale-backoff' must be in (0, 1], got 2
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=growth-interval=0 2>&1 | FileCheck %s --check-prefix=INTERVAL
// INTERVAL: error: amp-loss-scale: option 'growth-interval' must be >= 1, got 0
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=decr-every-n=-1 2>&1 | FileCheck %s --check-prefix=DECR
// DECR: error: amp-loss-scale: option 'decr-every-n' must be >= 1, got -1
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale="min-scale=4 max-scale=2" 2>&1 | FileCheck %s --check-prefix=BOUNDS
// BOUNDS: error: amp-loss-scale: options 'min-scale' and 'max-scale' need 0 < min-scale <= max-scale <= the largest f32, got 4 and 2
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale="mode=dynamic init-scale=8 max-scale=4" 2>&1 | FileCheck %s --check-prefix=OUTSIDE
// OUTSIDE: error: amp-loss-scale: option 'init-scale' must be within [min-scale, max-scale], got 8
// RUN: not amp-opt %t/f.mlir -amp-loss-scale 2>&1 | FileCheck %s --check-prefix=NOSTEP
// NOSTEP: error: amp-loss-scale: the module has no @train_step with one block; run graph-build-training first
// A step whose seed is gone (folded away, or written by hand).
// RUN: not amp-opt %t/noseed.mlir -amp-loss-scale=mode=dynamic 2>&1 | FileCheck %s --check-prefix=NOSEED
// NOSEED: error: amp-loss-scale: @train_step has 0 ops marked graph.loss_seed (the seed of the backward pass) but needs exactly one; run amp-loss-scale right after graph-build-training, before canonicalization folds the seed
// RUN: not amp-opt %t/f.mlir -graph-build-training -amp-loss-scale=mode=dynamic -amp-loss-scale=mode=dynamic 2>&1 | FileCheck %s --check-prefix=TWICE
// TWICE: error: amp-loss-scale: @train_step already has an argument named 'loss_scale': the step is scaled already
// RUN: not amp-opt %t/seed.mlir 2>&1 | FileCheck %s --check-prefix=SEEDATTR
// SEEDATTR: error: 'graph.reduce_mean' op has graph.loss_seed, which only a scalar graph.constant (unit) may carry

//--- f.mlir
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.init = dense<5.000000e-01> : tensor<3x2xf32>, graph.name = "w", graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x3xf32> to tensor<4x3xf16>
  %wh = amp.cast %w : tensor<3x2xf32> to tensor<3x2xf16>
  %m = graph.matmul %xh, %wh : (tensor<4x3xf16>, tensor<3x2xf16>) -> tensor<4x2xf16>
  %y = amp.cast %m : tensor<4x2xf16> to tensor<4x2xf32>
  %l = graph.reduce_mean %y {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %l : tensor<f32>
}

//--- noseed.mlir
func.func @train_step(%lr: tensor<f32>, %w: tensor<3xf32> {graph.init = dense<5.000000e-01> : tensor<3xf32>, graph.name = "w"}, %g: tensor<3xf32>)
    -> (tensor<3xf32> {graph.name = "w", graph.updates = 1 : i64}) {
  %n = graph.sgd_update %lr, %w, %g : (tensor<f32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %n : tensor<3xf32>
}

//--- seed.mlir
func.func @f(%x: tensor<4xf32>) -> tensor<f32> {
  %l = graph.reduce_mean %x {axes = array<i64: 0>, keepdims = false, graph.loss_seed} : (tensor<4xf32>) -> tensor<f32>
  return %l : tensor<f32>
}
