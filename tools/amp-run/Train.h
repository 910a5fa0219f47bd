//===- Train.h - amp-run --mode train ---------------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_TRAIN_H
#define AMPC_TOOLS_AMPRUN_TRAIN_H

#include "compiler/Pipelines/PipelineOptions.h"
#include "runtime/Session.h"
#include "runtime/tooling/RunFlags.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <optional>
#include <string>

namespace ampc::tools {

struct TrainOptions {
  std::string modelPath;
  GraphBuildTrainingPassOptions training; // lrTotalSteps 0: the run's updates
  std::optional<AmpAutoCastPassOptions> amp; // none: the model's precision
  std::optional<AmpLossScalePassOptions> lossScale; // none: no scaling
  InferencePipelineOptions lowering;
  // The flags the options above come from: a checkpoint records their
  // values.
  const TrainPipelineOptions *compileFlags = nullptr;
  // The run-time flags amp-exec shares: device, data, length, metrics,
  // checkpoints, progress.
  RunOptions run;
  std::string plot, saveOnnx;
  bool compareFp32 = false;
  // graph | amp | training | rt | program; empty: train. onnx-import is
  // amp-run.cpp's (it needs no training options).
  std::string emit;
  std::string outputFile = "-";
  bool omitWeights = false; // --emit=program --program-weights=omit
};

/// Compiles the imported model into a training step and runs it; returns
/// the process exit code after printing any error.
int runTraining(mlir::OwningOpRef<mlir::ModuleOp> module,
                const TrainOptions &options);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_TRAIN_H
