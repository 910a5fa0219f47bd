// The working copy of a parameter, cast from its new value by
// graph-build-training (amp.cast {amp.working_copy}), is one more output of
// the optimizer update kernel, written in place over the old copy; the
// master is updated in place as before. Without fusion the cast is a kernel
// of its own. A cast of a new parameter that is not a working copy, and a
// working copy of something other than an update's new parameter, keep
// their "cast" kernels.

// RUN: amp-opt %s -split-input-file -convert-graph-to-rt | FileCheck %s
// RUN: amp-opt %s -split-input-file -convert-graph-to-rt=fuse=false | FileCheck %s --check-prefix=NOFUSE

// CHECK-LABEL: func.func @sgd()
// CHECK: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// CHECK: %[[WW:.*]] = rt.param "w.working" at [[WWOFF:[0-9]+]] {init = dense<1.000000e+00> : tensor<4xf16>} : tensor<4xf16>
// CHECK: rt.kernel "matmul"(%{{.*}}, %[[WW]])
// CHECK: %[[U:.*]]:2 = rt.kernel "sgd_update"(%{{.*}}, %[[W]], %{{.*}}) at {{\[}}[[WOFF]], [[WWOFF]]] : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf16>) {
// CHECK-NEXT: ^bb0(%[[LR:.*]]: tensor<f32>, %[[P:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf32>):
// CHECK-NEXT: %[[N:.*]] = graph.sgd_update %[[LR]], %[[P]], %[[G]] :
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[N]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: rt.yield %[[N]], %[[C]]
// CHECK-NOT: rt.kernel "cast"
// CHECK: rt.update %[[W]], %[[U]]#0
// CHECK-NEXT: rt.update %[[WW]], %[[U]]#1
// NOFUSE-LABEL: func.func @sgd()
// NOFUSE: %[[N:.*]] = rt.kernel "sgd_update"
// NOFUSE-SAME: -> tensor<4xf32>
// NOFUSE: rt.kernel "cast"(%[[N]])
func.func @sgd(%x: tensor<1x4xf32> {graph.name = "x"},
    %w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>},
    %ww: tensor<4xf16> {graph.name = "w.working", graph.init = dense<1.0> : tensor<4xf16>, graph.state})
    -> (tensor<1xf16> {graph.name = "y"}, tensor<4xf32> {graph.name = "w", graph.updates = 1 : i64},
        tensor<4xf16> {graph.name = "w.working", graph.updates = 2 : i64}) {
  %xh = amp.cast %x : tensor<1x4xf32> to tensor<1x4xf16>
  %y = graph.matmul %xh, %ww : (tensor<1x4xf16>, tensor<4xf16>) -> tensor<1xf16>
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n = graph.sgd_update %lr, %w, %w : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %c = amp.cast %n {amp.working_copy} : tensor<4xf32> to tensor<4xf16>
  return %y, %n, %c : tensor<1xf16>, tensor<4xf32>, tensor<4xf16>
}

// -----

// Adam: the copy follows the new parameter, the moments keep their places.
// CHECK-LABEL: func.func @adam()
// CHECK: rt.kernel "adam_update"({{.*}}) at [{{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}, {{[0-9]+}}] : {{.*}} -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xbf16>)
// CHECK-NOT: rt.kernel "cast"
// CHECK: rt.update
func.func @adam(%w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>},
    %m: tensor<4xf32> {graph.name = "w.m", graph.init = dense<0.0> : tensor<4xf32>},
    %v: tensor<4xf32> {graph.name = "w.v", graph.init = dense<0.0> : tensor<4xf32>},
    %step: tensor<i64> {graph.name = "ampc.step", graph.init = dense<0> : tensor<i64>})
    -> (tensor<4xf32> {graph.name = "w", graph.updates = 0 : i64},
        tensor<4xbf16> {graph.name = "copy"}) {
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n:3 = graph.adam_update %lr, %step, %w, %w, %m, %v : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %c = amp.cast %n#0 {amp.working_copy} : tensor<4xf32> to tensor<4xbf16>
  return %n#0, %c : tensor<4xf32>, tensor<4xbf16>
}

// -----

// The working copy of a frozen parameter is cast from the parameter itself.
// CHECK-LABEL: func.func @not_working_copies()
// CHECK: %[[W:.*]] = rt.param "w"
// CHECK: %[[F:.*]] = rt.param "frozen"
// CHECK: rt.kernel "cast"(%[[F]])
// CHECK: %[[N:.*]] = rt.kernel "sgd_update"
// CHECK-SAME: -> tensor<4xf32>
// CHECK: rt.kernel "cast"(%[[N]])
func.func @not_working_copies(%w: tensor<4xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4xf32>},
    %f: tensor<4xf32> {graph.name = "frozen", graph.init = dense<1.0> : tensor<4xf32>})
    -> (tensor<4xf16> {graph.name = "a"}, tensor<4xf16> {graph.name = "b"}) {
  %b = amp.cast %f {amp.working_copy} : tensor<4xf32> to tensor<4xf16>
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n = graph.sgd_update %lr, %w, %w : (tensor<f32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a = amp.cast %n : tensor<4xf32> to tensor<4xf16>
  return %a, %b : tensor<4xf16>, tensor<4xf16>
}
