//===- OptionChecks.h - the training passes' option ranges ------*- C++ -*-===//
//
// The ranges of graph-build-training's, amp-loss-scale's and
// graph-data-parallel's options, checked in one place for two callers:
// each pass, before it reads the module (amp-opt's users, who spell the
// option as the pass does), and amp-run, before it compiles anything or
// starts ranks (its users, who spell it as a flag). The checks name the
// options; the caller says them in its own way.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_OPTIONCHECKS_H
#define AMPC_COMPILER_TRANSFORMS_OPTIONCHECKS_H

#include "compiler/Transforms/Passes.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace ampc {

/// Says that a value is refused: the options it concerns, by the names
/// the passes and the pipelines share, and what is wrong ("must be >= 1,
/// got 0").
using OptionRefusal = llvm::function_ref<void(
    llvm::ArrayRef<llvm::StringRef> options, const llvm::Twine &why)>;

/// Each returns failure after refusing the first bad value.
llvm::LogicalResult checkPassOptions(const GraphBuildTrainingPassOptions &o,
                                     OptionRefusal refuse);
llvm::LogicalResult checkPassOptions(const AmpLossScalePassOptions &o,
                                     OptionRefusal refuse);
llvm::LogicalResult checkPassOptions(const GraphDataParallelPassOptions &o,
                                     OptionRefusal refuse);

/// A refusal as a pass says it, at `loc`: "<pass>: option 'lr' must be
/// ...", "<pass>: options 'min-scale' and 'max-scale' need ...". (At a
/// location, not an op: amp-opt would print the whole module after it.)
void emitOptionError(mlir::Location loc, llvm::StringRef pass,
                     llvm::ArrayRef<llvm::StringRef> options,
                     const llvm::Twine &why);

/// A refusal as a tool's flags: "--lr must be ...", "--min-scale and
/// --max-scale need ...".
std::string flagRefusal(llvm::ArrayRef<llvm::StringRef> options,
                        const llvm::Twine &why);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_OPTIONCHECKS_H
