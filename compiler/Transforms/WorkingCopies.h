//===- WorkingCopies.h - working copies written by the update ---*- C++ -*-===//
//
// The part of graph-build-training that turns the working copy of a trained
// f32 parameter (the amp.cast marked amp.working_copy by amp-auto-cast)
// into state: read at the top of the step, written after the update.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_WORKINGCOPIES_H
#define AMPC_COMPILER_TRANSFORMS_WORKINGCOPIES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ampc {

/// In `step`, a function whose results carry graph.updates: each marked cast
/// `%w = amp.cast %p` of an argument `p` that a result updates becomes a
/// state argument `<p>.working` (graph.init: p's initial value rounded to
/// the type of %w) that replaces %w, and a new result `<p>.working`, tied to
/// it, that casts p's new value. Casts of parameters that no result updates
/// (frozen, unused) stay as they are. Fails, with an error, when an initial
/// value cannot be converted.
llvm::LogicalResult makeWorkingCopiesState(mlir::func::FuncOp step);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_WORKINGCOPIES_H
