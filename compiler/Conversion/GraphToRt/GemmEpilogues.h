//===- GemmEpilogues.h - post-ops fused into gemm kernels -------*- C++ -*-===//
//
// Decides which graph.gemm ops become one rt.kernel "gemm" with an
// `epilogue` (runtime/GemmEpilogue.h): an activation after the forward
// GEMM, an activation's gradient after the dX GEMM, a bias gradient beside
// the dW GEMM.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_GRAPHTORT_GEMMEPILOGUES_H
#define AMPC_COMPILER_CONVERSION_GRAPHTORT_GEMMEPILOGUES_H

#include "mlir/IR/Block.h"
#include "mlir/IR/Builders.h"

namespace ampc {

/// Replaces each gemm of `block` that has a fusable post-op by one gemm
/// kernel computing both. Runs before elementwise fusion, which would
/// otherwise take the activations into its own groups.
void fuseGemmEpilogues(mlir::Block &block, mlir::OpBuilder &b);

} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_GRAPHTORT_GEMMEPILOGUES_H
