//===- StepState.h - state arguments and results of @train_step -*- C++ -*-===//
//
// The passes that build @train_step (graph-build-training, its working
// copies, amp-loss-scale) add state the same way: an argument with a name,
// an initial value and graph.state, and a result that replaces it after the
// step (graph.updates). One place writes those attributes.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_STEPSTATE_H
#define AMPC_COMPILER_TRANSFORMS_STEPSTATE_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>
#include <string>

namespace ampc {

/// Appends the state argument `name` (graph.name, graph.init = `init`,
/// graph.state) to `step` and returns it.
mlir::BlockArgument addStateArgument(mlir::func::FuncOp step, mlir::Type type,
                                     llvm::StringRef name, mlir::Attribute init,
                                     mlir::Location loc);

/// A result to append: the new value of state argument `updates` (named
/// like it), or, without `updates`, an output named `name`.
struct StepResult {
  mlir::Value value;
  std::optional<unsigned> updates;
  std::string name; // outputs only
};

/// Appends `results` to `step`'s return and function type.
void appendResults(mlir::func::FuncOp step, llvm::ArrayRef<StepResult> results);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_STEPSTATE_H
