//===- TrainStep.cpp - a model compiled into a training step --------------===//

#include "tools/amp-run/TrainStep.h"

#include "tools/amp-run/ProgramIO.h"

#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace ampc::tools {
namespace {

LogicalResult fail(const llvm::Twine &msg) {
  llvm::errs() << "amp-run: error: " << msg << "\n";
  return failure();
}

} // namespace

StepInfo describeStep(ModuleOp module) {
  StepInfo info;
  auto f = module.lookupSymbol<func::FuncOp>("train_step");
  if (!f)
    return info;
  if (auto loss = f->getAttrOfType<StringAttr>(graph::kLossAttr))
    info.loss = loss.getValue().str();
  if (auto n = f->getAttrOfType<IntegerAttr>(graph::kAccumulateStepsAttr))
    info.accumulate = n.getInt();
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    if (auto n = f.getResultAttrOfType<StringAttr>(i, graph::kNameAttr))
      info.checksOverflow |= n.getValue() == "found_inf";
  // A static scale is the constant the check and the updates divide by.
  f.walk([&](amp::CheckFiniteOp check) {
    if (auto c = check.getScale().getDefiningOp<graph::ConstantOp>())
      if (auto v = dyn_cast<DenseElementsAttr>(c.getValue()))
        info.staticScale = v.getSplatValue<APFloat>().convertToDouble();
  });
  auto argName = [&](Value v) -> std::string {
    auto arg = dyn_cast<BlockArgument>(v);
    if (!arg)
      return "";
    auto n =
        f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), graph::kNameAttr);
    return n ? n.getValue().str() : "";
  };
  // Labels feed a loss directly; their range is the scores' class axis.
  f.walk([&](Operation *op) {
    Value labels, scores;
    IntegerAttr ignore;
    if (auto sce = dyn_cast<graph::SoftmaxCrossEntropyOp>(op)) {
      labels = sce.getLabels();
      scores = sce.getScores();
      ignore = sce.getIgnoreIndexAttr();
    } else if (auto nll = dyn_cast<graph::NllLossOp>(op)) {
      labels = nll.getTarget();
      scores = nll.getInput();
      ignore = nll.getIgnoreIndexAttr();
    } else {
      return;
    }
    std::string name = argName(labels);
    if (name.empty())
      return;
    info.classes[name] = cast<ShapedType>(scores.getType()).getDimSize(1);
    if (ignore)
      info.ignoreIndex[name] = ignore.getInt();
  });
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, graph::kInitAttr) &&
        !f.getArgAttr(i, graph::kStateAttr))
      if (auto n = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr))
        info.weights.insert(n.getValue().str());
  // amp-auto-cast's O2 working copy of weight w is the state `w.working`.
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, graph::kStateAttr))
      if (auto n = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr)) {
        StringRef name = n.getValue();
        if (name.consume_back(".working") && info.weights.count(name.str()))
          info.workingCopies[name.str()] = n.getValue().str();
      }
  return info;
}

LogicalResult compileStep(OwningOpRef<ModuleOp> module,
                          const std::string &modelPath,
                          const StepCompileOptions &o, CompiledStep &out) {
  MLIRContext *ctx = module->getContext();
  OwningOpRef<ModuleOp> evalModule;
  if (o.withEval)
    evalModule = module->clone();

  // The step's facts are read between the two pipelines' halves: lowering
  // erases the graph ops they come from.
  PassManager graphPm(ctx), lowerPm(ctx);
  buildTrainingGraphPipeline(graphPm, o.training, o.amp, o.lossScale);
  buildLoweringPipeline(lowerPm, o.lowering);
  if (failed(graphPm.run(*module)))
    return failure();
  if (!module->lookupSymbol<func::FuncOp>("train_step"))
    return fail(modelPath + ": graph-build-training made no @train_step");
  out.info = describeStep(*module);
  if (failed(lowerPm.run(*module)))
    return failure();
  FailureOr<ArenaBytes> arena = measureArena(*module, "train_step");
  if (failed(arena))
    return fail(modelPath + ": the lowered @train_step has no planned arena");
  out.trainArena = *arena;
  if (failed(loadFunction(*module, "train_step", modelPath, out.train,
                          &out.programHash)))
    return failure();
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
