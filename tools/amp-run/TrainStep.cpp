//===- TrainStep.cpp - a model compiled into a training step --------------===//

#include "tools/amp-run/TrainStep.h"

#include "tools/amp-run/Fail.h"

#include "tools/amp-run/ProgramIO.h"

#include "dialects/Graph/GraphOps.h"

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

LogicalResult compileStep(OwningOpRef<ModuleOp> module,
                          const std::string &modelPath,
                          const StepCompileOptions &o, CompiledStep &out) {
  MLIRContext *ctx = module->getContext();
  OwningOpRef<ModuleOp> evalModule;
  if (o.withEval)
    evalModule = module->clone();

  PassManager pm(ctx);
  buildTrainingGraphPipeline(pm, o.training, o.amp, o.lossScale);
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
  InferencePipelineOptions e = o.lowering;
  e.amp = o.amp;
  if (e.amp)
    e.amp->report.clear(); // the training step's report is the one asked for
  PassManager evalPm(ctx);
  buildInferencePipeline(evalPm, e);
  if (failed(evalPm.run(*evalModule)))
    return failure();
  out.eval.emplace();
  return loadFunction(*evalModule, "forward", modelPath, *out.eval, nullptr);
}

} // namespace ampc::tools
