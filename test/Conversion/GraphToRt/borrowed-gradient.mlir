// RUN: amp-opt %s -split-input-file -convert-graph-to-rt | FileCheck %s
// RUN: amp-opt %s -split-input-file -convert-graph-to-rt=reuse-memory=false | FileCheck %s --check-prefix=NOREUSE

// An O2 working copy is dead from its last read until the update writes
// its new value, so its bytes hold the weight's low-precision gradient
// meanwhile: the gradient is written at the working copy's offset, and the
// update writes the new working copy over the gradient it reads.
// CHECK-LABEL: func.func @borrowed()
// CHECK: %[[W:.*]] = rt.param "w" at [[WOFF:[0-9]+]]
// CHECK: %[[WW:.*]] = rt.param "w.working" at [[WWOFF:[0-9]+]]
// CHECK: rt.kernel "matmul"(%{{.*}}, %[[WW]])
// CHECK: %[[G:.*]] = rt.kernel "matmul"(%{{.*}}, %{{.*}}) at {{\[}}[[WWOFF]]] : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
// CHECK: rt.kernel "sgd_update"(%{{.*}}, %[[W]], %[[G]]) at {{\[}}[[WOFF]], [[WWOFF]]]
// NOREUSE-LABEL: func.func @borrowed()
// NOREUSE: rt.param "w.working" at [[WWOFF:[0-9]+]]
// NOREUSE-NOT: at {{\[}}[[WWOFF]]]
// NOREUSE: rt.update
func.func @borrowed(%x: tensor<2x4xbf16> {graph.name = "x"},
    %xt: tensor<4x2xbf16> {graph.name = "xt"},
    %dy: tensor<2x3xbf16> {graph.name = "dy"},
    %w: tensor<4x3xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4x3xf32>},
    %ww: tensor<4x3xbf16> {graph.name = "w.working", graph.init = dense<1.0> : tensor<4x3xbf16>, graph.state})
    -> (tensor<2x3xbf16> {graph.name = "y"}, tensor<4x3xf32> {graph.name = "w", graph.updates = 3 : i64},
        tensor<4x3xbf16> {graph.name = "w.working", graph.updates = 4 : i64}) {
  %y = graph.matmul %x, %ww : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %g = graph.matmul %xt, %dy : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n = graph.sgd_update %lr, %w, %g : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xbf16>) -> tensor<4x3xf32>
  %c = amp.cast %n {amp.working_copy} : tensor<4x3xf32> to tensor<4x3xbf16>
  return %y, %n, %c : tensor<2x3xbf16>, tensor<4x3xf32>, tensor<4x3xbf16>
}

// -----

// A gradient written while the working copy is still to be read gets bytes
// of its own.
// CHECK-LABEL: func.func @read_after()
// CHECK: rt.param "w.working" at [[WWOFF:[0-9]+]]
// CHECK-NOT: rt.kernel "matmul"({{.*}}) at {{\[}}[[WWOFF]]]
// CHECK: rt.kernel "sgd_update"(%{{.*}}, %{{.*}}, %{{.*}}) at {{\[}}{{[0-9]+}}, [[WWOFF]]]
func.func @read_after(%x: tensor<2x4xbf16> {graph.name = "x"},
    %xt: tensor<4x2xbf16> {graph.name = "xt"},
    %dy: tensor<2x3xbf16> {graph.name = "dy"},
    %w: tensor<4x3xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4x3xf32>},
    %ww: tensor<4x3xbf16> {graph.name = "w.working", graph.init = dense<1.0> : tensor<4x3xbf16>, graph.state})
    -> (tensor<2x3xbf16> {graph.name = "y"}, tensor<4x3xf32> {graph.name = "w", graph.updates = 3 : i64},
        tensor<4x3xbf16> {graph.name = "w.working", graph.updates = 4 : i64}) {
  %g = graph.matmul %xt, %dy : (tensor<4x2xbf16>, tensor<2x3xbf16>) -> tensor<4x3xbf16>
  %y = graph.matmul %x, %ww : (tensor<2x4xbf16>, tensor<4x3xbf16>) -> tensor<2x3xbf16>
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n = graph.sgd_update %lr, %w, %g : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xbf16>) -> tensor<4x3xf32>
  %c = amp.cast %n {amp.working_copy} : tensor<4x3xf32> to tensor<4x3xbf16>
  return %y, %n, %c : tensor<2x3xbf16>, tensor<4x3xf32>, tensor<4x3xbf16>
}

// -----

// In f32 the update reads the parameter itself, so the gradient never
// lives in the parameter's bytes.
// CHECK-LABEL: func.func @master()
// CHECK: rt.param "w" at [[WOFF:[0-9]+]]
// CHECK-NOT: rt.kernel "matmul"({{.*}}) at {{\[}}[[WOFF]]]
// CHECK: rt.kernel "sgd_update"({{.*}}) at {{\[}}[[WOFF]]]
func.func @master(%xt: tensor<4x2xf32> {graph.name = "xt"},
    %dy: tensor<2x3xf32> {graph.name = "dy"},
    %w: tensor<4x3xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<4x3xf32>})
    -> (tensor<4x3xf32> {graph.name = "w", graph.updates = 2 : i64}) {
  %g = graph.matmul %xt, %dy : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %lr = graph.constant dense<0.5> : tensor<f32>
  %n = graph.sgd_update %lr, %w, %g : (tensor<f32>, tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %n : tensor<4x3xf32>
}
