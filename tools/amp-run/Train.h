//===- Train.h - amp-run --mode train ---------------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_TRAIN_H
#define AMPC_TOOLS_AMPRUN_TRAIN_H

#include "compiler/Pipelines/Pipelines.h"
#include "runtime/Session.h"
#include "runtime/tooling/TrainData.h"

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
  int64_t maxOverflowSteps = 100;                   // 0: never stop
  bool checkNumerics = false;
  bool checksumState = false;
  InferencePipelineOptions lowering;
  rt::SessionOptions session;
  // "synthetic", "fashion-mnist" (Debian's copy), or a directory of .npy
  // files or of IDX files (train-*/t10k-*).
  std::string data;
  std::string testData;        // .npy directory of the test split
  std::optional<bool> shuffle; // none: on for IDX data, off for .npy
  int64_t steps = 0;           // 0: from `epochs`, or one epoch (1 step)
  int64_t epochs = 0;
  uint64_t seed = 0;
  // --data synthetic: batches drawn once and cycled (0: a fresh one a step).
  int64_t syntheticBatches = BatchSource::kDefaultSyntheticBatches;
  std::string metrics, evalMetrics, plot, saveOnnx;
  bool compareFp32 = false;
  std::string checkpointDir, resumeDir;
  int64_t checkpointEvery = 0;   // 0: every epoch
  std::string progress = "auto"; // auto | bar | lines | none
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
