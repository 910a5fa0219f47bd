//===- Fusion.h - grouping elementwise chains into kernels ------*- C++ -*-===//
//
// Decides which elementwise graph ops run as one fused kernel: a group has
// one root (its only value used outside) and members whose results all have
// the root's shape and are used only inside the group.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_GRAPHTORT_FUSION_H
#define AMPC_COMPILER_CONVERSION_GRAPHTORT_FUSION_H

#include "mlir/IR/Block.h"
#include "llvm/ADT/SmallVector.h"

namespace ampc {

/// True for graph ops the runtime runs elementwise (and so can fuse).
bool isElementwise(mlir::Operation *op);

/// Groups of elementwise ops in `block`, each in block order with the root
/// last. Ops in no group are not listed; with `fuse` false every
/// elementwise op is a group of one.
llvm::SmallVector<llvm::SmallVector<mlir::Operation *>>
planFusion(mlir::Block &block, bool fuse);

} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_GRAPHTORT_FUSION_H
