// RUN: amp-opt %s -graph-build-training=optimizer=momentum -amp-loss-scale=mode=dynamic -canonicalize -cse -amp-fold-casts -convert-graph-to-rt | FileCheck %s

// The loss-scaled step in rt form: the f16 weight gradient is never cast
// to f32; the check is one kernel that reads it and writes only found_inf;
// the update kernel reads the f16 gradient, found_inf (skip) and the scale,
// and unscales as it reads; the guarded step counter is a select fused with
// its add, and the scale's state machine is one kernel.
// CHECK-LABEL: func.func @train_step()
// CHECK: %[[W:.*]] = rt.param "w"
// CHECK: %[[STEP:.*]] = rt.param "ampc.step"
// CHECK: %[[S:.*]] = rt.param "loss_scale"
// CHECK-NOT: rt.kernel "cast"({{.*}}) {{.*}} : (tensor<8x2xf16>) -> tensor<8x2xf32>
// CHECK: %[[DW:.*]] = rt.kernel "matmul"({{.*}}) {{.*}} -> tensor<8x2xf16>
// CHECK-NOT: rt.kernel "cast"({{.*}}) {{.*}} : (tensor<8x2xf16>) -> tensor<8x2xf32>
// CHECK: %[[F:.*]] = rt.kernel "check_finite"(%[[DW]], %[[S]]) at [{{[0-9]+}}] : (tensor<8x2xf16>, tensor<f32>) -> tensor<i1>
// CHECK: rt.kernel "momentum_update"(%{{.*}}, %[[STEP]], %[[W]], %[[DW]], %{{.*}}, %[[F]], %[[S]]) {{.*}} : (tensor<f32>, tensor<i64>, tensor<8x2xf32>, tensor<8x2xf16>, tensor<8x2xf32>, tensor<i1>, tensor<f32>)
// CHECK: graph.momentum_update {{.*}} skip %{{.*}} loss_scale %{{.*}}
// CHECK: rt.kernel "fused"(%[[STEP]], %{{.*}}, %[[F]]) at [{{[0-9]+}}] : (tensor<i64>, tensor<i64>, tensor<i1>) -> tensor<i64>
// CHECK: graph.add
// CHECK-NEXT: graph.where
// CHECK: rt.kernel "update_scale"(%[[S]], %{{.*}}, %{{.*}}, %[[F]])
// CHECK: rt.output "found_inf" %[[F]]
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
