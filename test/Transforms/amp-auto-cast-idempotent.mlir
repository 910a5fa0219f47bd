// Running amp-auto-cast twice equals running it once, at every level and
// dtype; O0 leaves the IR exactly as it was.

// RUN: amp-opt %s > %t.in
// RUN: amp-opt %s -amp-auto-cast=level=O0 > %t.O0
// RUN: diff %t.in %t.O0
// RUN: amp-opt %s -amp-auto-cast=level=O1 > %t.O1
// RUN: amp-opt %t.O1 -amp-auto-cast=level=O1 | diff %t.O1 -
// RUN: amp-opt %s -amp-auto-cast=level=O2 > %t.O2
// RUN: amp-opt %t.O2 -amp-auto-cast=level=O2 | diff %t.O2 -
// RUN: amp-opt %s -amp-auto-cast=level=O3 > %t.O3
// RUN: amp-opt %t.O3 -amp-auto-cast=level=O3 | diff %t.O3 -
// RUN: amp-opt %s -amp-auto-cast="level=O1 dtype=bf16" > %t.bf
// RUN: amp-opt %t.bf -amp-auto-cast="level=O1 dtype=bf16" | diff %t.bf -
// The runs above change the IR (a test of nothing otherwise):
// RUN: FileCheck %s < %t.O1
// CHECK: amp.cast
// CHECK: graph.gemm {{.*}} -> tensor<4x5xf16>

func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>, graph.name = "w1", graph.trainable = true},
                   %b1: tensor<5xf32> {graph.init = dense<1.000000e-01> : tensor<5xf32>, graph.name = "b1", graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.init = dense<2.500000e-01> : tensor<2x5xf32>, graph.name = "w2", graph.trainable = true},
                   %g: tensor<5xf32> {graph.init = dense<1.000000e+00> : tensor<5xf32>, graph.name = "ln.weight", graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "probs"}) {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc("fc1")
  %c = graph.constant dense<1.000000e-01> : tensor<5xf32> loc("shift")
  %a = graph.add %h, %c : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc("add")
  %n, %mean, %inv = graph.layer_norm %a, %g {axis = 1 : i64, epsilon = 1.000000e-05 : f64} : (tensor<4x5xf32>, tensor<5xf32>) -> (tensor<4x5xf32>, tensor<4x1xf32>, tensor<4x1xf32>) loc("ln")
  %r = graph.relu %n : tensor<4x5xf32> loc("relu")
  %t = graph.tanh %r : tensor<4x5xf32> loc("tanh")
  %y = graph.gemm %t, %w2 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>) -> tensor<4x2xf32> loc("fc2")
  %s = graph.softmax %y {axis = 1 : i64} : tensor<4x2xf32> loc("softmax")
  %loss, %lp = graph.softmax_cross_entropy %y, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>) loc("loss")
  return %loss, %s : tensor<f32>, tensor<4x2xf32>
}
