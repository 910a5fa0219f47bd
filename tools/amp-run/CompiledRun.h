//===- CompiledRun.h - what both amp-run modes are given --------*- C++ -*-===//
//
// The options runTraining (Train.h) and runInference (Infer.h) share:
// amp-run's main fills them once.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_COMPILEDRUN_H
#define AMPC_TOOLS_AMPRUN_COMPILEDRUN_H

#include "compiler/Pipelines/Pipelines.h"
#include "runtime/tooling/RunFlags.h"

#include <optional>
#include <string>

namespace ampc::tools {

struct CompiledRunOptions {
  std::string modelPath;
  std::optional<AmpAutoCastPassOptions> amp; // none: the model's precision
  InferencePipelineOptions lowering;
  // The run-time flags amp-exec shares: device, data, length, metrics,
  // checkpoints, progress, numerics.
  RunOptions run;
  // A stage to stop after and print (graph | amp | training | rt | program);
  // empty: run. onnx-import is amp-run.cpp's.
  std::string emit;
  std::string outputFile = "-";
  bool omitWeights = false; // --emit=program --program-weights=omit
};

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_COMPILEDRUN_H
