//===- AmpMemory.h - planned memory of the f32 and AMP steps ----*- C++ -*-===//
//
// The memory side of the AMP report: the arena the planner laid out for the
// step with and without AMP, and what of it is activations (everything but
// the parameters, state and inputs, which both steps hold for the whole run).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMP_RUN_AMPMEMORY_H
#define AMPC_TOOLS_AMP_RUN_AMPMEMORY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <string>

namespace ampc::tools {

struct ArenaBytes {
  int64_t arena = 0;  // the planned arena of the function
  int64_t params = 0; // parameters and state (rt.param)
  int64_t inputs = 0; // graph inputs (rt.input)
  /// Low-precision working copies of parameters made in the step (cast
  /// kernels that read a parameter): part of the activations, shown apart
  /// because at small batches they, not the activations, set the peak.
  int64_t workingCopies = 0;
  int64_t activations() const { return arena - params - inputs; }
};

/// Measures function `name` of a module lowered to rt (memory planned).
mlir::FailureOr<ArenaBytes> measureArena(mlir::ModuleOp lowered,
                                         llvm::StringRef name);

/// Adds `"memory": {"f32": {...}, "amp": {...}}` to the report amp-auto-cast
/// wrote at `path`, rewriting it atomically.
mlir::LogicalResult addMemoryToReport(llvm::StringRef path,
                                      const ArenaBytes &f32,
                                      const ArenaBytes &amp,
                                      std::string &error);

/// Measures `name` in both lowered modules and adds the figures to the
/// report at `path`; returns the exit code after printing any error.
int reportMemory(mlir::ModuleOp f32, mlir::ModuleOp amp, llvm::StringRef name,
                 llvm::StringRef path);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMP_RUN_AMPMEMORY_H
