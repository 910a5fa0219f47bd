//===- AmpMemory.h - planned memory of the f32 and AMP steps ----*- C++ -*-===//
//
// The memory side of the AMP report and of amp-run's summary: the figures of
// StepMemory.h for the step with and without AMP, side by side.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMP_RUN_AMPMEMORY_H
#define AMPC_TOOLS_AMP_RUN_AMPMEMORY_H

#include "tools/amp-run/StepMemory.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace ampc::tools {

/// The figures under the names the report gives them ("arena_bytes",
/// "saved_for_backward_bytes", ...).
llvm::json::Object toJson(const ArenaBytes &bytes);

/// Adds `"memory": {"f32": {...}, "amp": {...}}` to the report amp-auto-cast
/// wrote at `path`, rewriting it atomically.
mlir::LogicalResult addMemoryToReport(llvm::StringRef path,
                                      const ArenaBytes &f32,
                                      const ArenaBytes &amp,
                                      std::string &error);

/// Prints the summary's memory lines (MB of 2^20 bytes): `run` (the AMP
/// step, e.g. "AMP O2 f16") against f32.
void printMemorySummary(llvm::raw_ostream &os, llvm::StringRef run,
                        const ArenaBytes &amp, const ArenaBytes &f32);

/// Measures `name` in both lowered modules and adds the figures to the
/// report at `path`; returns the exit code after printing any error.
int reportMemory(mlir::ModuleOp f32, mlir::ModuleOp amp, llvm::StringRef name,
                 llvm::StringRef path);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMP_RUN_AMPMEMORY_H
