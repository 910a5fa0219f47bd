// RUN: %amp-opt %s -canonicalize -split-input-file | FileCheck %s

// The canonical forms of PyTorch's Linear layers (GraphCanonicalize.cpp).

// matmul + a bias vector is a gemm with the bias as C, whichever side of
// the add the bias is on; AMP's accumulation attribute moves with it.
// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<4x3xf32>, %[[W:.*]]: tensor<3x5xf32>, %[[B:.*]]: tensor<5xf32>,
// CHECK-SAME: %[[XH:.*]]: tensor<4x3xf16>, %[[WH:.*]]: tensor<3x5xf16>, %[[BH:.*]]: tensor<5xf16>)
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[X]], %[[W]], %[[B]] : (tensor<4x3xf32>, tensor<3x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
// CHECK-NEXT: %[[GH:.*]] = graph.gemm %[[XH]], %[[WH]], %[[BH]] {graph.accumulate = f32} : (tensor<4x3xf16>, tensor<3x5xf16>, tensor<5xf16>) -> tensor<4x5xf16>
// CHECK-NEXT: return %[[G]], %[[GH]]
func.func @linear(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>, %b: tensor<5xf32>,
                  %xh: tensor<4x3xf16>, %wh: tensor<3x5xf16>, %bh: tensor<5xf16>)
    -> (tensor<4x5xf32>, tensor<4x5xf16>) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = graph.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %2 = graph.matmul %xh, %wh {graph.accumulate = f32} : (tensor<4x3xf16>, tensor<3x5xf16>) -> tensor<4x5xf16>
  %3 = graph.add %bh, %2 : (tensor<5xf16>, tensor<4x5xf16>) -> tensor<4x5xf16>
  return %1, %3 : tensor<4x5xf32>, tensor<4x5xf16>
}

// -----

// A transformer's projection (rank 3 against a 2-D weight) is one tall gemm
// between reshapes; a [1, 1, n] bias is reshaped to [n].
// CHECK-LABEL: func.func @projection
// CHECK-NEXT: %[[X2:.*]] = graph.reshape %arg0 : tensor<2x3x4xbf16> to tensor<6x4xbf16>
// CHECK-NEXT: %[[B1:.*]] = graph.reshape %arg2 : tensor<1x1x5xbf16> to tensor<5xbf16>
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[X2]], %arg1, %[[B1]] : (tensor<6x4xbf16>, tensor<4x5xbf16>, tensor<5xbf16>) -> tensor<6x5xbf16>
// CHECK-NEXT: %[[Y:.*]] = graph.reshape %[[G]] : tensor<6x5xbf16> to tensor<2x3x5xbf16>
// CHECK-NEXT: return %[[Y]]
func.func @projection(%x: tensor<2x3x4xbf16>, %w: tensor<4x5xbf16>, %b: tensor<1x1x5xbf16>)
    -> tensor<2x3x5xbf16> {
  %0 = graph.matmul %x, %w : (tensor<2x3x4xbf16>, tensor<4x5xbf16>) -> tensor<2x3x5xbf16>
  %1 = graph.add %0, %b : (tensor<2x3x5xbf16>, tensor<1x1x5xbf16>) -> tensor<2x3x5xbf16>
  return %1 : tensor<2x3x5xbf16>
}

// -----

// Not a gemm: a product read twice (it would be computed twice), a bias
// that is not one vector along the last dimension, a batched weight, and
// integers.
// CHECK-LABEL: func.func @not_a_linear
// CHECK-NOT: graph.gemm
// CHECK: return
func.func @not_a_linear(%x: tensor<4x3xf32>, %w: tensor<3x5xf32>,
                        %b: tensor<5xf32>, %full: tensor<4x5xf32>,
                        %col: tensor<4x1xf32>, %xb: tensor<2x4x3xf32>,
                        %wb: tensor<2x3x5xf32>, %xi: tensor<4x3xi64>,
                        %wi: tensor<3x5xi64>, %bi: tensor<5xi64>)
    -> (tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
        tensor<2x4x5xf32>, tensor<4x5xi64>) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %1 = graph.add %0, %b : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %2 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %3 = graph.add %2, %full : (tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  %4 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  %5 = graph.add %4, %col : (tensor<4x5xf32>, tensor<4x1xf32>) -> tensor<4x5xf32>
  %6 = graph.matmul %xb, %wb : (tensor<2x4x3xf32>, tensor<2x3x5xf32>) -> tensor<2x4x5xf32>
  %7 = graph.add %6, %b : (tensor<2x4x5xf32>, tensor<5xf32>) -> tensor<2x4x5xf32>
  %8 = graph.matmul %xi, %wi : (tensor<4x3xi64>, tensor<3x5xi64>) -> tensor<4x5xi64>
  %9 = graph.add %8, %bi : (tensor<4x5xi64>, tensor<5xi64>) -> tensor<4x5xi64>
  return %0, %1, %3, %5, %7, %9 : tensor<4x5xf32>, tensor<4x5xf32>, tensor<4x5xf32>,
      tensor<4x5xf32>, tensor<2x4x5xf32>, tensor<4x5xi64>
}

// -----

// PyTorch's nn.Linear on a 3-D input: MatMul with a Transpose of the
// weight, then Add. The gemm reads the weight through trans_b, so the
// transpose is dead; a transposed a sets trans_a, or clears it.
// CHECK-LABEL: func.func @torch_linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>, %[[W:.*]]: tensor<5x4xf32>, %[[B:.*]]: tensor<5xf32>, %[[AT:.*]]: tensor<4x6xf32>, %[[A:.*]]: tensor<6x4xf32>)
// CHECK-NEXT: %[[X2:.*]] = graph.reshape %[[X]] : tensor<2x3x4xf32> to tensor<6x4xf32>
// CHECK-NEXT: %[[G:.*]] = graph.gemm %[[X2]], %[[W]], %[[B]] {trans_b = true} : (tensor<6x4xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[Y:.*]] = graph.reshape %[[G]] : tensor<6x5xf32> to tensor<2x3x5xf32>
// CHECK-NEXT: %[[G2:.*]] = graph.gemm %[[AT]], %[[W]] {trans_a = true, trans_b = true} : (tensor<4x6xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: %[[G3:.*]] = graph.gemm %[[A]], %[[W]] {trans_b = true} : (tensor<6x4xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
// CHECK-NEXT: return %[[Y]], %[[G2]], %[[G3]]
func.func @torch_linear(%x: tensor<2x3x4xf32>, %w: tensor<5x4xf32>, %b: tensor<5xf32>,
                        %at: tensor<4x6xf32>, %a: tensor<6x4xf32>)
    -> (tensor<2x3x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>) {
  %wt = graph.transpose %w {perm = array<i64: 1, 0>} : (tensor<5x4xf32>) -> tensor<4x5xf32>
  %0 = graph.matmul %x, %wt : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>
  %1 = graph.add %0, %b : (tensor<2x3x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %t = graph.transpose %at {perm = array<i64: 1, 0>} : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %2 = graph.gemm %t, %wt : (tensor<6x4xf32>, tensor<4x5xf32>) -> tensor<6x5xf32>
  %ta = graph.transpose %a {perm = array<i64: 1, 0>} : (tensor<6x4xf32>) -> tensor<4x6xf32>
  %3 = graph.gemm %ta, %w {trans_a = true, trans_b = true} : (tensor<4x6xf32>, tensor<5x4xf32>) -> tensor<6x5xf32>
  return %1, %2, %3 : tensor<2x3x5xf32>, tensor<6x5xf32>, tensor<6x5xf32>
}
