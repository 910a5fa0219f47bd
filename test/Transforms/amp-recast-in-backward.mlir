// RUN: amp-opt %s -split-input-file -amp-recast-in-backward | FileCheck %s

// A widening cast that the forward pass (what the loss depends on) and the
// rest of the step both read: the rest reads a second cast of the f16 value,
// made right before its first reader, so the forward f32 copy dies after
// the exp; the f16 value is kept instead. An extra output computed among the
// forward ops (before the forward pass's last reader) keeps the first copy.
// CHECK-LABEL: func.func @train_step(
// CHECK: %[[H:.*]] = graph.exp %arg0 : tensor<4xf16>
// CHECK: %[[W:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK: %[[X:.*]] = graph.neg %[[W]] : tensor<4xf32>
// CHECK: %[[E:.*]] = graph.exp %[[W]] : tensor<4xf32>
// CHECK: %[[L:.*]] = graph.reduce_sum %[[E]]
// CHECK: %[[S:.*]] = graph.mul %[[E]], %[[E]]
// CHECK: %[[W2:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
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
