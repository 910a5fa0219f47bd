//===- Pipelines.cpp - the pass pipelines amp-run and amp-opt share -------===//
#include "compiler/Pipelines/Pipelines.h"

#include "compiler/Conversion/Passes.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include "mlir/Transforms/Passes.h"

using namespace mlir;

namespace ampc {

void buildGraphPipeline(OpPassManager &pm, bool trainingMode) {
  ConvertOnnxToGraphPassOptions convert;
  convert.trainingMode = trainingMode;
  pm.addPass(createConvertOnnxToGraphPass(convert));
  // Folds what the converter left (shape arithmetic) and drops dead ops,
  // so no kernel computes a value nobody reads.
  pm.addPass(createCanonicalizerPass());
}

std::vector<std::string> findShapeInputs(ModuleOp module) {
  OwningOpRef<ModuleOp> copy = module.clone();
  std::vector<std::string> names;
  {
    ScopedDiagnosticHandler quiet(module.getContext(),
                                  [](Diagnostic &) { return success(); });
    PassManager pm(module.getContext());
    pm.addPass(createConvertOnnxToGraphPass());
    if (succeeded(pm.run(*copy)))
      return names;
  }
  auto func = copy->lookupSymbol<func::FuncOp>("forward");
  if (!func)
    return names;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    if (!func.getArgAttr(i, onnx::kNeedsConstantArgAttr))
      continue;
    auto name = func.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
    if (!name)
      name = func.getArgAttrOfType<StringAttr>(i, "onnx.name");
    if (name)
      names.push_back(name.str());
  }
  return names;
}

void buildLoweringPipeline(OpPassManager &pm,
                           const InferencePipelineOptions &options) {
  ConvertGraphToRtPassOptions rt;
  rt.fuse = options.fuse;
  rt.reuseMemory = options.reuseMemory;
  rt.memoryBudget = options.memoryBudget;
  pm.addPass(createConvertGraphToRtPass(rt));
}

void buildAutoCastPipeline(OpPassManager &pm,
                           const AmpAutoCastPassOptions &options) {
  pm.addPass(createAmpAutoCastPass(options));
}

void buildInferencePipeline(OpPassManager &pm,
                            const InferencePipelineOptions &options) {
  buildGraphPipeline(pm);
  if (options.amp)
    buildAutoCastPipeline(pm, *options.amp);
  buildLoweringPipeline(pm, options);
}

void buildTrainingStepPipeline(
    OpPassManager &pm, const GraphBuildTrainingPassOptions &options, bool amp,
    const std::optional<AmpLossScalePassOptions> &lossScale,
    const std::optional<GraphDataParallelPassOptions> &dataParallel) {
  pm.addPass(createGraphBuildTrainingPass(options));
  // Before loss scaling, whose overflow check then reads the averaged
  // gradients (the same on every rank).
  // (Also with a world size below 1, which the pass refuses.)
  if (dataParallel && dataParallel->worldSize != 1)
    pm.addPass(createGraphDataParallelPass(*dataParallel));
  // Before canonicalization folds the seed of the backward pass.
  if (amp || lossScale)
    pm.addPass(
        createAmpLossScalePass(lossScale.value_or(AmpLossScalePassOptions())));
  // The backward graph repeats forward shapes and constants (1.0 seeds,
  // reshapes of the same bias gradient): fold and share them. The gradient
  // of a cast is a cast, so precision boundaries leave round trips to fold.
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  if (amp) {
    pm.addPass(createAmpFoldCastsPass());
    pm.addPass(createAmpRecastInBackwardPass());
  }
  // After the casts settle: the loss's gradient may absorb its f16 cast.
  pm.addPass(createGraphFuseLossGradientPass());
  // Last: what the host loop needs, before lowering erases the graph ops.
  pm.addPass(createAmpDescribeStepPass());
}

void buildTrainingGraphPipeline(
    OpPassManager &pm, const GraphBuildTrainingPassOptions &options,
    const std::optional<AmpAutoCastPassOptions> &amp,
    const std::optional<AmpLossScalePassOptions> &lossScale,
    const std::optional<GraphDataParallelPassOptions> &dataParallel) {
  buildGraphPipeline(pm, /*trainingMode=*/true);
  // Before differentiation, so the backward graph inherits the forward
  // precision through the gradients of the casts.
  if (amp)
    buildAutoCastPipeline(pm, *amp);
  buildTrainingStepPipeline(pm, options, ampCasts(amp), lossScale,
                            dataParallel);
}

} // namespace ampc
