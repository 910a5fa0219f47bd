// RUN: amp-opt %s -graph-build-training="optimizer=momentum freeze=w2" | FileCheck %s
// RUN: amp-opt %s -graph-build-training="optimizer=momentum" | FileCheck %s --check-prefix=ALL

// A forward as amp-auto-cast leaves it at O2: the f16 working copies of the
// f32 parameters are marked amp.working_copy. Each trained one becomes
// state, `<p>.working`, initialised to the parameter rounded to f16
// (0.1 -> 0.0999755859375, 0.2 -> 0.199951171875), and read instead of the
// cast; the gradient still reaches the f32 master through the cast back to
// f32, and the new working copy is cast from the new master right after its
// update, tied to the state argument. w2 is frozen: it keeps its per-step
// cast, and the input x's cast (no parameter) is left alone.
// CHECK-LABEL: func.func @train_step(
// CHECK-SAME: %[[X:arg0]]: tensor<4x3xf32>
// CHECK-SAME: %[[W1:arg2]]: tensor<5x3xf32> {graph.init = dense<1.000000e-01> : tensor<5x3xf32>, graph.name = "w1"
// CHECK-SAME: %[[B1:arg3]]: tensor<5xf32>
// CHECK-SAME: %[[W2:arg4]]: tensor<2x5xf32>
// CHECK-SAME: %[[STEP:arg5]]: tensor<i64>
// CHECK-SAME: %[[W1V:arg6]]: tensor<5x3xf32> {{{[^}]*}}graph.name = "w1.velocity"
// CHECK-SAME: %[[B1V:arg7]]: tensor<5xf32> {{{[^}]*}}graph.name = "b1.velocity"
// CHECK-SAME: %[[W1W:arg8]]: tensor<5x3xf16> {graph.init = dense<9.997550e-02> : tensor<5x3xf16>, graph.name = "w1.working", graph.state}
// CHECK-SAME: %[[B1W:arg9]]: tensor<5xf16> {graph.init = dense<1.999510e-01> : tensor<5xf16>, graph.name = "b1.working", graph.state})
// CHECK-SAME: tensor<5x3xf16> {graph.name = "w1.working", graph.updates = 8 : i64}
// CHECK-SAME: tensor<5xf16> {graph.name = "b1.working", graph.updates = 9 : i64}
// CHECK-NOT: amp.cast %[[W1]]
// CHECK-NOT: amp.cast %[[B1]]
// CHECK: %[[XH:.*]] = amp.cast %[[X]] : tensor<4x3xf32> to tensor<4x3xf16>
// CHECK-NEXT: %[[W2H:.*]] = amp.cast %[[W2]] {amp.working_copy} : tensor<2x5xf32> to tensor<2x5xf16>
// CHECK-NEXT: %[[H:.*]] = graph.gemm %[[XH]], %[[W1W]], %[[B1W]]
// CHECK: graph.gemm %{{.*}}, %[[W2H]]
// Each gradient's cast back to f32 sits right after the gradient, and the
// update right after it: without loss scaling an update runs as soon as its
// gradient exists, not after the whole backward pass.
// CHECK: %[[DW1H:.*]] = graph.gemm {{.*}} -> tensor<5x3xf16>
// CHECK-NEXT: %[[DW1:.*]] = amp.cast %[[DW1H]] : tensor<5x3xf16> to tensor<5x3xf32>
// CHECK-NEXT: %[[NW1:.*]], %[[NW1V:.*]] = graph.momentum_update %{{.*}}, %[[STEP]], %[[W1]], %[[DW1]], %[[W1V]]
// CHECK-NEXT: %[[NW1W:.*]] = amp.cast %[[NW1]] {amp.working_copy} : tensor<5x3xf32> to tensor<5x3xf16>
// CHECK-NEXT: graph.reduce_sum
// CHECK-NEXT: %[[DB1H:.*]] = graph.reshape {{.*}} to tensor<5xf16>
// CHECK-NEXT: %[[DB1:.*]] = amp.cast %[[DB1H]] : tensor<5xf16> to tensor<5xf32>
// CHECK-NEXT: %[[NB1:.*]], %[[NB1V:.*]] = graph.momentum_update %{{.*}}, %[[STEP]], %[[B1]], %[[DB1]], %[[B1V]]
// CHECK-NEXT: %[[NB1W:.*]] = amp.cast %[[NB1]] {amp.working_copy} : tensor<5xf32> to tensor<5xf16>
// CHECK-NOT: amp.cast
// CHECK: return %{{.*}}, %[[NW1]], %[[NW1V]], %[[NB1]], %[[NB1V]], %{{.*}}, %[[NW1W]], %[[NB1W]] :

// Without the freeze, w2's working copy becomes state too, and no
// parameter is cast at the top of the step.
// ALL-LABEL: func.func @train_step(
// ALL-SAME: %arg11: tensor<2x5xf16> {graph.init = dense<3.000490e-01> : tensor<2x5xf16>, graph.name = "w2.working", graph.state}
// ALL-SAME: tensor<2x5xf16> {graph.name = "w2.working", graph.updates = 11 : i64}
// ALL-NEXT: graph.lr_schedule
// ALL-NEXT: amp.cast %arg0
// ALL-NEXT: graph.gemm
// ALL: %[[NW2:.*]], %{{.*}} = graph.momentum_update %{{.*}}, %arg5, %arg4,
// ALL-NEXT: amp.cast %[[NW2]] {amp.working_copy} : tensor<2x5xf32> to tensor<2x5xf16>
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.init = dense<1.000000e-01> : tensor<5x3xf32>, graph.name = "w1", graph.trainable = true},
                   %b1: tensor<5xf32> {graph.init = dense<2.000000e-01> : tensor<5xf32>, graph.name = "b1", graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.init = dense<3.000000e-01> : tensor<2x5xf32>, graph.name = "w2", graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<4x3xf32> to tensor<4x3xf16>
  %w1h = amp.cast %w1 {amp.working_copy} : tensor<5x3xf32> to tensor<5x3xf16>
  %b1h = amp.cast %b1 {amp.working_copy} : tensor<5xf32> to tensor<5xf16>
  %w2h = amp.cast %w2 {amp.working_copy} : tensor<2x5xf32> to tensor<2x5xf16>
  %h = graph.gemm %xh, %w1h, %b1h {trans_b = true} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> tensor<4x5xf16>
  %r = graph.relu %h : tensor<4x5xf16>
  %y = graph.gemm %r, %w2h {trans_b = true} : (tensor<4x5xf16>, tensor<2x5xf16>) -> tensor<4x2xf16>
  %yf = amp.cast %y : tensor<4x2xf16> to tensor<4x2xf32>
  %loss, %lp = graph.softmax_cross_entropy %yf, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>)
  return %loss : tensor<f32>
}
