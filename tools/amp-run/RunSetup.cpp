//===- RunSetup.cpp - what amp-run and the Python module check and derive -===//

#include "tools/amp-run/RunSetup.h"

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Import/Onnx/OnnxMetadata.h"
#include "compiler/Transforms/OptionChecks.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/Session.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/tooling/Epochs.h"
#include "runtime/tooling/NonFinite.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <filesystem>

namespace ampc::tools {
namespace {

constexpr llvm::StringLiteral kRecipeOptions[] = {
    "optimizer",      "lr",          "momentum",     "dampening",
    "beta1",          "beta2",       "epsilon",      "weight-decay",
    "lr-decay",       "lr-schedule", "lr-step-size", "lr-gamma",
    "lr-total-steps", "lr-min",      "epochs",       "steps",
    "accumulate",     "loss"};

/// Whether two spellings of --data (or --test-data) name one directory:
/// data, ./data/ and its absolute path do. Keywords (synthetic,
/// fashion-mnist) and an empty value only match themselves.
bool sameDataDirectory(const std::string &a, const std::string &b) {
  if (a == b)
    return true;
  auto keyword = [](const std::string &v) {
    return v.empty() || v == "synthetic" || v == "fashion-mnist";
  };
  if (keyword(a) || keyword(b))
    return false;
  std::error_code ea, eb;
  std::filesystem::path ca = std::filesystem::weakly_canonical(a, ea),
                        cb = std::filesystem::weakly_canonical(b, eb);
  return !ea && !eb && ca == cb;
}

} // namespace

std::unique_ptr<mlir::MLIRContext> createCompilerContext() {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, onnx::OnnxDialect,
                  graph::GraphDialect, amp::AmpDialect, rtir::RtDialect>();
  registerGradientModels(registry);
  auto context = std::make_unique<mlir::MLIRContext>(registry);
  context->printOpOnDiagnostic(false);
  context->loadAllAvailableDialects();
  return context;
}

llvm::ArrayRef<llvm::StringLiteral> recipeOptions() { return kRecipeOptions; }

rt::Status readRecipe(llvm::StringRef modelBytes, const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out) {
  std::vector<std::pair<std::string, std::string>> props;
  std::string err;
  if (!readOnnxMetadata(modelBytes, modelPath, props, err))
    return rt::Status::error(err);
  out.clear();
  for (const auto &[key, value] : props) {
    llvm::StringRef name(key);
    if (!name.consume_front("ampc.train."))
      continue;
    if (!llvm::is_contained(kRecipeOptions, name))
      return rt::Status::error(
          modelPath + ": metadata '" + key + "' names no option a recipe " +
          "may set (" + llvm::join(llvm::ArrayRef(kRecipeOptions), ", ") + ")");
    out.emplace_back(name.str(), value);
  }
  return rt::Status::ok();
}

bool recipeApplies(llvm::StringRef option, const RunOptions &run,
                   bool optionGiven) {
  // The run's length is one choice: a user's --steps overrides the recipe's
  // --epochs as well. Synthetic data has no epochs: a recipe's length in
  // epochs is for the data it was tuned on.
  bool lengthGiven = run.isGiven("steps") || run.isGiven("epochs");
  return !optionGiven &&
         !((option == "steps" || option == "epochs") && lengthGiven) &&
         !(option == "epochs" && run.data == "synthetic");
}

std::string badRecipeValue(const std::string &modelPath,
                           const std::string &option,
                           const std::string &value) {
  return modelPath + ": metadata 'ampc.train." + option + "' = '" + value +
         "' is not a valid --" + option + " value";
}

std::string runLabel(const std::optional<AmpAutoCastPassOptions> &amp) {
  if (!ampCasts(amp))
    return "f32";
  return ("AMP " + stringifyEnum(amp->level) + " " + stringifyEnum(amp->dtype))
      .str();
}

rt::Status checkAmpOptionsNeedAmp(AmpLevel level,
                                  const std::vector<std::string> &given) {
  if (level != AmpLevel::O0)
    return rt::Status::ok();
  for (const std::string &name : given)
    if (name != "amp")
      return rt::Status::error("--" + name +
                               " shapes what AMP does, and without --amp "
                               "O1|O2|O3 there is none: give --amp or leave "
                               "it out");
  return rt::Status::ok();
}

rt::Status checkTrainOptions(const TrainPipelineOptions &o) {
  // The passes check the same (amp-opt's pipelines); here a value is
  // refused by its flag, before --nproc starts ranks that would each compile
  // to find it. graph-data-parallel calls this one world-size.
  if (o.dataParallel < 1)
    return rt::Status::error("--data-parallel must be >= 1, got " +
                             std::to_string(o.dataParallel));
  std::string refusal;
  auto refuse = [&](llvm::ArrayRef<llvm::StringRef> options,
                    const llvm::Twine &why) {
    refusal = flagRefusal(options, why);
  };
  GraphBuildTrainingPassOptions training = o.trainingOptions();
  // Left out, it is the run's updates, known once the data is read.
  if (!o.given("lr-total-steps"))
    training.lrTotalSteps = GraphBuildTrainingPassOptions().lrTotalSteps;
  std::optional<AmpLossScalePassOptions> lossScale = o.lossScaleOptions();
  if (mlir::failed(checkPassOptions(training, refuse)) ||
      (lossScale && mlir::failed(checkPassOptions(*lossScale, refuse))) ||
      mlir::failed(checkPassOptions(o.dataParallelOptions(), refuse)))
    return rt::Status::error(refusal);
  return rt::Status::ok();
}

rt::Status openRunDevice(const RunOptions &run, uint64_t &budget) {
  uint64_t deviceMemory = 0;
  if (rt::Status s = rt::Session::openDevice(run.device, deviceMemory); !s)
    return rt::Status::error("--device " + run.device + ": " + s.message());
  if (rt::Status s = rt::cpu::checkThreadCount(run.threads); !s)
    return rt::Status::error("--threads: " + s.message());
  // A step that cannot fit is refused when it is compiled, naming what is
  // too large.
  budget = run.isGiven("memory-budget") ? memoryBudgetBytes(run.memoryBudget)
                                        : deviceMemory;
  return rt::Status::ok();
}

void resolveScheduleLength(GraphBuildTrainingPassOptions &training,
                           int64_t steps) {
  if (training.lrTotalSteps > 0)
    return;
  int64_t acc = training.accumulate;
  training.lrTotalSteps = graph::symbolizeLrScheduleKind(training.lrSchedule) ==
                                  graph::LrScheduleKind::Cosine
                              ? std::max<int64_t>(1, (steps + acc - 1) / acc)
                              : GraphBuildTrainingPassOptions().lrTotalSteps;
}

bool runLengthKnown(const RunOptions &run, bool fileData) {
  return run.isGiven("steps") || fileData;
}

rt::Status checkScheduleLength(const GraphBuildTrainingPassOptions &training,
                               bool lengthKnown, bool fromRecipe) {
  if (lengthKnown || training.lrTotalSteps > 0 ||
      graph::symbolizeLrScheduleKind(training.lrSchedule) !=
          graph::LrScheduleKind::Cosine)
    return rt::Status::ok();
  return rt::Status::error(
      std::string("--lr-schedule cosine") +
      (fromRecipe ? " (from the model's recipe)" : "") +
      " needs its length: give --lr-total-steps, or --steps, or file data "
      "(--data DIR or fashion-mnist) whose --epochs give the run's updates");
}

rt::Status openSyntheticData(const RunOptions &run, const rt::StepInfo &step,
                             std::vector<InputSpec> specs, FileData &data) {
  for (InputSpec &spec : specs)
    if (auto c = step.classes.find(spec.name); c != step.classes.end())
      spec.classes = c->second;
  if (rt::Status s = BatchSource::synthetic(run.seed, specs, data.train,
                                            run.syntheticBatches);
      !s)
    return rt::Status::error("--data: " + s.message());
  return rt::Status::ok();
}

rt::Status checkFeedValue(const rt::TensorView &want, const std::string &name,
                          const std::string &source, bool samples,
                          rt::TensorView &value, rt::HostTensor &converted) {
  std::optional<rt::TensorView> before;
  if (value.dtype == rt::DType::F32 && want.dtype == rt::DType::BF16) {
    before = value;
    converted = rt::copyOf(value, name);
    if (rt::Status s = rt::convertTo(converted, rt::DType::BF16); !s)
      return rt::Status::error(source + ": " + s.message());
    value = converted.view();
  }
  if (value.dtype != want.dtype || value.shape != want.shape)
    return rt::Status::error(
        source + " holds " + (before ? before->typeStr() : value.typeStr()) +
        ", but the model's input '" + name + "' is " + want.typeStr());
  if (rt::Status s = checkFinite(value, samples, before ? &*before : nullptr);
      !s)
    return rt::Status::error(source + ": " + s.message() +
                             "; the data must be finite");
  return rt::Status::ok();
}

rt::Status weightsOf(const rt::Session &session, const rt::StepInfo &step,
                     std::vector<rt::HostTensor> &out) {
  out.clear();
  for (const rt::BindingInfo &b : session.function().params) {
    if (!step.weights.count(b.name))
      continue;
    rt::TensorView v;
    AMPC_RETURN_IF_ERROR(session.param(b.name, v));
    out.push_back(rt::copyOf(v, b.name));
  }
  return rt::Status::ok();
}

OnnxBoundInput boundInputOf(const std::string &name, const rt::HostTensor &t) {
  OnnxBoundInput bound;
  bound.name = name;
  bound.onnxDtype = rt::onnxDataTypeOf(t.dtype);
  bound.dims = t.shape;
  bound.rawData.assign(t.bytes.begin(), t.bytes.end());
  return bound;
}

rt::Status setDataParallelRanks(TrainPipelineOptions &flags, int64_t ranks,
                                const std::string &started) {
  if (flags.given("data-parallel") && flags.dataParallel != ranks)
    return rt::Status::error("--data-parallel " +
                             std::to_string(flags.dataParallel) + ", but " +
                             started + " " + std::to_string(ranks) + " ranks");
  std::string err;
  if (mlir::failed(flags.set("data-parallel", std::to_string(ranks), err)))
    return rt::Status::error(err);
  return rt::Status::ok();
}

std::map<std::string, std::string>
exchangeConfig(const TrainPipelineOptions &flags) {
  std::map<std::string, std::string> values = flags.values(), exchange;
  for (const char *flag :
       {"--bucket-mb", "--overlap-exchange", "--low-precision-exchange"})
    exchange[flag] = values[flag];
  return exchange;
}

std::map<std::string, std::string>
checkpointConfig(const TrainPipelineOptions &flags,
                 const GraphBuildTrainingPassOptions &training,
                 const std::optional<AmpLossScalePassOptions> &lossScale,
                 const InferencePipelineOptions &lowering,
                 const RunOptions &run, bool shuffled, uint64_t programHash) {
  std::map<std::string, std::string> config = flags.values();
  // What the flags resolved to in the compiled step: the schedule's length
  // (0 in the flags: the run's updates), and the loss-scale mode (without
  // AMP, any scaling flag means dynamic; no scaling at all is none).
  config["--lr-total-steps"] = std::to_string(training.lrTotalSteps);
  config["--loss-scale"] =
      lossScale ? stringifyEnum(lossScale->mode).str() : "none";
  config.merge(dataOrderConfig(run, shuffled));
  // The bucket size, the overlap and the wire type change the step's
  // Program (its hash says so); a step that is not data-parallel is as
  // before the options.
  for (const auto &flag : exchangeConfig(flags))
    config.erase(flag.first);
  if (flags.dataParallel <= 1)
    config.erase("--data-parallel");
  // Synchronised batch norm changes the numbers; off, a checkpoint is as
  // before the option.
  if (flags.dataParallel <= 1 || !flags.syncBatchNorm)
    config.erase("--sync-batch-norm");
  config["--no-fuse"] = lowering.fuse ? "false" : "true";
  config["--no-memory-reuse"] = lowering.reuseMemory ? "false" : "true";
  config[kCompiledStepKey] = llvm::formatv("{0:x16}", programHash).str();
  return config;
}

rt::Status checkResumable(const Checkpoint &ckpt,
                          const std::map<std::string, std::string> &config,
                          const std::string &dir) {
  // amp-exec's checkpoints hold a Program's step, whose options they do not
  // record: said as such, not as the first option they lack.
  if (ckpt.config.count(kProgramStepKey) || ckpt.config.count(kProgramFileKey))
    return rt::Status::error(
        dir +
        ": the checkpoint was written by amp-exec, which trains a "
        "compiled Program: resume it with amp-exec PROGRAM --resume " +
        dir);
  Checkpoint written = ckpt;
  std::map<std::string, std::string> current = config;
  auto hash = written.config.find(kCompiledStepKey);
  std::string writtenHash = hash == written.config.end() ? "" : hash->second;
  if (hash != written.config.end())
    written.config.erase(hash);
  std::string currentHash = current[kCompiledStepKey];
  current.erase(kCompiledStepKey);
  // The checkpoint keeps the data directories as its run wrote them; one
  // written otherwise here (./data/, an absolute path) is the same data.
  // A relative path is resolved against this run's directory.
  for (const char *key : {"--data", "--test-data"}) {
    auto w = written.config.find(key);
    auto c = current.find(key);
    if (w != written.config.end() && c != current.end() &&
        sameDataDirectory(w->second, c->second))
      w->second = c->second;
  }
  if (rt::Status s = checkConfig(written, current, dir); !s)
    return rt::Status::error(
        s.message() +
        (s.message().find("--lr-total-steps") != std::string::npos
             ? " (a cosine schedule's length is the run's: give both runs "
               "the same --lr-total-steps to extend a run)"
             : ""));
  if (writtenHash != currentHash)
    return rt::Status::error(
        dir + ": the checkpoint was written by a different training step "
              "(same options, but another model file or ampc version)");
  return rt::Status::ok();
}

} // namespace ampc::tools
