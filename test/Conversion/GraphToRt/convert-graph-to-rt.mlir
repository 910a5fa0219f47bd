// RUN: amp-opt %s --convert-graph-to-rt --split-input-file | FileCheck %s
// RUN: amp-opt %s --convert-graph-to-rt="fuse=false" --split-input-file | FileCheck %s --check-prefix=NOFUSE
// RUN: amp-opt %s --convert-graph-to-rt="reuse-memory=false" --split-input-file | FileCheck %s --check-prefix=NOREUSE

// A chain of elementwise ops becomes one kernel. Its result is f16, so it
// cannot be written in place over the f32 input.
// CHECK-LABEL: func.func @chain()
// CHECK-SAME: rt.arena_size = 256
// CHECK: %[[X:.*]] = rt.input "x" at 0 : tensor<4x8xf32>
// CHECK: %[[B:.*]] = rt.param "b" at 128
// CHECK-NOT: rt.kernel
// CHECK: %[[K:.*]] = rt.kernel "fused"(%[[X]], %[[B]]) at [192]
// CHECK: graph.add
// CHECK: graph.relu
// CHECK: graph.cast
// CHECK: rt.yield
// CHECK-NOT: rt.kernel
// CHECK: rt.output "y" %[[K]] : tensor<4x8xf16>
// NOFUSE-LABEL: func.func @chain()
// NOFUSE: rt.kernel "add"
// NOFUSE: rt.kernel "relu"
// NOFUSE: rt.kernel "cast"
// NOREUSE-LABEL: func.func @chain()
// NOREUSE-SAME: rt.arena_size = 256
// NOREUSE: rt.kernel "fused"({{.*}}) at [192]
func.func @chain(%x: tensor<4x8xf32> {graph.name = "x"},
                 %b: tensor<8xf32> {graph.name = "b", graph.init = dense<1.0> : tensor<8xf32>})
    -> (tensor<4x8xf16> {graph.name = "y"}) {
  %0 = graph.add %x, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %1 = graph.relu %0 : tensor<4x8xf32>
  %2 = graph.cast %1 : tensor<4x8xf32> to tensor<4x8xf16>
  return %2 : tensor<4x8xf16>
}

// -----

// A value used outside the chain is stored: the chain splits there, and
// that result stays live to the end (it is an output), so the second kernel
// may not overwrite it. The first runs in place over the input.
// CHECK-LABEL: func.func @shared_value()
// CHECK: %[[X:.*]] = rt.input "x" at 0
// CHECK: %[[E:.*]] = rt.kernel "exp"(%[[X]]) at [0]
// CHECK: %[[G:.*]] = rt.kernel "fused"(%[[E]]) at [64]
// CHECK: graph.neg
// CHECK: graph.tanh
// CHECK: graph.add
// CHECK: rt.output "y" %[[G]]
// CHECK: rt.output "e" %[[E]]
// A value used only inside the chain is not stored: everything fuses and
// runs in place over the input.
// CHECK-LABEL: func.func @diamond()
// CHECK: %[[X:.*]] = rt.input "x" at 0
// CHECK: %[[K:.*]] = rt.kernel "fused"(%[[X]]) at [0]
// CHECK-COUNT-4: graph.
// CHECK: rt.yield
// CHECK: rt.output "y" %[[K]]
func.func @shared_value(%x: tensor<16xf32> {graph.name = "x"})
    -> (tensor<16xf32> {graph.name = "y"}, tensor<16xf32> {graph.name = "e"}) {
  %0 = graph.exp %x : tensor<16xf32>
  %1 = graph.neg %0 : tensor<16xf32>
  %2 = graph.tanh %1 : tensor<16xf32>
  %3 = graph.add %0, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %3, %0 : tensor<16xf32>, tensor<16xf32>
}
func.func @diamond(%x: tensor<16xf32> {graph.name = "x"})
    -> (tensor<16xf32> {graph.name = "y"}) {
  %0 = graph.exp %x : tensor<16xf32>
  %1 = graph.neg %0 : tensor<16xf32>
  %2 = graph.tanh %1 : tensor<16xf32>
  %3 = graph.add %0, %2 : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  return %3 : tensor<16xf32>
}

// -----

// Ops of another shape are not fused (a fused kernel walks one index
// space); a broadcast input is read, never overwritten in place.
// CHECK-LABEL: func.func @broadcast_boundary()
// CHECK: %[[A:.*]] = rt.input "a" at 0 : tensor<1x8xf32>
// CHECK: %[[X:.*]] = rt.input "x" at 64 : tensor<4x8xf32>
// CHECK: %[[S:.*]] = rt.kernel "sqrt"(%[[A]]) at [0]
// CHECK: rt.kernel "mul"(%[[X]], %[[S]]) at [64]
func.func @broadcast_boundary(%a: tensor<1x8xf32> {graph.name = "a"},
                              %x: tensor<4x8xf32> {graph.name = "x"})
    -> (tensor<4x8xf32> {graph.name = "y"}) {
  %0 = graph.sqrt %a : tensor<1x8xf32>
  %1 = graph.mul %x, %0 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  return %1 : tensor<4x8xf32>
}

// -----

// Contractions are their own kernels and never write over what they read;
// the relu after a gemm is its epilogue (gemm-epilogues.mlir tests them),
// so the pre-activation is never stored; a reshape is a view of the same
// bytes; dead bytes are reused.
// CHECK-LABEL: func.func @mlp()
// CHECK-SAME: rt.arena_size = 1152
// CHECK: %[[X:.*]] = rt.input "x" at 0 : tensor<2x3x4xf32>
// CHECK: %[[W1:.*]] = rt.param "w1" at 128
// CHECK: %[[W2:.*]] = rt.param "w2" at 896
// CHECK: %[[V:.*]] = rt.view %[[X]] : tensor<2x3x4xf32> to tensor<2x12xf32>
// CHECK: %[[R:.*]] = rt.kernel "gemm"(%[[V]], %[[W1]]) at [1024] {epilogue = "relu"}
// CHECK: graph.gemm
// CHECK-NEXT: graph.relu
// CHECK: %[[Y:.*]] = rt.kernel "matmul"(%[[R]], %[[W2]]) at [0]
// CHECK: rt.output "y" %[[Y]]
// NOREUSE-LABEL: func.func @mlp()
// NOREUSE-SAME: rt.arena_size = 1216
// NOREUSE: rt.kernel "matmul"({{.*}}) at [1152]
func.func @mlp(%x: tensor<2x3x4xf32> {graph.name = "x"},
               %w1: tensor<12x16xf32> {graph.name = "w1", graph.init = dense<0.5> : tensor<12x16xf32>},
               %w2: tensor<16x2xf32> {graph.name = "w2", graph.init = dense<0.25> : tensor<16x2xf32>})
    -> (tensor<2x2xf32> {graph.name = "y"}) {
  %0 = graph.reshape %x : tensor<2x3x4xf32> to tensor<2x12xf32>
  %1 = graph.gemm %0, %w1 : (tensor<2x12xf32>, tensor<12x16xf32>) -> tensor<2x16xf32>
  %2 = graph.relu %1 : tensor<2x16xf32>
  %3 = graph.matmul %2, %w2 : (tensor<2x16xf32>, tensor<16x2xf32>) -> tensor<2x2xf32>
  return %3 : tensor<2x2xf32>
}

// -----

// Constants stay outside the arena; every result of a multi-result op gets
// bytes, and an unused one is released right after its kernel.
// CHECK-LABEL: func.func @multi_result()
// CHECK: %[[C:.*]] = graph.constant dense<1.000000e+00> : tensor<8xf32>
// CHECK: rt.kernel "layer_norm"(%{{.*}}, %[[C]]) at [64, 128, 192]
// CHECK: rt.output "y"
// CHECK: rt.output "mean"
func.func @multi_result(%x: tensor<2x8xf32> {graph.name = "x"})
    -> (tensor<2x8xf32> {graph.name = "y"}, tensor<2x1xf32> {graph.name = "mean"}) {
  %s = graph.constant dense<1.0> : tensor<8xf32>
  %y, %m, %r = graph.layer_norm %x, %s {axis = 1 : i64, epsilon = 1.0e-5 : f64}
      : (tensor<2x8xf32>, tensor<8xf32>) -> (tensor<2x8xf32>, tensor<2x1xf32>, tensor<2x1xf32>)
  return %y, %m : tensor<2x8xf32>, tensor<2x1xf32>
}

// -----

// Placed as the walk goes (best fit: x 0, y 64, a 192, b 256, d 0), the
// 256-byte concat finds only the 192 free bytes between d and b and goes on
// top, for an arena of 640 bytes. The same pieces placed offline, largest
// first at the lowest offset free over their whole life, need 512: the
// concat takes the bytes of y, x and a, dead by then.
// CHECK-LABEL: func.func @fragments()
// CHECK-SAME: rt.arena_size = 512
// CHECK: rt.input "x" at 128
// CHECK: rt.input "y" at 0
// CHECK: %[[A:.*]] = rt.kernel "softmax"(%{{.*}}) at [192]
// CHECK: %[[B:.*]] = rt.kernel "softmax"(%{{.*}}) at [256]
// CHECK: %[[D:.*]] = rt.kernel "softmax"(%[[A]]) at [384]
// CHECK: rt.kernel "concat"(%[[B]], %[[D]], %[[D]]) at [0]
// CHECK: rt.kernel "softmax"(%[[B]]) at [384]
// NOREUSE-LABEL: func.func @fragments()
// NOREUSE-SAME: rt.arena_size = 832
func.func @fragments(%x: tensor<16xf32> {graph.name = "x"},
                     %y: tensor<32xf32> {graph.name = "y"})
    -> (tensor<64xf32> {graph.name = "c"}, tensor<32xf32> {graph.name = "e"}) {
  %a = graph.softmax %x {axis = 0 : i64} : tensor<16xf32>
  %b = graph.softmax %y {axis = 0 : i64} : tensor<32xf32>
  %d = graph.softmax %a {axis = 0 : i64} : tensor<16xf32>
  %c = graph.concat %b, %d, %d {axis = 0 : i64} : (tensor<32xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<64xf32>
  %e = graph.softmax %b {axis = 0 : i64} : tensor<32xf32>
  return %c, %e : tensor<64xf32>, tensor<32xf32>
}

// -----

// An input nobody reads still keeps its bytes: the session copies every
// input into the arena before the run, so the input and the parameter
// after it, and the kernels' results, must not share them.
// CHECK-LABEL: func.func @unread_input()
// CHECK: rt.input "unused" at 0 : tensor<16xf32>
// CHECK: rt.input "x" at 64 : tensor<16xf32>
// CHECK: rt.param "w" at 128 {init
// CHECK: rt.kernel "mul"(%{{.*}}) at [64]
// CHECK: rt.kernel "softmax"(%{{.*}}) at [192]
func.func @unread_input(%unused: tensor<16xf32> {graph.name = "unused"},
                        %x: tensor<16xf32> {graph.name = "x"},
                        %w: tensor<16xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<16xf32>})
    -> (tensor<16xf32> {graph.name = "y"}) {
  %0 = graph.mul %x, %w : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
  %1 = graph.softmax %0 {axis = 0 : i64} : tensor<16xf32>
  return %1 : tensor<16xf32>
}
