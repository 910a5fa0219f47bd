//===- StepMemory.h - what the planned arena of a step holds ----*- C++ -*-===//
//
// Reads a function lowered to rt (kernels in launch order, arena offsets,
// types) and splits its planned memory into what a user asks about: the
// parameters and optimizer state, the low-precision working copies, the
// parameter gradients, the forward values saved for the backward pass and
// the rest of the step's per-step values. docs/amp.md ("Memory") gives the
// definitions in prose; StepMemory.cpp gives them in code.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMP_RUN_STEPMEMORY_H
#define AMPC_TOOLS_AMP_RUN_STEPMEMORY_H

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>

namespace ampc::tools {

struct ArenaBytes {
  int64_t arena = 0; // the planned arena of the function
  /// Parameters, optimizer state, step counters and loss-scale state
  /// (rt.param), without the working copies kept as state.
  int64_t params = 0;
  int64_t inputs = 0; // graph inputs (rt.input)
  /// O2's (and O3-with-master-weights') low-precision copies of the weights,
  /// kept as state and rewritten by the optimizer update (rt.param).
  int64_t workingCopyState = 0;
  /// O1's (and inference's) low-precision copies of parameters made in the
  /// step: kernels that only cast a parameter. Per-step values, so part of
  /// activations() too.
  int64_t workingCopyCasts = 0;
  /// The most parameter-gradient bytes live at one kernel: every value that
  /// an optimizer update reads as its gradient, or that such a value is a
  /// cast (or other shape-preserving copy) of, live from the kernel that
  /// writes it to the last kernel that reads it, bytes shared in place
  /// counted once.
  int64_t gradients = 0;
  /// Of the `gradients` bytes, those the plan places in working copies'
  /// bytes (state), between the backward pass's last read of a copy and
  /// the update that writes it again: no arena bytes of their own.
  int64_t gradientsInWorkingCopies = 0;
  /// The forward values the backward pass reads: results of forward kernels
  /// (those the loss depends on) and inputs, read by backward kernels (those
  /// a gradient depends on that are not forward), parameters and working
  /// copies aside; each value counted once. An input counted here is also
  /// in `inputs`, not in activations().
  int64_t savedForBackward = 0;
  /// Of the `savedForBackward` bytes, those of f32 values: what an AMP step
  /// keeps in f32 for its backward pass (the loss, and at O1 what autocast's
  /// rules keep f32), which no halving of the rest can shrink.
  int64_t savedForBackwardF32 = 0;
  int64_t workingCopies() const { return workingCopyState + workingCopyCasts; }
  /// Everything the step makes and drops again: the arena less what persists
  /// across steps and the inputs. Activations, gradients, saved values and
  /// O1's working copies all live here (overlapping in time, so they do not
  /// add up to it).
  int64_t activations() const {
    return arena - params - workingCopyState - inputs;
  }
};

/// Measures function `name` of a module lowered to rt (memory planned).
/// Fails when there is no such function or it has no planned arena.
mlir::FailureOr<ArenaBytes> measureArena(mlir::ModuleOp lowered,
                                         llvm::StringRef name);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMP_RUN_STEPMEMORY_H
