// RUN: amp-opt %s --convert-graph-to-rt --split-input-file | FileCheck %s
// RUN: amp-opt %s --convert-graph-to-rt="fuse=false" --split-input-file | FileCheck %s --check-prefix=NOFUSE
// RUN: amp-opt %s --convert-graph-to-rt --split-input-file --mlir-print-debuginfo --mlir-print-local-scope | FileCheck %s --check-prefix=LOC

// An amp.cast is lowered as the graph.cast it computes, so it fuses with
// the elementwise ops around it into one kernel and no amp op is left.
// CHECK-LABEL: func.func @fused_round_trip()
// CHECK-NOT: amp.cast
// CHECK: %[[X:.*]] = rt.input "x" at {{[0-9]+}} : tensor<4x8xf32>
// CHECK: %[[K:.*]] = rt.kernel "fused"(%[[X]])
// CHECK-NEXT: ^bb0(%[[A:.*]]: tensor<4x8xf32>):
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[A]] : tensor<4x8xf32>
// CHECK-NEXT: %[[H:.*]] = graph.cast %[[R]] : tensor<4x8xf32> to tensor<4x8xf16>
// CHECK-NEXT: %[[N:.*]] = graph.neg %[[H]] : tensor<4x8xf16>
// CHECK-NEXT: %[[F:.*]] = graph.cast %[[N]] : tensor<4x8xf16> to tensor<4x8xf32>
// CHECK-NEXT: rt.yield %[[F]] : tensor<4x8xf32>
// CHECK-NOT: amp.cast
// CHECK: rt.output "y" %[[K]] : tensor<4x8xf32>
// Unfused, each cast is a kernel of its own, run as the runtime's "cast".
// NOFUSE-LABEL: func.func @fused_round_trip()
// NOFUSE: rt.kernel "relu"
// NOFUSE: rt.kernel "cast"
// NOFUSE-NEXT: ^bb0
// NOFUSE-NEXT: graph.cast {{.*}} : tensor<4x8xf32> to tensor<4x8xf16>
// NOFUSE: rt.kernel "neg"
// NOFUSE: rt.kernel "cast"
// NOFUSE-NEXT: ^bb0
// NOFUSE-NEXT: graph.cast {{.*}} : tensor<4x8xf16> to tensor<4x8xf32>
func.func @fused_round_trip(%x: tensor<4x8xf32> {graph.name = "x"})
    -> (tensor<4x8xf32> {graph.name = "y"}) {
  %0 = graph.relu %x : tensor<4x8xf32>
  %1 = amp.cast %0 : tensor<4x8xf32> to tensor<4x8xf16>
  %2 = graph.neg %1 : tensor<4x8xf16>
  %3 = amp.cast %2 : tensor<4x8xf16> to tensor<4x8xf32>
  return %3 : tensor<4x8xf32>
}

// -----

// A cast of a parameter feeding a contraction: the cast is a kernel of its
// own (its user is not elementwise), located where the amp.cast was.
// CHECK-LABEL: func.func @cast_before_matmul()
// CHECK: %[[W:.*]] = rt.param "w"
// CHECK: %[[C:.*]] = rt.kernel "cast"(%[[W]])
// CHECK: graph.cast {{.*}} : tensor<8x2xf32> to tensor<8x2xbf16>
// CHECK: rt.kernel "matmul"({{.*}}, %[[C]])
// LOC-LABEL: func.func @cast_before_matmul()
// LOC: graph.cast {{.*}} : tensor<8x2xf32> to tensor<8x2xbf16> loc("w_cast")
// LOC: rt.yield
// LOC-NEXT: } loc("w_cast")
func.func @cast_before_matmul(%x: tensor<4x8xbf16> {graph.name = "x"},
                              %w: tensor<8x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<8x2xf32>})
    -> (tensor<4x2xbf16> {graph.name = "y"}) {
  %0 = amp.cast %w : tensor<8x2xf32> to tensor<8x2xbf16> loc("w_cast")
  %1 = graph.matmul %x, %0 : (tensor<4x8xbf16>, tensor<8x2xbf16>) -> tensor<4x2xbf16>
  return %1 : tensor<4x2xbf16>
}
