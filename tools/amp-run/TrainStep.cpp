//===- TrainStep.cpp - a model compiled into a training step --------------===//

#include "tools/amp-run/TrainStep.h"

#include "tools/amp-run/Fail.h"

#include "tools/amp-run/ProgramIO.h"

#include "dialects/Graph/GraphOps.h"
#include "runtime/io/TensorFile.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ampc::tools {
namespace {

LogicalResult failStep(const llvm::Twine &msg) {
  fail(msg);
  return failure();
}

} // namespace

rt::Status inputSpecsOf(mlir::ModuleOp module, std::vector<InputSpec> &out) {
  auto f = module.lookupSymbol<mlir::func::FuncOp>("forward");
  if (!f)
    return rt::Status::error("the imported module has no @forward");
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    if (f.getArgAttr(i, "onnx.initializer"))
      continue;
    auto name = f.getArgAttrOfType<mlir::StringAttr>(i, "onnx.name");
    auto type = dyn_cast<mlir::RankedTensorType>(f.getArgument(i).getType());
    if (!name || !type || !type.hasStaticShape())
      return rt::Status::error("graph input " + std::to_string(i) +
                               " has no static shape (give it with --shape)");
    std::optional<rt::DType> d = runtimeDType(type.getElementType());
    if (!d)
      return rt::Status::error("graph input '" + name.getValue().str() +
                               "' has an element type training data cannot "
                               "feed");
    if (type.getRank() == 0)
      return rt::Status::error("input '" + name.getValue().str() +
                               "' is a scalar; training data needs a batch "
                               "axis 0");
    out.push_back({name.getValue().str(), *d,
                   rt::Shape(type.getShape().begin(), type.getShape().end()),
                   0});
  }
  if (out.empty())
    return rt::Status::error("the model has no graph inputs to feed");
  return rt::Status::ok();
}

LogicalResult
lowerEvaluation(ModuleOp module, const InferencePipelineOptions &lowering,
                const std::optional<AmpAutoCastPassOptions> &amp) {
  InferencePipelineOptions e = lowering;
  e.amp = amp;
  if (e.amp)
    e.amp->report.clear(); // the training step's report is the one asked for
  PassManager pm(module.getContext());
  buildInferencePipeline(pm, e);
  return pm.run(module);
}

LogicalResult compileStep(OwningOpRef<ModuleOp> module,
                          const std::string &modelPath,
                          const StepCompileOptions &o, CompiledStep &out) {
  MLIRContext *ctx = module->getContext();
  OwningOpRef<ModuleOp> evalModule;
  if (o.withEval)
    evalModule = module->clone();

  PassManager pm(ctx);
  buildTrainingGraphPipeline(pm, o.training, o.amp, o.lossScale,
                             o.dataParallel);
  buildLoweringPipeline(pm, o.lowering);
  if (failed(pm.run(*module)))
    return failure();
  FailureOr<ArenaBytes> arena = measureArena(*module, "train_step");
  if (failed(arena))
    return failStep(modelPath +
                    ": the lowered @train_step has no planned arena");
  out.trainArena = *arena;
  // The step's facts (amp-describe-step's graph.step_info) as the Program
  // carries them, read as amp-exec reads them.
  std::optional<rt::StepInfo> info;
  if (failed(loadFunction(*module, "train_step", modelPath, out.train,
                          &out.programHash, &info)))
    return failure();
  if (!info)
    return failStep(modelPath + ": the compiled @train_step has no " +
                    graph::kStepInfoAttr);
  out.info = std::move(*info);
  module = nullptr; // its weights are in out.train now

  if (!evalModule)
    return success();
  if (failed(lowerEvaluation(*evalModule, o.lowering, o.amp)))
    return failure();
  out.eval.emplace();
  return loadFunction(*evalModule, "forward", modelPath, *out.eval, nullptr);
}

LogicalResult compileStepWithF32(OwningOpRef<ModuleOp> module,
                                 const std::string &modelPath,
                                 const StepCompileOptions &main, bool f32Eval,
                                 CompiledStep &step, CompiledStep &f32) {
  if (ampCasts(main.amp)) {
    StepCompileOptions f32Options = main;
    f32Options.amp.reset();
    f32Options.lossScale.reset();
    f32Options.withEval = f32Eval;
    if (failed(compileStep(module->clone(), modelPath, f32Options, f32)))
      return failure();
  }
  if (failed(compileStep(std::move(module), modelPath, main, step)))
    return failure();
  if (main.amp && !main.amp->report.empty()) {
    std::string err;
    if (failed(addMemoryToReport(main.amp->report, f32.trainArena,
                                 step.trainArena, err)))
      return failStep(err);
  }
  return success();
}

} // namespace ampc::tools
