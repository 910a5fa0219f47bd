//===- Pipelines.h - the pass pipelines amp-run and amp-opt share -*- C++ -*-===//
//
// One place that says which passes turn an imported model into rt form, so
// amp-run and `amp-opt --ampc-pipeline=...` can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_PIPELINES_PIPELINES_H
#define AMPC_COMPILER_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace ampc {

struct InferencePipelineOptions {
  bool fuse = true;
  bool reuseMemory = true;
};

/// onnx dialect -> graph ops, folded (what `amp-run --emit=mlir` shows).
void buildGraphPipeline(mlir::OpPassManager &pm);

/// onnx dialect -> graph -> rt, for running the forward function.
void buildInferencePipeline(mlir::OpPassManager &pm,
                            const InferencePipelineOptions &options);

/// Registers `ampc-infer` for amp-opt (`--pass-pipeline` / `-ampc-infer`).
void registerPipelines();

} // namespace ampc

#endif // AMPC_COMPILER_PIPELINES_PIPELINES_H
