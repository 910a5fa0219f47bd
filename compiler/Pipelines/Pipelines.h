//===- Pipelines.h - the pass pipelines amp-run and amp-opt share -*- C++
//-*-===//
//
// One place that says which passes turn an imported model into rt form, so
// amp-run and `amp-opt --ampc-pipeline=...` can never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_PIPELINES_PIPELINES_H
#define AMPC_COMPILER_PIPELINES_PIPELINES_H

#include "compiler/Transforms/Passes.h"

#include "mlir/Pass/PassManager.h"

#include <string>
#include <vector>

#include <optional>

namespace ampc {

struct InferencePipelineOptions {
  bool fuse = true;
  bool reuseMemory = true;
  /// convert-graph-to-rt's memory-budget in bytes (0: none).
  uint64_t memoryBudget = 0;
  /// amp-auto-cast's options; none: the model's own precision.
  std::optional<AmpAutoCastPassOptions> amp;
};

/// onnx dialect -> graph ops, folded (what `amp-run --emit=graph` shows).
/// `trainingMode` converts ops that behave differently in training (batch
/// norm, dropout) as the training step runs them.
void buildGraphPipeline(mlir::OpPassManager &pm, bool trainingMode = false);

/// amp-auto-cast: what `amp-run --emit=amp` shows.
void buildAutoCastPipeline(mlir::OpPassManager &pm,
                           const AmpAutoCastPassOptions &options);

/// onnx dialect -> graph (-> AMP casts) -> rt, for running the forward
/// function.
void buildInferencePipeline(mlir::OpPassManager &pm,
                            const InferencePipelineOptions &options);

/// onnx dialect -> graph -> @train_step (backward graph and optimizer),
/// folded and deduplicated: what `amp-run --mode train --emit=training`
/// shows.
/// With AMP on, amp-loss-scale runs with `lossScale` (or its defaults:
/// dynamic for f16, none for bf16); without AMP only when `lossScale` is
/// given.
/// With `dataParallel`, graph-data-parallel averages the gradients over its
/// world size.
void buildTrainingGraphPipeline(
    mlir::OpPassManager &pm, const GraphBuildTrainingPassOptions &options,
    const std::optional<AmpAutoCastPassOptions> &amp = std::nullopt,
    const std::optional<AmpLossScalePassOptions> &lossScale = std::nullopt,
    const std::optional<GraphDataParallelPassOptions> &dataParallel =
        std::nullopt);

/// Whether amp-auto-cast with `amp` casts anything: it also runs at O0, to
/// write --amp-report (on rank 0 alone), and the step must then be the
/// one compiled without it.
inline bool ampCasts(const std::optional<AmpAutoCastPassOptions> &amp) {
  return amp && amp->level != AmpLevel::O0;
}

/// The part of buildTrainingGraphPipeline after the graph (and AMP) stages:
/// graph ops (with casts when `amp`: ampCasts) -> @train_step.
void buildTrainingStepPipeline(
    mlir::OpPassManager &pm, const GraphBuildTrainingPassOptions &options,
    bool amp, const std::optional<AmpLossScalePassOptions> &lossScale,
    const std::optional<GraphDataParallelPassOptions> &dataParallel =
        std::nullopt);
/// graph -> rt for every function of the module.
void buildLoweringPipeline(mlir::OpPassManager &pm,
                           const InferencePipelineOptions &options);

/// The graph inputs (by name) that convert-onnx-to-graph needs as
/// compile-time constants, found by converting a copy of the imported
/// `module` with its diagnostics held back: empty when it converts, or
/// when what stops it is not such an input. The conversion stops at the
/// first node it cannot convert, so a caller that binds these and imports
/// again may find more.
std::vector<std::string> findShapeInputs(mlir::ModuleOp module);

/// Registers `ampc-infer` and `ampc-train` for amp-opt, with the options
/// of PipelineOptions.h (`--ampc-train="amp=O2 lr=0.1"`).
void registerPipelines();

} // namespace ampc

#endif // AMPC_COMPILER_PIPELINES_PIPELINES_H
