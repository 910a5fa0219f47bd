//===- Train.cpp - amp-run --mode train -----------------------------------===//
//
// Opens the training data, compiles the step (and, for the memory figures
// and --compare-fp32, the f32 step beside it), runs the loop, and reports:
// the summary, the plot, the trained weights written back into the ONNX
// model.
//
//===----------------------------------------------------------------------===//

#include "tools/amp-run/Train.h"

#include "compiler/Import/Onnx/OnnxWeights.h"
#include "compiler/Target/ProgramWriter.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/cpu/Dnnl.h"
#include "runtime/tooling/Checkpoint.h"
#include "runtime/tooling/FashionMnist.h"
#include "runtime/tooling/Plot.h"
#include "runtime/tooling/TrainData.h"
#include "runtime/tooling/TrainLoop.h"
#include "tools/amp-run/AmpMemory.h"
#include "tools/amp-run/Fail.h"
#include "tools/amp-run/ProgramIO.h"
#include "tools/amp-run/RunSetup.h"
#include "tools/amp-run/TrainStep.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <filesystem>

using namespace llvm;

namespace ampc::tools {
namespace {

/// Stops after the stage `--emit` names.
int emitStage(mlir::OwningOpRef<mlir::ModuleOp> module, const TrainOptions &o) {
  mlir::MLIRContext *ctx = module->getContext();
  mlir::PassManager pm(ctx);
  buildGraphPipeline(pm, /*trainingMode=*/true);
  if (o.emit == "graph")
    return mlir::failed(pm.run(*module)) ? 1
                                         : printModule(*module, o.outputFile);
  if (o.amp)
    buildAutoCastPipeline(pm, *o.amp);
  if (o.emit != "amp")
    buildTrainingStepPipeline(pm, o.training, ampCasts(o.amp), o.lossScale,
                              o.dataParallel);
  if (o.emit == "rt" || o.emit == "program")
    buildLoweringPipeline(pm, o.lowering);
  // --emit=rt with --amp-report: the report gets its memory figures as a run
  // would, from the f32 step lowered beside this one, without running.
  mlir::OwningOpRef<mlir::ModuleOp> f32, eval;
  if (o.emit == "rt" && o.amp && !o.amp->report.empty())
    f32 = module->clone();
  if (o.emit == "program")
    eval = module->clone();
  if (mlir::failed(pm.run(*module)))
    return 1;
  if (f32) {
    mlir::PassManager f32Pm(ctx);
    buildTrainingGraphPipeline(f32Pm, o.training, std::nullopt, std::nullopt,
                               o.dataParallel);
    buildLoweringPipeline(f32Pm, o.lowering);
    if (mlir::failed(f32Pm.run(*f32)))
      return 1;
    if (int rc = reportMemory(*f32, *module, "train_step", o.amp->report))
      return rc;
  }
  if (o.emit != "program")
    return printModule(*module, o.outputFile);
  // The Program carries what amp-exec's host loop needs: graph.step_info,
  // which amp-describe-step put on @train_step, and the @forward that
  // evaluates the test split as amp-run's loop does, on the step's weights.
  if (mlir::failed(lowerEvaluation(*eval, o.lowering, o.amp)))
    return 1;
  auto forward = eval->lookupSymbol<mlir::func::FuncOp>("forward");
  if (!forward)
    return fail(o.modelPath + ": the inference pipeline left no @forward to "
                              "evaluate the test split with");
  if (module->lookupSymbol("forward"))
    return fail(o.modelPath + ": the training module already has a @forward, "
                              "the name of the evaluation function");
  forward->setAttr(rtir::kParamsFromStepAttr, mlir::UnitAttr::get(ctx));
  forward->remove();
  module->push_back(forward);
  ProgramWriteOptions w;
  w.omitWeights = o.omitWeights;
  return writeProgramFile(*module, o.outputFile, w);
}

/// Sessions for the train_step of `step` and, when it was compiled, its
/// forward function; the functions move into them.
rt::Status createSessions(CompiledStep &step, const rt::SessionOptions &options,
                          std::unique_ptr<rt::Session> &train,
                          std::unique_ptr<rt::Session> &eval) {
  AMPC_RETURN_IF_ERROR(
      rt::Session::create(std::move(step.train), options, train));
  if (step.eval)
    AMPC_RETURN_IF_ERROR(
        rt::Session::create(std::move(*step.eval), options, eval));
  return rt::Status::ok();
}

} // namespace

int runTraining(mlir::OwningOpRef<mlir::ModuleOp> module,
                const TrainOptions &given) {
  TrainOptions o = given;
  bool synthetic = o.run.data == "synthetic";
  // Data parallelism: this process is rank `rank` of `ranks`; rank 0 alone
  // evaluates, shows progress and writes files.
  int ranks = o.collective ? o.collective->size() : 1;
  int rank = o.collective ? o.collective->rank() : 0;
  bool lead = rank == 0;

  // File data is opened before compiling: epochs fix the step count, and
  // with it the default length of the lr schedule compiled into the step.
  // An --emit opens the training split too when --steps does not give the
  // length: the Program's schedule is that of the run amp-exec trains.
  std::vector<InputSpec> specs;
  FileData data;
  bool emits = !o.emit.empty();
  if (!emits || (o.run.steps == 0 && !synthetic && !o.run.data.empty())) {
    if (rt::Status s = inputSpecsOf(*module, specs); !s)
      return fail(o.modelPath + ": " + s.message());
    if (!synthetic)
      if (rt::Status s = openFileData(o.run.data, o.run.testData, o.run.shuffle,
                                      o.run.seed, specs, data,
                                      /*openTest=*/lead && !emits);
          !s)
        return fail(s.message());
  }
  int64_t batchesPerEpoch = data.train ? data.train->stepsPerEpoch() : 0;
  // (A step of the Program an --emit writes takes the batches of the ranks
  // it is compiled for.)
  if (o.run.steps == 0)
    o.run.steps = runSteps(o.run, batchesPerEpoch,
                           o.dataParallel ? o.dataParallel->worldSize : ranks);
  const EpochClock epochs{batchesPerEpoch, ranks};
  int64_t acc = o.training.accumulate;
  // Only a run applies gradients; --emit shows the step whatever --steps.
  if (o.emit.empty())
    if (rt::Status s = checkWholeUpdates(o.run, o.run.steps, acc,
                                         "--accumulate " + std::to_string(acc));
        !s)
      return fail(s.message());
  // A Program's schedule is fixed when it is written: one whose length only
  // the default run of one step gives would decay over one update of
  // amp-exec's run. (A run's is its own length; other stages only show it.)
  if (o.emit == "program")
    if (rt::Status s = checkScheduleLength(
            o.training, runLengthKnown(o.run, data.train != nullptr),
            o.recipe.count("lr-schedule") > 0);
        !s)
      return fail(s.message());
  resolveScheduleLength(o.training, o.run.steps);

  if (!o.emit.empty())
    return emitStage(std::move(module), o);

  // The f32 step is compiled beside an AMP one for the memory figures (and
  // run with --compare-fp32).
  bool amp = ampCasts(o.amp);
  StepCompileOptions main;
  main.training = o.training;
  main.amp = o.amp;
  main.lossScale = o.lossScale;
  main.lowering = o.lowering;
  main.withEval = data.test != nullptr && lead;
  main.dataParallel = o.dataParallel;
  CompiledStep step, f32;
  if (mlir::failed(compileStepWithF32(std::move(module), o.modelPath, main,
                                      main.withEval && o.compareFp32, step,
                                      f32)))
    return 1;

  if (rt::Status s = checkDataLabels(step.info, data); !s)
    return fail(s.message());

  std::unique_ptr<rt::Session> session, evalSession;
  rt::SessionOptions sessionOptions = sessionOptionsOf(o.run);
  sessionOptions.collective = o.collective;
  if (rt::Status s = createSessions(step, sessionOptions, session, evalSession);
      !s)
    return fail(s.message());
  if (synthetic)
    if (rt::Status s = openSyntheticData(o.run, step.info, specs, data); !s)
      return fail(s.message());

  // What a checkpoint must have been written with to be resumed here.
  std::map<std::string, std::string> config =
      checkpointConfig(*o.compileFlags, o.training, o.lossScale, o.lowering,
                       o.run, data.shuffled, step.programHash);

  LoopOptions lo = loopOptionsOf(o.run);
  lo.run = runLabel(o.amp);
  lo.asRank("amp-run", o.collective.get());
  lo.modelPath = o.modelPath;
  lo.steps = o.run.steps;
  lo.config = config;
  lo.rankConfig = exchangeConfig(*o.compileFlags);
  TrainLoop loop(*session, evalSession.get(), step.info, *data.train,
                 data.test.get(), lo);

  if (!o.run.resumeDir.empty()) {
    Checkpoint ckpt;
    if (rt::Status s = readCheckpoint(o.run.resumeDir, ckpt); !s)
      return fail("--resume: " + s.message());
    if (rt::Status s = checkResumable(ckpt, config, o.run.resumeDir); !s)
      return fail("--resume: " + s.message());
    if (ckpt.step >= o.run.steps)
      return fail("--resume: " + o.run.resumeDir + " is at step " +
                  Twine(ckpt.step) + " and the run has " + Twine(o.run.steps) +
                  " steps: nothing to train (--steps and --epochs count the "
                  "whole run)");
    if (rt::Status s = loop.resume(ckpt, o.run.resumeDir); !s)
      return fail("--resume: " + s.message());
  }

  // Say what is about to happen, in the terms of the flags (rank 0).
  if (lead) {
    outs() << "amp-run: training " << o.modelPath << " (" << lo.run;
    if (step.info.checksOverflow)
      outs() << ", loss scaling";
    outs() << ") on " << (synthetic ? "synthetic data" : o.run.data);
    // In steps, as the loop counts them (a data-parallel step takes `ranks`
    // batches); an epoch the ranks do not divide is counted in batches.
    int64_t perEpoch = epochs.wholeStepsPerEpoch();
    if (perEpoch > 0 && o.run.steps % perEpoch == 0)
      outs() << ", " << o.run.steps / perEpoch << " epoch"
             << (o.run.steps / perEpoch == 1 ? "" : "s") << " of " << perEpoch
             << " steps";
    else if (perEpoch > 0)
      outs() << ", " << o.run.steps << " steps ("
             << format("%.2f", static_cast<double>(o.run.steps) / perEpoch)
             << " epochs of " << perEpoch << ")";
    else if (epochs.known())
      outs() << ", " << o.run.steps << " steps ("
             << format("%.2f", epochs.fraction(o.run.steps)) << " epochs of "
             << batchesPerEpoch << " batches)";
    else
      outs() << ", " << o.run.steps << (o.run.steps == 1 ? " step" : " steps");
    if (epochs.known())
      outs() << ", batch " << specs[0].shape[0]
             << (data.shuffled ? ", shuffled" : "");
    if (ranks > 1)
      outs() << ", data-parallel over " << ranks << " ranks (a step takes "
             << ranks << " batches)";
    if (loop.firstStep() > 0)
      outs() << ", resumed at step " << loop.firstStep();
    outs() << "\n";
    if (amp && o.run.device == "cpu")
      outs() << "amp-run: "
             << rt::cpu::describeCpuCompute(stringifyEnum(o.amp->dtype).str())
             << "\n";
    outs().flush();
  }
  if (int rc = loop.run())
    return rc;
  // --checksum-state: the ranks' weights must be equal after every update;
  // rank 0 compares them after the last.
  if (ranks > 1 && o.run.checksumState) {
    uint32_t checksum = 0;
    if (rt::Status s = loop.compareRanks(checksum); !s)
      return fail(s.message());
    if (lead)
      outs() << formatv("amp-run: weights checksum {0:x8} on all {1} ranks\n",
                        checksum, ranks);
  }
  if (!lead)
    return 0; // rank 0 writes the model, the plot and the summary

  std::unique_ptr<TrainLoop> f32Loop;
  std::unique_ptr<rt::Session> f32Session, f32Eval;
  if (o.compareFp32 && amp) {
    if (rt::Status s =
            createSessions(f32, sessionOptionsOf(o.run), f32Session, f32Eval);
        !s)
      return fail(s.message());
    LoopOptions fo = lo;
    fo.run = "f32";
    fo.metrics.clear();
    fo.evalMetrics.clear();
    fo.checkpointDir.clear();
    fo.comparedCheckpoint = lo.checkpointDir;
    f32Loop = std::make_unique<TrainLoop>(*f32Session, f32Eval.get(), f32.info,
                                          *data.train, data.test.get(), fo);
    if (int rc = f32Loop->run())
      return rc;
  }

  if (!o.saveOnnx.empty()) {
    std::vector<rt::HostTensor> weights;
    if (rt::Status st = weightsOf(*session, step.info, weights); !st)
      return fail(st.message());
    std::string err;
    if (!writeOnnxWithWeights(o.modelPath, o.saveOnnx, weights, err))
      return fail("--save-onnx: " + err);
  }
  if (!o.run.plot.empty()) {
    std::vector<PlotRun> runs = {loop.plotRun(lo.run)};
    if (f32Loop)
      runs.push_back(f32Loop->plotRun("f32"));
    std::string title = sys::path::filename(o.modelPath).str() + ": " + lo.run +
                        (f32Loop ? " vs f32" : "");
    if (rt::Status s = writeTrainingPlot(o.run.plot, title, runs); !s)
      return fail("--plot: " + s.message());
  }

  // The summary: the first line is what scripts read.
  outs() << "amp-run: trained " << o.run.steps
         << (o.run.steps == 1 ? " step" : " steps");
  if (acc > 1)
    outs() << " (" << o.run.steps / acc << " updates of " << acc
           << " micro-batches)";
  outs() << "; final loss " << format("%.6g", loop.finalLoss());
  // Nine digits, so that the f32 scale reads back exactly.
  if (step.info.checksOverflow)
    outs() << "; skipped " << loop.skipped() << " (overflow); final loss scale "
           << format("%.9g", loop.currentScale());
  if (!std::isnan(loop.medianStepMs()))
    outs() << "; median step " << format("%.3f", loop.medianStepMs()) << " ms";
  // What the ranks cost rank 0: its time in the gradient all-reduces (the
  // exchange and the wait for the slowest rank), per step of this process.
  // MPI's only: on a GPU, NCCL's waits are the device's, which the host
  // does not see.
  if (ranks > 1 && o.run.device == "cpu" &&
      loop.history().stepRows.size() > size_t(loop.firstStep()))
    outs() << "; all-reduce "
           << format("%.3f",
                     o.collective->allReduceSeconds() * 1e3 /
                         static_cast<double>(loop.history().stepRows.size() -
                                             size_t(loop.firstStep())))
           << " ms per step";
  outs() << "\n";
  double testLoss, accuracy;
  if (loop.lastEval(testLoss, accuracy)) {
    outs() << "amp-run: test loss " << format("%.4f", testLoss);
    if (!std::isnan(accuracy))
      outs() << ", test accuracy " << format("%.2f", accuracy * 100) << "%";
    outs() << " (" << data.test->samples() << " samples); "
           << format("%.0f", loop.samplesPerSecond()) << " samples/s\n";
  }
  if (amp)
    printMemorySummary(outs(), lo.run, step.trainArena, f32.trainArena);
  if (f32Loop) {
    double f32Loss, f32Accuracy;
    outs() << "amp-run: f32 on the same batches: final loss "
           << format("%.6g", f32Loop->finalLoss());
    if (f32Loop->lastEval(f32Loss, f32Accuracy) &&
        loop.lastEval(testLoss, accuracy)) {
      outs() << ", test loss " << format("%.4f", f32Loss);
      if (!std::isnan(f32Accuracy))
        outs() << ", test accuracy " << format("%.2f", f32Accuracy * 100)
               << "% (" << lo.run << " "
               << format("%+.2f", (accuracy - f32Accuracy) * 100) << " points)";
    }
    outs() << "; " << lo.run << " runs at "
           << format("%.2f",
                     loop.samplesPerSecond() / f32Loop->samplesPerSecond())
           << "x the f32 samples/s\n";
  }
  return 0;
}

} // namespace ampc::tools
