// RUN: amp-opt %s -split-input-file -amp-recast-in-backward | FileCheck %s

// A widening cast that the forward pass (what the loss depends on) and the
// rest of the step both read: the rest reads a second cast of the f16 value,
// made right before its first reader, so the forward f32 copy dies after
// the exp; the f16 value is kept instead. The f32 exp of that widened value,
// which the rest reads too, is computed again from the same second cast. An
// extra output computed among the forward ops (before the forward pass's
// last reader) keeps the first copy.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[H:.*]] = graph.exp %arg0 : tensor<4xf16>
// CHECK: %[[W:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK: %[[X:.*]] = graph.neg %[[W]] : tensor<4xf32>
// CHECK: %[[E:.*]] = graph.exp %[[W]] : tensor<4xf32>
// CHECK: %[[L:.*]] = graph.reduce_sum %[[E]]
// CHECK: %[[W2:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK: %[[E2:.*]] = graph.exp %[[W2]] : tensor<4xf32>
// CHECK: %[[S:.*]] = graph.mul %[[E2]], %[[E2]]
// CHECK: %[[D:.*]] = graph.mul %[[S]], %[[W2]]
// CHECK: %[[D2:.*]] = graph.mul %[[D]], %[[W2]]
// CHECK: return %[[L]], %[[D2]], %[[X]]
func.func @train_step(%x: tensor<4xf16> {graph.name = "x"})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "g"}, tensor<4xf32> {graph.name = "extra"})
    attributes {graph.loss = "loss"} {
  %h = graph.exp %x : tensor<4xf16>
  %w = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %n = graph.neg %w : tensor<4xf32>
  %e = graph.exp %w : tensor<4xf32>
  %l = graph.reduce_sum %e {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %s = graph.mul %e, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d = graph.mul %s, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %d2 = graph.mul %d, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %l, %d2, %n : tensor<f32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// O1 attention: an f32 softmax of f16 scores, its result rounded for the
// next contraction. Its gradient reads the f32 result and the contraction's
// weight gradient reads the f16 copy: both are made again from the f16
// scores before the first of them (one widening cast, one softmax), so the
// step keeps the f16 scores (half the bytes of the f32 result) instead.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[S:.*]] = graph.exp %arg0 : tensor<2x4xf16>
// CHECK: %[[W:.*]] = amp.cast %[[S]] : tensor<2x4xf16> to tensor<2x4xf32>
// CHECK: %[[P:.*]] = graph.softmax %[[W]] {axis = 1 : i64}
// CHECK: %[[P16:.*]] = amp.cast %[[P]] : tensor<2x4xf32> to tensor<2x4xf16>
// CHECK: %[[L:.*]] = graph.reduce_sum %[[P16]]
// CHECK: %[[W2:.*]] = amp.cast %[[S]] : tensor<2x4xf16> to tensor<2x4xf32>
// CHECK: %[[PA:.*]] = graph.softmax %[[W2]] {axis = 1 : i64}
// CHECK: %[[PA16:.*]] = amp.cast %[[PA]] : tensor<2x4xf32> to tensor<2x4xf16>
// CHECK: graph.mul %[[PA16]], %[[PA16]]
// CHECK: graph.softmax_grad %{{.*}}, %[[PA]] {axis = 1 : i64}
// CHECK-NOT: graph.softmax
func.func @train_step(%x: tensor<2x4xf16> {graph.name = "x"})
    -> (tensor<f16> {graph.name = "loss"}, tensor<2x4xf16> {graph.name = "g"}, tensor<2x4xf32> {graph.name = "d"})
    attributes {graph.loss = "loss"} {
  %s = graph.exp %x : tensor<2x4xf16>
  %w = amp.cast %s : tensor<2x4xf16> to tensor<2x4xf32>
  %p = graph.softmax %w {axis = 1 : i64} : tensor<2x4xf32>
  %p16 = amp.cast %p : tensor<2x4xf32> to tensor<2x4xf16>
  %l = graph.reduce_sum %p16 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x4xf16>) -> tensor<f16>
  %g = graph.mul %p16, %p16 : (tensor<2x4xf16>, tensor<2x4xf16>) -> tensor<2x4xf16>
  %gw = amp.cast %g : tensor<2x4xf16> to tensor<2x4xf32>
  %d = graph.softmax_grad %gw, %p {axis = 1 : i64} : tensor<2x4xf32>
  return %l, %g, %d : tensor<f16>, tensor<2x4xf16>, tensor<2x4xf32>
}

// -----

// Left alone: an op of a widened value with a second operand (the mul), an
// op of a value that was not widened (the f32 exp of an f32 input), and
// dropout of a widened value (two results, new random numbers each run).
// CHECK-LABEL: func.func @train_step(
// CHECK-COUNT-1: amp.cast
// CHECK-NOT: amp.cast
// CHECK-COUNT-1: graph.exp
// CHECK-NOT: graph.exp
// CHECK-COUNT-1: graph.dropout
// CHECK-NOT: graph.dropout
func.func @train_step(%x: tensor<4xf16> {graph.name = "x"}, %y: tensor<4xf32> {graph.name = "y"})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "g"})
    attributes {graph.loss = "loss"} {
  %w = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %m = graph.mul %w, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %e = graph.exp %y : tensor<4xf32>
  %r, %mask = graph.dropout %w {ratio = 5.000000e-01 : f64, seed = 1 : i64, training = true} : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi1>)
  %a = graph.add %r, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %a2 = graph.add %a, %m : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %l = graph.reduce_sum %a2 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %g1 = graph.mul %m, %e : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %g = graph.mul %g1, %r : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %l, %g : tensor<f32>, tensor<4xf32>
}

// -----

// A narrowing cast (a softmax's output rounded for a contraction) is made
// again only where its f32 input is still live: here the rest of the step
// reads the input after the cast's reader, so the copy is made again.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[P:.*]] = graph.exp %arg0 : tensor<4xf32>
// CHECK: %[[P16:.*]] = amp.cast %[[P]] : tensor<4xf32> to tensor<4xf16>
// CHECK: graph.reduce_sum %[[P16]]
// CHECK: %[[AGAIN:.*]] = amp.cast %[[P]] : tensor<4xf32> to tensor<4xf16>
// CHECK: graph.mul %[[AGAIN]], %[[AGAIN]]
// CHECK: graph.mul %[[P]], %[[P]]
func.func @train_step(%x: tensor<4xf32> {graph.name = "x"})
    -> (tensor<f16> {graph.name = "loss"}, tensor<4xf16> {graph.name = "g"}, tensor<4xf32> {graph.name = "r"})
    attributes {graph.loss = "loss"} {
  %p = graph.exp %x : tensor<4xf32>
  %p16 = amp.cast %p : tensor<4xf32> to tensor<4xf16>
  %l = graph.reduce_sum %p16 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf16>) -> tensor<f16>
  %g = graph.mul %p16, %p16 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %r = graph.mul %p, %p : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %l, %g, %r : tensor<f16>, tensor<4xf16>, tensor<4xf32>
}

// -----

// Left alone: a narrowing cast whose input the rest of the step does not
// read (keeping the f32 input would cost more than the copy); a cast of a
// parameter (a working copy); a cast the forward pass does not read; and
// a step without a loss.
// CHECK-LABEL: func.func @train_step(
// CHECK-COUNT-3: amp.cast
// CHECK-NOT: amp.cast
func.func @train_step(%x: tensor<4xf32> {graph.name = "x"},
                      %w: tensor<4xf32> {graph.init = dense<1.0> : tensor<4xf32>, graph.name = "w", graph.trainable = true})
    -> (tensor<f16> {graph.name = "loss"}, tensor<4xf16> {graph.name = "g"}, tensor<4xf32> {graph.name = "h"})
    attributes {graph.loss = "loss"} {
  %p = graph.exp %x : tensor<4xf32>
  %p16 = amp.cast %p : tensor<4xf32> to tensor<4xf16>
  %w16 = amp.cast %w : tensor<4xf32> to tensor<4xf16>
  %m = graph.mul %p16, %w16 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %l = graph.reduce_sum %m {axes = array<i64: 0>, keepdims = false} : (tensor<4xf16>) -> tensor<f16>
  %g = graph.mul %p16, %w16 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %q = amp.cast %g : tensor<4xf16> to tensor<4xf32>
  return %l, %g, %q : tensor<f16>, tensor<4xf16>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @forward(
// CHECK-COUNT-1: amp.cast
// CHECK-NOT: amp.cast
func.func @forward(%x: tensor<4xf16>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = amp.cast %x : tensor<4xf16> to tensor<4xf32>
  %e = graph.exp %w : tensor<4xf32>
  %d = graph.mul %e, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %e, %d : tensor<4xf32>, tensor<4xf32>
}
