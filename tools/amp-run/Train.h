//===- Train.h - amp-run --mode train ---------------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_TRAIN_H
#define AMPC_TOOLS_AMPRUN_TRAIN_H

#include "compiler/Pipelines/Pipelines.h"
#include "runtime/Session.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include <string>

namespace ampc::tools {

struct TrainOptions {
  std::string modelPath;
  GraphBuildTrainingPassOptions training;
  std::optional<AmpAutoCastPassOptions> amp; // none: the model's precision
  std::optional<AmpLossScalePassOptions> lossScale; // none: no scaling
  int64_t maxOverflowSteps = 100;                   // 0: never stop
  bool checksumState = false;
  InferencePipelineOptions lowering;
  rt::SessionOptions session;
  std::string data; // a directory, or "synthetic"
  int64_t steps = 1;
  uint64_t seed = 0;
  std::string metrics;  // .csv or .json; empty: none
  std::string saveOnnx; // empty: none
  std::string emit;     // mlir | rt | program; empty: train
  std::string outputFile = "-";
};

/// Compiles the imported model into a training step and runs it; returns
/// the process exit code after printing any error.
int runTraining(mlir::OwningOpRef<mlir::ModuleOp> module,
                const TrainOptions &options);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_TRAIN_H
