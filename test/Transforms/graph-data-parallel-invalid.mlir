// RUN: amp-opt %s -split-input-file -graph-build-training -graph-data-parallel=world-size=0 -verify-diagnostics
// RUN: not amp-opt %s -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=0" 2>&1 | FileCheck %s --check-prefix=BUCKET
// BUCKET: error: graph-data-parallel: option 'bucket-mb' must be in (0, 1048576], got 0

// expected-error @below {{graph-data-parallel: option 'world-size' must be >= 1, got 0}}
module {
func.func @forward(%x: tensor<4x8xf32> {graph.name = "x"},
                   %w: tensor<8x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %m = graph.matmul %x, %w : (tensor<4x8xf32>, tensor<8x2xf32>) -> tensor<4x2xf32>
  %loss = graph.reduce_mean %m {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %loss : tensor<f32>
}
}
// RUN: not amp-opt %s -graph-build-training -graph-data-parallel="world-size=2 bucket-mb=inf" 2>&1 | FileCheck %s --check-prefix=HUGE
// HUGE: error: graph-data-parallel: option 'bucket-mb' must be in (0, 1048576], got inf
