//===- Infer.h - amp-run --mode infer ---------------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_INFER_H
#define AMPC_TOOLS_AMPRUN_INFER_H

#include "compiler/Pipelines/Pipelines.h"
#include "tools/amp-run/CompiledRun.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ampc::tools {

struct InferOptions : CompiledRunOptions {
  std::vector<std::pair<std::string, std::string>> inputs; // name, file
  std::string saveOutputs; // directory; empty: none
  unsigned repeat = 1;
  bool printOutputs = false;
};

/// Compiles the imported model's forward function and runs it on the
/// inputs (or stops at --emit's stage); returns the process exit code after
/// printing any error.
int runInference(mlir::OwningOpRef<mlir::ModuleOp> module,
                 const InferOptions &options);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_INFER_H
