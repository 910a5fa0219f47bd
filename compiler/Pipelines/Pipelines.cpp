//===- Pipelines.cpp - the pass pipelines amp-run and amp-opt share -------===//
#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace ampc {

void buildGraphPipeline(OpPassManager &pm) {
  pm.addPass(createConvertOnnxToGraphPass());
  // Folds what the converter left (shape arithmetic) and drops dead ops,
  // so no kernel computes a value nobody reads.
  pm.addPass(createCanonicalizerPass());
}

void buildInferencePipeline(OpPassManager &pm,
                            const InferencePipelineOptions &options) {
  buildGraphPipeline(pm);
  ConvertGraphToRtPassOptions rt;
  rt.fuse = options.fuse;
  rt.reuseMemory = options.reuseMemory;
  pm.addPass(createConvertGraphToRtPass(rt));
}

void registerPipelines() {
  PassPipelineRegistration<>(
      "ampc-infer",
      "Imported ONNX (onnx dialect) to rt form for inference: "
      "convert-onnx-to-graph, canonicalize, convert-graph-to-rt",
      [](OpPassManager &pm) { buildInferencePipeline(pm, {}); });
}

} // namespace ampc
