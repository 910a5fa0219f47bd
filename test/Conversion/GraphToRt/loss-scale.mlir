// RUN: amp-opt %s -graph-build-training=optimizer=momentum -amp-loss-scale=mode=dynamic -canonicalize -cse -convert-graph-to-rt | FileCheck %s
// RUN: amp-opt %s -graph-build-training=optimizer=momentum -amp-loss-scale=mode=dynamic -canonicalize -cse -convert-graph-to-rt=reuse-memory=false | FileCheck %s --check-prefix=NOREUSE

// The loss-scaled step in rt form: the check is one kernel that unscales
// the weight gradient over itself, the update kernel takes found_inf as its
// last input, the guarded step counter is a select fused with its add, and
// the scale's state machine is one kernel.
// CHECK-LABEL: func.func @train_step()
// CHECK: %[[STEP:.*]] = rt.param "ampc.step"
// CHECK: %[[S:.*]] = rt.param "loss_scale"
// CHECK: %[[DW:.*]] = rt.kernel "cast"({{.*}}) at [[[OFF:[0-9]+]]] : (tensor<8x2xf16>) -> tensor<8x2xf32>
// CHECK: %[[C:.*]]:2 = rt.kernel "unscale_and_check"(%[[DW]], %[[S]]) at [[[OFF]], {{[0-9]+}}] : (tensor<8x2xf32>, tensor<f32>) -> (tensor<8x2xf32>, tensor<i1>)
// CHECK: rt.kernel "momentum_update"(%{{.*}}, %[[STEP]], %{{.*}}, %[[C]]#0, %{{.*}}, %[[C]]#1)
// CHECK: graph.momentum_update {{.*}} skip %{{.*}}
// CHECK: rt.kernel "fused"(%[[STEP]], %{{.*}}, %[[C]]#1) at [{{[0-9]+}}] : (tensor<i64>, tensor<i64>, tensor<i1>) -> tensor<i64>
// CHECK: graph.add
// CHECK-NEXT: graph.where
// CHECK: rt.kernel "update_scale"(%[[S]], %{{.*}}, %{{.*}}, %[[C]]#1)
// CHECK: rt.output "found_inf" %[[C]]#1
// Without memory reuse the unscaled gradient gets bytes of its own.
// NOREUSE: %[[DW:.*]] = rt.kernel "cast"({{.*}}) at [[[OFF:[0-9]+]]] : (tensor<8x2xf16>) -> tensor<8x2xf32>
// NOREUSE-NOT: at [[[OFF]],
// NOREUSE: rt.kernel "unscale_and_check"
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
