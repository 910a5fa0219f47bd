//===- Train.h - amp-run --mode train ---------------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_TRAIN_H
#define AMPC_TOOLS_AMPRUN_TRAIN_H

#include "compiler/Pipelines/PipelineOptions.h"
#include "runtime/Session.h"
#include "runtime/tooling/RunFlags.h"
#include "tools/amp-run/CompiledRun.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <set>
#include <string>

namespace ampc::tools {

struct TrainOptions : CompiledRunOptions {
  GraphBuildTrainingPassOptions training; // lrTotalSteps 0: the run's updates
  std::optional<AmpLossScalePassOptions> lossScale; // none: no scaling
  // The flags the options come from: a checkpoint records their values.
  const TrainPipelineOptions *compileFlags = nullptr;
  // The options the model's recipe set (not the user).
  std::set<std::string> recipe;
  std::string saveOnnx;
  bool compareFp32 = false;
  // Data parallelism: the step averages its gradients over
  // dataParallel->worldSize ranks, which `collective` connects (null: one
  // process; only --emit then).
  std::optional<GraphDataParallelPassOptions> dataParallel;
  std::shared_ptr<rt::Collective> collective;
};

/// Compiles the imported model into a training step and runs it; returns
/// the process exit code after printing any error.
int runTraining(mlir::OwningOpRef<mlir::ModuleOp> module,
                const TrainOptions &options);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_TRAIN_H
