//===- FoldCasts.h - folding of amp.cast ------------------------*- C++ -*-===//
//
// The work of the amp-fold-casts pass on one function, for the passes that
// place casts (amp-auto-cast) to run at their end.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_FOLDCASTS_H
#define AMPC_COMPILER_TRANSFORMS_FOLDCASTS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ampc {

/// Folds the amp.casts of `func` as AmpFoldCastsPass in Passes.td describes
/// and returns how many it removed. Running it again changes nothing.
unsigned foldAmpCasts(mlir::func::FuncOp func);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_FOLDCASTS_H
