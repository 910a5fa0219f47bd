//===- PipelineOptions.cpp - the options of ampc-infer and ampc-train -----===//
#include "compiler/Pipelines/PipelineOptions.h"

#include "mlir/Pass/PassRegistry.h"
#include "llvm/ADT/StringExtras.h"

#include <cstdio>
#include <mutex>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;

namespace ampc {

cl::OptionCategory &pipelineCategory(PipelineOptionGroup group) {
  static cl::OptionCategory amp("Automatic mixed precision (amp-auto-cast)");
  static cl::OptionCategory scale("Loss scaling (amp-loss-scale)");
  static cl::OptionCategory training("Training (graph-build-training)");
  static cl::OptionCategory lowering("Lowering (convert-graph-to-rt)");
  switch (group) {
  case PipelineOptionGroup::Amp:
    return amp;
  case PipelineOptionGroup::LossScaling:
    return scale;
  case PipelineOptionGroup::Training:
    return training;
  case PipelineOptionGroup::Lowering:
    return lowering;
  }
  return lowering;
}

namespace {

/// A number as a user types it: "0.02", not MLIR's "2.000000e-02"; nine
/// significant digits read back to the same f32. The checkpoint's other
/// numbers are printed the same way by tools::nineDigits
/// (runtime/tooling/Format.h), which the compiler does not link.
std::string numberText(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%.9g", v);
  return text;
}

/// The value of one of the option kinds the pipelines declare.
template <typename OptionsT> std::string valueText(const cl::Option *o) {
  using Base = PassPipelineOptions<OptionsT>;
  if (auto *s =
          dynamic_cast<const typename Base::template Option<std::string> *>(o))
    return s->getValue();
  if (auto *d = dynamic_cast<const typename Base::template Option<double> *>(o))
    return numberText(d->getValue());
  if (auto *i =
          dynamic_cast<const typename Base::template Option<int64_t> *>(o))
    return std::to_string(i->getValue());
  if (auto *b = dynamic_cast<const typename Base::template Option<bool> *>(o))
    return b->getValue() ? "true" : "false";
  if (auto *n =
          dynamic_cast<const typename Base::template Option<OptionalNumber> *>(
              o))
    return n->getValue().number ? numberText(*n->getValue().number) : "default";
  if (auto *l =
          dynamic_cast<const typename Base::template ListOption<std::string> *>(
              o))
    return llvm::join(l->begin(), l->end(), ",");
  if (auto *e =
          dynamic_cast<const typename Base::template Option<AmpLevel> *>(o))
    return stringifyEnum(e->getValue()).str();
  if (auto *e =
          dynamic_cast<const typename Base::template Option<AmpDtype> *>(o))
    return stringifyEnum(e->getValue()).str();
  if (auto *e =
          dynamic_cast<const typename Base::template Option<LossScaleMode> *>(
              o))
    return stringifyEnum(e->getValue()).str();
  llvm_unreachable("a pipeline option of a kind valueText does not print");
}

} // namespace

template <typename Derived>
std::optional<AmpAutoCastPassOptions>
CompileOptions<Derived>::autoCastOptions(const std::string &report) const {
  if (amp == AmpLevel::O0 && report.empty())
    return std::nullopt;
  AmpAutoCastPassOptions o;
  o.level = amp;
  o.dtype = ampDtype;
  o.allow.assign(ampAllow.begin(), ampAllow.end());
  o.deny.assign(ampDeny.begin(), ampDeny.end());
  o.infer.assign(ampInfer.begin(), ampInfer.end());
  o.clear.assign(ampClear.begin(), ampClear.end());
  o.fp32Nodes.assign(ampFp32Nodes.begin(), ampFp32Nodes.end());
  o.lowNodes.assign(ampLowNodes.begin(), ampLowNodes.end());
  o.masterWeights = ampMasterWeights;
  o.report = report;
  return o;
}

template <typename Derived>
InferencePipelineOptions
CompileOptions<Derived>::loweringOptions(uint64_t memoryBudget) const {
  InferencePipelineOptions o;
  o.fuse = !noFuse;
  o.reuseMemory = !noMemoryReuse;
  o.memoryBudget = memoryBudget;
  return o;
}

template <typename Derived> void CompileOptions<Derived>::exposeAsFlags() {
  std::vector<cl::Option *> options;
  for (auto &entry : this->OptionsMap)
    options.push_back(entry.second);
  // cl::Option keeps its help as a StringRef: the texts live here, made
  // (from the declared help, which a second call must not have freed yet)
  // before any is handed out.
  std::vector<std::string> texts;
  for (cl::Option *o : options) {
    std::string value = valueText<Derived>(o);
    texts.push_back(o->HelpStr.str() +
                    " (default: " + (value.empty() ? "none" : value) + ")");
  }
  helpTexts_.swap(texts);
  for (size_t i = 0; i < options.size(); ++i) {
    cl::Option *o = options[i];
    // Registered again, now in the top level as well as in the pipeline's
    // own sub-command (pipeline strings still parse).
    o->removeArgument();
    o->addSubCommand(cl::SubCommand::getTopLevel());
    o->addArgument();
    o->setDescription(helpTexts_[i]);
  }
}

template <typename Derived>
std::map<std::string, std::string> CompileOptions<Derived>::values() const {
  std::map<std::string, std::string> out;
  for (const auto &entry : this->OptionsMap)
    out["--" + entry.first.str()] = valueText<Derived>(entry.second);
  return out;
}

template <typename Derived>
bool CompileOptions<Derived>::given(llvm::StringRef name) const {
  auto it = this->OptionsMap.find(name);
  return it != this->OptionsMap.end() && it->second->getNumOccurrences() > 0;
}

template <typename Derived>
std::vector<std::string>
CompileOptions<Derived>::givenIn(PipelineOptionGroup group) const {
  std::vector<std::string> names;
  for (const auto &entry : this->OptionsMap)
    if (entry.second->getNumOccurrences() > 0 &&
        llvm::is_contained(entry.second->Categories, &pipelineCategory(group)))
      names.push_back(entry.first.str());
  llvm::sort(names);
  return names;
}

template <typename Derived>
bool CompileOptions<Derived>::has(llvm::StringRef name) const {
  return this->OptionsMap.count(name);
}

template <typename Derived>
std::vector<std::string> CompileOptions<Derived>::names() const {
  std::vector<std::string> out;
  for (const auto &entry : this->OptionsMap)
    out.push_back(entry.first.str());
  return out;
}

template <typename Derived>
LogicalResult CompileOptions<Derived>::set(llvm::StringRef name,
                                           llvm::StringRef text,
                                           std::string &error) {
  if (!has(name)) {
    error = "no option named '" + name.str() + "'";
    return failure();
  }
  // A value with a space is quoted, as a pipeline string quotes it.
  std::string spec = name.str() + "=";
  spec += text.contains(' ') ? "\"" + text.str() + "\"" : text.str();
  // llvm::cl's parsers report a bad value on llvm::errs(), whatever stream
  // parseFromString is given: stderr is sent to a temporary file for the
  // call, and the message taken from there.
  // stderr is the process's: one redirection at a time (the Python module
  // compiles with the interpreter lock released).
  static std::mutex redirecting;
  std::lock_guard<std::mutex> lock(redirecting);
  std::string message;
  llvm::raw_string_ostream os(message);
  llvm::errs().flush();
  std::fflush(stderr);
  std::FILE *captured = std::tmpfile();
  int saved = captured ? ::dup(2) : -1;
  if (saved >= 0)
    ::dup2(::fileno(captured), 2);
  bool ok = succeeded(this->parseFromString(spec, os));
  llvm::errs().flush();
  if (saved >= 0) {
    ::dup2(saved, 2);
    ::close(saved);
    std::rewind(captured);
    char buffer[512];
    while (size_t n = std::fread(buffer, 1, sizeof(buffer), captured))
      message.append(buffer, n);
  }
  if (captured)
    std::fclose(captured);
  if (ok)
    return success();
  // "PROGRAM: for the --amp option: ..." without the program's name (the
  // parser's, or none), as amp-run prints it after its own.
  llvm::StringRef m = llvm::StringRef(message).trim();
  if (size_t at = m.find(": for the --"); at != llvm::StringRef::npos)
    m = m.drop_front(at + 2);
  error = m.empty() ? "'" + text.str() + "' is not a valid value" : m.str();
  return failure();
}

template struct CompileOptions<InferPipelineOptions>;
template struct CompileOptions<TrainPipelineOptions>;

GraphBuildTrainingPassOptions TrainPipelineOptions::trainingOptions() const {
  GraphBuildTrainingPassOptions o;
  o.loss = loss;
  o.optimizer = optimizer;
  o.lr = lr;
  o.momentum = momentum;
  o.dampening = dampening;
  o.beta1 = beta1;
  o.beta2 = beta2;
  o.epsilon = epsilon;
  o.weightDecay = weightDecay;
  o.lrDecay = lrDecay;
  o.lrSchedule = lrSchedule;
  o.lrStepSize = lrStepSize;
  o.lrGamma = lrGamma;
  o.lrTotalSteps = lrTotalSteps;
  o.lrMin = lrMin;
  o.freeze.assign(freeze.begin(), freeze.end());
  o.accumulate = accumulate;
  return o;
}

std::optional<AmpLossScalePassOptions>
TrainPipelineOptions::lossScaleOptions() const {
  bool autoCast = amp != AmpLevel::O0;
  bool anyGiven = false;
  for (const auto &entry : OptionsMap)
    anyGiven |=
        entry.second->getNumOccurrences() > 0 &&
        llvm::is_contained(entry.second->Categories,
                           &pipelineCategory(PipelineOptionGroup::LossScaling));
  if (!autoCast && !anyGiven)
    return std::nullopt;
  AmpLossScalePassOptions o;
  // Without AMP the step computes in f32, where `auto` means none: asking
  // for any scaling setting then means dynamic scaling.
  o.mode = !autoCast && !given("loss-scale") ? LossScaleMode::Dynamic
                                             : LossScaleMode(lossScale);
  o.initScale = initScale;
  o.scaleGrowth = scaleGrowth;
  o.scaleBackoff = scaleBackoff;
  o.growthInterval = growthInterval;
  o.decrEveryN = decrEveryN;
  o.minScale = minScale;
  o.maxScale = maxScale;
  return o;
}

GraphDataParallelPassOptions TrainPipelineOptions::dataParallelOptions() const {
  GraphDataParallelPassOptions o;
  o.worldSize = dataParallel;
  o.bucketMb = bucketMb;
  o.overlap = overlapExchange;
  o.lowPrecisionExchange = lowPrecisionExchange;
  o.syncBatchNorm = syncBatchNorm;
  return o;
}

void registerPipelines() {
  PassPipelineRegistration<InferPipelineOptions>(
      "ampc-infer",
      "Imported ONNX (onnx dialect) to rt form for inference: "
      "convert-onnx-to-graph, canonicalize, (amp-auto-cast,) "
      "convert-graph-to-rt; takes amp-run's AMP and lowering flags as "
      "options",
      [](OpPassManager &pm, const InferPipelineOptions &o) {
        InferencePipelineOptions options = o.loweringOptions();
        options.amp = o.autoCastOptions();
        buildInferencePipeline(pm, options);
      });
  PassPipelineRegistration<TrainPipelineOptions>(
      "ampc-train",
      "Imported ONNX (onnx dialect) to rt form of @train_step: "
      "convert-onnx-to-graph{training-mode}, canonicalize, (amp-auto-cast,) "
      "graph-build-training, (graph-data-parallel,) (amp-loss-scale,) "
      "canonicalize, cse, "
      "(amp-fold-casts, amp-recast-in-backward,) graph-fuse-loss-gradient, "
      "amp-describe-step, "
      "convert-graph-to-rt; takes "
      "amp-run's compile flags as options (amp=O2 lr=0.1 ...)",
      [](OpPassManager &pm, const TrainPipelineOptions &o) {
        std::optional<AmpAutoCastPassOptions> amp = o.autoCastOptions();
        GraphBuildTrainingPassOptions training = o.trainingOptions();
        // No run fixes the cosine schedule's length here.
        if (training.lrTotalSteps <= 0)
          training.lrTotalSteps = GraphBuildTrainingPassOptions().lrTotalSteps;
        buildTrainingGraphPipeline(pm, training, amp, o.lossScaleOptions(),
                                   o.dataParallelOptions());
        buildLoweringPipeline(pm, o.loweringOptions());
      });
}

} // namespace ampc
