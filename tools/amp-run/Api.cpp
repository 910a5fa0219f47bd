//===- Api.cpp - compile and step a model from a host program -------------===//

#include "tools/amp-run/Api.h"

#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Import/Onnx/OnnxWeights.h"
#include "compiler/Pipelines/PipelineOptions.h"
#include "runtime/Session.h"
#include "runtime/TypedIO.h"
#include "runtime/tooling/CheckNumerics.h"
#include "runtime/tooling/RankAgreement.h"
#include "runtime/tooling/Ranks.h"
#include "runtime/tooling/TrainLoop.h"
#include "tools/amp-run/AmpMemory.h"
#include "tools/amp-run/Fail.h"
#include "tools/amp-run/ProgramIO.h"
#include "tools/amp-run/RunSetup.h"
#include "tools/amp-run/TrainStep.h"

#include "mlir/Pass/PassManager.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include <dlfcn.h>
#include <mutex>
#include <set>

namespace ampc::api {
namespace {

using tools::CapturedErrors;
using tools::RunOptions;

/// The ranks this process joined at its first training compile under an
/// MPI launch, for the rest of its life: MPI is initialised once per
/// process. Never destroyed: leaveRanks() finalises MPI, at the program's
/// exit, and sessions may hold the world until after it.
struct ProcessRanks {
  std::mutex mutex;
  std::shared_ptr<rt::mpi::MpiCollective> world;
  int64_t timeout = 0; // the --collective-timeout it joined with
  bool left = false;
  // Why this rank is out of step with the others ("": it is not): a step
  // failed here, whose exchanges the others are in.
  std::string outOfStep;
};

ProcessRanks &processRanks() {
  static ProcessRanks *ranks = new ProcessRanks;
  return *ranks;
}

/// The folder of the library holding this code (the Python module's
/// _ampc.so, beside which its build puts libampc-mpi.so); "" when the
/// loader cannot say.
std::string libraryDirectory() {
  Dl_info info;
  if (!::dladdr(reinterpret_cast<void *>(&processRanks), &info) ||
      !info.dli_fname)
    return "";
  llvm::StringRef dir = llvm::sys::path::parent_path(info.dli_fname);
  return dir.str();
}

/// An error when a step failed on this rank under several ranks: the
/// others wait in that step's exchanges, which this rank left, and any
/// other collective it started would be paired with them.
rt::Status checkInStep(ProcessRanks &ranks) {
  if (ranks.outOfStep.empty())
    return rt::Status::ok();
  return rt::Status::error(
      "this rank is out of step with the others since its " + ranks.outOfStep +
      " failed here, and they wait in that step's exchanges: end the "
      "program (an exception that nothing catches ends every rank at once)");
}

/// The ranks of the launch that started this process (null: none), joined
/// on the first call.
rt::Status joinProcessRanks(const RunOptions &run,
                            std::shared_ptr<rt::mpi::MpiCollective> &out) {
  ProcessRanks &ranks = processRanks();
  std::lock_guard<std::mutex> lock(ranks.mutex);
  out = nullptr;
  AMPC_RETURN_IF_ERROR(checkInStep(ranks));
  if (ranks.left)
    return rt::Status::error(
        "this process has left its ranks (at its exit): a training step "
        "compiled now would have none to train with");
  if (!ranks.world) {
    // A launch of one rank is no data parallelism: it starts no MPI.
    if (!tools::launchRank())
      return rt::Status::ok();
    AMPC_RETURN_IF_ERROR(
        tools::joinRanks(run, "ampc", ranks.world, libraryDirectory()));
    ranks.timeout = run.collectiveTimeout;
  } else if (run.isGiven("collective-timeout") &&
             run.collectiveTimeout != ranks.timeout) {
    return rt::Status::error(
        "--collective-timeout " + std::to_string(run.collectiveTimeout) +
        ": this process's ranks joined with " + std::to_string(ranks.timeout) +
        " s at its first training compile, and keep that timeout");
  }
  out = ranks.world;
  return rt::Status::ok();
}

/// Where the compiler's diagnostics and fail()'s messages go while a model
/// is compiled: into one text, which becomes the error.
struct CompileErrors {
  explicit CompileErrors(mlir::MLIRContext &context)
      : os(diagnostics), handler(sourceMgr, &context, os) {}
  rt::Status error() {
    std::string text = diagnostics;
    while (!text.empty() && text.back() == '\n')
      text.pop_back();
    if (!captured.text().empty())
      text += (text.empty() ? "" : "\n") + captured.text();
    return rt::Status::error(text.empty() ? "the model did not compile" : text);
  }

  std::string diagnostics;
  llvm::raw_string_ostream os;
  llvm::SourceMgr sourceMgr;
  mlir::SourceMgrDiagnosticHandler handler;
  CapturedErrors captured;
};

std::string modelName(const CompileRequest &r) {
  return r.modelPath.empty() ? "<model bytes>" : r.modelPath;
}

/// " (did you mean --NAME?)" for the option name nearest `name` among
/// `names` and the run flags, when one is near; "" otherwise.
std::string closestOption(const std::string &name,
                          std::vector<std::string> names) {
  for (const tools::RunFlag &f : tools::runFlags())
    if (f.tools & tools::kAmpRun)
      names.push_back(f.name);
  std::string best;
  unsigned bestDistance = 3; // more edits than this is no typo
  for (const std::string &candidate : names) {
    unsigned d = llvm::StringRef(name).edit_distance(candidate);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  return best.empty() ? "" : " (did you mean --" + best + "?)";
}

/// Sets the request's options into the pipeline's options and the run
/// flags; `train`: a training step (inference refuses the training
/// options as amp-run's --mode infer does).
template <typename Flags>
rt::Status setOptions(const CompileRequest &r, Flags &flags, RunOptions &run,
                      bool &checkModel, bool train) {
  for (const auto &[name, text] : r.options) {
    if (name == "no-onnx-check") {
      bool skip = false;
      if (!tools::parseSwitchWord(text, skip))
        return rt::Status::error("--no-onnx-check: '" + text +
                                 "' is not a switch value (true or false)");
      checkModel = !skip;
      continue;
    }
    if (flags.has(name)) {
      std::string err;
      if (mlir::failed(flags.set(name, text, err)))
        return rt::Status::error(err);
      continue;
    }
    const tools::RunFlag *flag = tools::findRunFlag(name, tools::kAmpRun);
    // A host program does these itself, through the calls of Api.h.
    if (flag && flag->scope == tools::kToolRun)
      return rt::Status::error(
          "--" + name +
          " steers amp-run's own loop; a program that steps the model "
          "itself does that itself (docs/python.md)");
    if (!train && ((flag && !tools::inferenceTakes(*flag, tools::kAmpRun)) ||
                   TrainPipelineOptions().has(name)))
      return rt::Status::error("--" + name + " is for --mode train");
    if (flag) {
      AMPC_RETURN_IF_ERROR(tools::setRunFlag(*flag, text, run));
      continue;
    }
    return rt::Status::error("no option named '" + name + "'" +
                             closestOption(name, flags.names()) +
                             " (the options are amp-run's flags; "
                             "`amp-run --help` lists them)");
  }
  return rt::Status::ok();
}

/// `r` with the model's bytes, read from its path where it gave none:
/// after the ranks joined, so that a rank that cannot read it fails the
/// compile of every rank.
rt::Status withModelBytes(const CompileRequest &r, CompileRequest &out) {
  out = r;
  if (!out.modelBytes.empty() || out.modelPath.empty())
    return rt::Status::ok();
  auto buffer = llvm::MemoryBuffer::getFile(out.modelPath, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return rt::Status::error("cannot read '" + out.modelPath +
                             "': " + buffer.getError().message());
  out.modelBytes = (*buffer)->getBuffer().str();
  return rt::Status::ok();
}

/// Imports the request's model into `context`.
rt::Status importModel(const CompileRequest &r, bool checkModel,
                       mlir::MLIRContext &context, CompileErrors &errors,
                       mlir::OwningOpRef<mlir::ModuleOp> &module) {
  OnnxImportOptions o;
  o.checkModel = checkModel;
  o.modelDir = llvm::sys::path::parent_path(r.modelPath).str();
  if (o.modelDir.empty())
    o.modelDir = ".";
  for (const auto &[name, dims] : r.shapes) {
    std::string spec = name + "=";
    for (size_t i = 0; i < dims.size(); ++i)
      spec += (i ? "," : "") + std::to_string(dims[i]);
    std::string err;
    if (!addShapeSpec(spec, o.shapes, err))
      return rt::Status::error(err);
  }
  std::set<std::string> bound;
  for (const rt::HostTensor &t : r.binds) {
    if (!bound.insert(t.name).second)
      return rt::Status::error("--bind " + t.name + " is given twice");
    o.bindings.push_back(tools::boundInputOf(t.name, t));
  }
  module = importOnnxModel(r.modelBytes, modelName(r), &context, o);
  return module ? rt::Status::ok() : errors.error();
}

std::vector<InputInfo> inputsOf(const rt::Session &session) {
  std::vector<InputInfo> out;
  for (const rt::BindingInfo &b : session.function().inputs) {
    rt::TensorView t;
    if (session.inputType(b.name, t))
      out.push_back({b.name, t.dtype, t.shape});
  }
  return out;
}

/// Checks `feeds` against the session's inputs (each once, every one,
/// dtype, shape, finite); `views` gets what to feed, `converted` holds the
/// bf16 copies of f32 arrays.
rt::Status checkFeeds(const rt::Session &session,
                      const std::vector<Feed> &feeds, bool samples,
                      std::vector<Feed> &views,
                      std::vector<rt::HostTensor> &converted) {
  views.clear();
  converted.clear();
  converted.reserve(feeds.size());
  std::set<std::string> given;
  for (const auto &[name, value] : feeds) {
    rt::TensorView want;
    AMPC_RETURN_IF_ERROR(session.inputType(name, want));
    if (!given.insert(name).second)
      return rt::Status::error("input '" + name + "' is given twice");
    rt::TensorView v = value;
    converted.emplace_back();
    AMPC_RETURN_IF_ERROR(tools::checkFeedValue(
        want, name, "input '" + name + "'", samples, v, converted.back()));
    views.emplace_back(name, v);
  }
  std::string missing;
  for (const rt::BindingInfo &b : session.function().inputs)
    if (!given.count(b.name))
      missing += (missing.empty() ? "'" : ", '") + b.name + "'";
  if (!missing.empty())
    return rt::Status::error("no value for graph input(s) " + missing);
  return rt::Status::ok();
}

/// Reads the report amp-auto-cast wrote at `path` and removes the file.
std::string takeReport(const std::string &path) {
  std::string text;
  if (auto buffer = llvm::MemoryBuffer::getFile(path))
    text = (*buffer)->getBuffer().str();
  llvm::sys::fs::remove(path);
  return text;
}

/// A temporary file's name for amp-auto-cast's report.
rt::Status reportPath(std::string &out) {
  llvm::SmallString<128> path;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("ampc-report", "json", path))
    return rt::Status::error("cannot create a temporary file for the AMP "
                             "report: " +
                             ec.message());
  out = path.str().str();
  return rt::Status::ok();
}

/// A copy of every parameter of `session`.
rt::Status paramsOf(const rt::Session &session,
                    std::vector<rt::HostTensor> &out) {
  out.clear();
  for (const rt::BindingInfo &b : session.function().params) {
    rt::TensorView v;
    AMPC_RETURN_IF_ERROR(session.param(b.name, v));
    out.push_back(rt::copyOf(v, b.name));
  }
  return rt::Status::ok();
}

/// `t` converted to `want`'s dtype where a float converts to another float
/// exactly (`exact`) or at all; the error names the parameter.
rt::Status convertParam(const rt::TensorView &want, bool exact,
                        rt::HostTensor &t) {
  if (t.shape != want.shape)
    return rt::Status::error("'" + t.name + "' is " + t.typeStr() +
                             " but the step's parameter is " + want.typeStr());
  if (t.dtype == want.dtype)
    return rt::Status::ok();
  if (!rt::isFloat(t.dtype) || !rt::isFloat(want.dtype))
    return rt::Status::error("'" + t.name + "' is " + t.typeStr() +
                             " but the step's parameter is " + want.typeStr());
  rt::HostTensor converted = t;
  AMPC_RETURN_IF_ERROR(rt::convertTo(converted, want.dtype));
  if (exact) {
    rt::HostTensor back = converted;
    AMPC_RETURN_IF_ERROR(rt::convertTo(back, t.dtype));
    if (back.bytes != t.bytes)
      return rt::Status::error("'" + t.name + "' is " + t.typeStr() +
                               " with values that " + want.typeStr() +
                               " cannot hold exactly");
  }
  t = std::move(converted);
  return rt::Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// Training
//===----------------------------------------------------------------------===//

struct Training::State {
  std::string modelBytes, modelName;
  RunOptions run;
  std::unique_ptr<rt::Session> session;
  tools::CompiledStep step;
  tools::ArenaBytes f32Arena;
  bool amp = false;
  std::string report, label;
  std::vector<InputInfo> inputs;
  tools::FileData data;
  std::vector<tools::InputSpec> specs;
  std::map<std::string, std::string> config;
  // Data parallelism: the ranks (null in a process of its own) and the
  // flags they must share beside `config` (LoopOptions::rankConfig).
  std::shared_ptr<rt::mpi::MpiCollective> world;
  std::map<std::string, std::string> rankConfig;
  std::unique_ptr<tools::TrainLoop> loop;
  std::vector<Feed> views;
  std::vector<rt::HostTensor> converted;
  bool ran = false; // the session's outputs hold a step's values
  std::optional<tools::StepNumerics> numerics; // --check-numerics
  // One call at a time: the Python module releases the interpreter lock
  // while a step runs, and the session is not reentrant.
  mutable std::mutex busy;
};

/// A loop over the step with no steps done, which the host feeds.
static std::unique_ptr<tools::TrainLoop> newLoop(Training::State &st) {
  tools::LoopOptions lo = tools::loopOptionsOf(st.run);
  lo.tool = "ampc";
  lo.howToStart = "Start every rank with the same program and options, and "
                  "give each machine the same model, data and checkpoint";
  lo.run = st.label;
  lo.modelPath = st.modelName;
  lo.steps = st.run.steps;
  lo.config = st.config;
  lo.rankConfig = st.rankConfig;
  lo.asRank("ampc", st.world.get());
  int64_t batch =
      st.specs.empty() || st.specs[0].shape.empty() ? 1 : st.specs[0].shape[0];
  return std::make_unique<tools::TrainLoop>(*st.session, st.step.info, batch,
                                            lo);
}

Training::Training(std::unique_ptr<State> state) : s_(std::move(state)) {}
Training::~Training() = default;

/// Compile's work after the options are read and the ranks joined: this
/// rank's step, session, data and loop in `state`.
static rt::Status buildStep(const CompileRequest &r,
                            TrainPipelineOptions &flags, bool checkModel,
                            Training::State &st);

rt::Status Training::compile(const CompileRequest &r,
                             std::unique_ptr<Training> &out) {
  auto st = std::make_unique<State>();
  st->modelName = modelName(r);
  TrainPipelineOptions flags;
  bool checkModel = true;
  AMPC_RETURN_IF_ERROR(
      setOptions(r, flags, st->run, checkModel, /*train=*/true));
  AMPC_RETURN_IF_ERROR(tools::checkRunOptions(st->run, /*train=*/true));
  // Under an MPI launch: the step of its ranks.
  AMPC_RETURN_IF_ERROR(joinProcessRanks(st->run, st->world));
  std::unique_ptr<Training> t(new Training(std::move(st)));
  // What fails on one rank alone (its device, files, memory) fails the
  // compile on every rank, so that none waits for it in a first step.
  AMPC_RETURN_IF_ERROR(t->everyRank(buildStep(r, flags, checkModel, *t->s_),
                                    "compile the training step"));
  AMPC_RETURN_IF_ERROR(t->agreeOnEveryRank(*t->s_->loop));
  out = std::move(t);
  return rt::Status::ok();
}

static rt::Status buildStep(const CompileRequest &given,
                            TrainPipelineOptions &flags, bool checkModel,
                            Training::State &st) {
  CompileRequest r;
  AMPC_RETURN_IF_ERROR(withModelBytes(given, r));
  st.modelBytes = r.modelBytes;
  RunOptions &run = st.run;
  // Each rank on its own GPU and its share of the cores, as amp-run's.
  int ranks = st.world ? st.world->size() : 1;
  if (ranks > 1)
    AMPC_RETURN_IF_ERROR(
        tools::setDataParallelRanks(flags, ranks, "mpirun started"));
  const std::string givenDevice = run.device;
  run.device = tools::rankDevice(run.device);
  tools::shareCores(run, ranks);
  uint64_t budget = 0;
  if (rt::Status s = tools::openRunDevice(run, budget); !s)
    return tools::rankDeviceError(s, givenDevice, run.device);
  AMPC_RETURN_IF_ERROR(tools::checkAmpOptionsNeedAmp(
      flags.amp, flags.givenIn(PipelineOptionGroup::Amp)));

  AMPC_RETURN_IF_ERROR(tools::checkTrainOptions(flags));

  // The model's recipe sets the options not given, as in amp-run.
  bool scheduleGiven = flags.given("lr-schedule");
  std::vector<std::pair<std::string, std::string>> recipe;
  AMPC_RETURN_IF_ERROR(tools::readRecipe(r.modelBytes, st.modelName, recipe));
  for (const auto &[name, value] : recipe) {
    bool isRunFlag = !flags.has(name);
    if (!tools::recipeApplies(
            name, run, isRunFlag ? run.isGiven(name) : flags.given(name)))
      continue;
    std::string err;
    const tools::RunFlag *flag = tools::findRunFlag(name, tools::kAmpRun);
    if (isRunFlag ? !flag || !tools::setRunFlag(*flag, value, run)
                  : mlir::failed(flags.set(name, value, err)))
      return rt::Status::error(
          tools::badRecipeValue(st.modelName, name, value));
  }
  AMPC_RETURN_IF_ERROR(tools::checkTrainOptions(flags).withContext(
      st.modelName + ": with its recipe"));
  if (ranks == 1 && flags.dataParallel > 1)
    return rt::Status::error(
        "--data-parallel " + std::to_string(flags.dataParallel) +
        " needs that many ranks: start the program under mpirun -n " +
        std::to_string(flags.dataParallel) + ", one process per rank");
  if (run.isGiven("steps") && run.isGiven("epochs"))
    return rt::Status::error(st.modelName +
                             ": its recipe gives both --steps and --epochs");

  std::unique_ptr<mlir::MLIRContext> context = tools::createCompilerContext();
  CompileErrors errors(*context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  AMPC_RETURN_IF_ERROR(importModel(r, checkModel, *context, errors, module));

  // File data, opened before compiling: epochs fix the run's length, and
  // with it a cosine schedule's.
  AMPC_RETURN_IF_ERROR(
      tools::inputSpecsOf(*module, st.specs).withContext(st.modelName));
  bool synthetic = run.data == "synthetic";
  if (!run.data.empty() && !synthetic)
    AMPC_RETURN_IF_ERROR(tools::openFileData(
        run.data, run.testData, run.shuffle, run.seed, st.specs, st.data));
  GraphBuildTrainingPassOptions training = flags.trainingOptions();
  bool lengthKnown = tools::runLengthKnown(run, st.data.train != nullptr);
  AMPC_RETURN_IF_ERROR(
      tools::checkScheduleLength(training, lengthKnown, !scheduleGiven));
  int64_t perEpoch = st.data.train ? st.data.train->stepsPerEpoch() : 0;
  if (run.steps == 0)
    run.steps = tools::runSteps(run, perEpoch, ranks);
  // A length given is whole updates, as in amp-run: a loop over `steps`
  // would otherwise end between two and never apply the last gradients.
  if (lengthKnown)
    AMPC_RETURN_IF_ERROR(tools::checkWholeUpdates(
        run, run.steps, training.accumulate,
        "--accumulate " + std::to_string(training.accumulate)));
  tools::resolveScheduleLength(training, run.steps);

  std::string report;
  if (flags.amp != AmpLevel::O0)
    AMPC_RETURN_IF_ERROR(reportPath(report));
  std::optional<AmpAutoCastPassOptions> amp = flags.autoCastOptions(report);
  st.amp = flags.amp != AmpLevel::O0;
  tools::StepCompileOptions main;
  main.training = training;
  main.amp = amp;
  main.lossScale = flags.lossScaleOptions();
  main.lowering = flags.loweringOptions(budget);
  main.dataParallel = flags.dataParallelOptions();
  tools::CompiledStep f32;
  bool compiled = mlir::succeeded(
      tools::compileStepWithF32(std::move(module), st.modelName, main,
                                /*f32Eval=*/false, st.step, f32));
  if (!report.empty())
    st.report = takeReport(report); // the file goes either way
  if (!compiled)
    return errors.error();
  st.f32Arena = f32.trainArena;
  AMPC_RETURN_IF_ERROR(tools::checkDataLabels(st.step.info, st.data));

  rt::SessionOptions sessionOptions = tools::sessionOptionsOf(run);
  sessionOptions.collective = st.world;
  AMPC_RETURN_IF_ERROR(rt::Session::create(std::move(st.step.train),
                                           sessionOptions, st.session));
  if (synthetic)
    AMPC_RETURN_IF_ERROR(
        tools::openSyntheticData(run, st.step.info, st.specs, st.data));
  st.inputs = inputsOf(*st.session);
  if (run.checkNumerics) {
    if (rt::Status s = tools::checkParamsFinite(*st.session); !s)
      return rt::Status::error(st.modelName + ": before step 0: " +
                               s.message() + " (--check-numerics)");
    st.numerics.emplace(*st.session, st.step.info.loss,
                        st.step.info.checksOverflow);
  }
  st.config =
      tools::checkpointConfig(flags, training, main.lossScale, main.lowering,
                              run, st.data.shuffled, st.step.programHash);
  st.rankConfig = tools::exchangeConfig(flags);
  st.label = tools::runLabel(amp);
  st.loop = newLoop(st);
  return rt::Status::ok();
}

const std::vector<InputInfo> &Training::inputs() const { return s_->inputs; }

/// A step's work on this rank: `feeds` checked, set and run.
static rt::Status feedAndRun(Training::State &st,
                             const std::vector<Feed> &feeds,
                             tools::TrainLoop::StepOutcome &o) {
  AMPC_RETURN_IF_ERROR(
      checkFeeds(*st.session, feeds, /*samples=*/true, st.views, st.converted));
  // Labels in their loss's range: a kernel reading one outside it would
  // read outside its logits.
  for (const auto &[name, view] : st.views) {
    auto classes = st.step.info.classes.find(name);
    if (classes == st.step.info.classes.end() || !rt::isInt(view.dtype))
      continue;
    auto ignore = st.step.info.ignoreIndex.find(name);
    for (int64_t i = 0, n = view.numElements(); i < n; ++i) {
      int64_t v = rt::elementAsInt(view, i);
      if ((v >= 0 && v < classes->second) ||
          (ignore != st.step.info.ignoreIndex.end() && v == ignore->second))
        continue;
      return rt::Status::error(
          "input '" + name + "': element " + std::to_string(i) + " is " +
          std::to_string(v) + ", outside the " +
          std::to_string(classes->second) + " classes of the loss it feeds");
    }
  }
  return st.loop->step(st.views, st.run.checkNumerics, o);
}

rt::Status Training::step(const std::vector<Feed> &feeds, StepResult &out) {
  std::lock_guard<std::mutex> lock(s_->busy);
  AMPC_RETURN_IF_ERROR(inStep());
  out.step = s_->loop->stepsDone();
  tools::TrainLoop::StepOutcome o;
  if (rt::Status s = feedAndRun(*s_, feeds, o); !s) {
    // Under several ranks the others are in this step's exchanges, or
    // passed them without this rank: it is out of step for good.
    if (worldSize() > 1) {
      ProcessRanks &ranks = processRanks();
      std::lock_guard<std::mutex> lock(ranks.mutex);
      ranks.outOfStep = "step " + std::to_string(out.step) + " (" +
                        rankPrefix() + s.message() + ")";
    }
    return s;
  }
  s_->ran = true;
  out.loss = o.loss;
  out.skipped = o.overflow;
  out.lossScale = o.scale;
  // --check-numerics: an inf or NaN that loss scaling does not handle is an
  // error naming the kernel that made it, as amp-run stops on it (a note
  // on an overflow it handles is amp-run's progress output, not an error).
  // (The ranks judge the same shared loss and overflow alike.)
  if (s_->numerics) {
    tools::NumericsVerdict v =
        s_->numerics->judge({out.step, o.updates, std::isfinite(o.loss),
                             o.overflow, o.scale, s_->loop->currentScale()});
    if (v.kind == tools::NumericsVerdict::Stop)
      return rt::Status::error(s_->modelName + ": step " +
                               std::to_string(out.step) + ": " + v.text);
  }
  return rt::Status::ok();
}

rt::Status Training::inStep() const {
  if (worldSize() <= 1)
    return rt::Status::ok();
  ProcessRanks &ranks = processRanks();
  std::lock_guard<std::mutex> lock(ranks.mutex);
  return checkInStep(ranks);
}

int64_t Training::stepsDone() const { return s_->loop->stepsDone(); }

double Training::lossScale() const { return s_->loop->currentScale(); }

std::vector<std::string> Training::outputNames() const {
  std::vector<std::string> names;
  for (const rt::BindingInfo &b : s_->session->function().outputs)
    names.push_back(b.name);
  return names;
}

rt::Status Training::output(const std::string &name,
                            rt::TensorView &out) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  if (!s_->ran)
    return rt::Status::error("no step has run yet: output '" + name +
                             "' has no value");
  return s_->session->output(name, out);
}

rt::Status Training::state(std::vector<rt::HostTensor> &out) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  return paramsOf(*s_->session, out);
}

rt::Status Training::loadState(const std::vector<rt::HostTensor> &tensors) {
  std::lock_guard<std::mutex> lock(s_->busy);
  std::map<std::string, rt::HostTensor> byName;
  // Checked in full before anything changes (on any rank).
  auto check = [&]() -> rt::Status {
    for (const rt::HostTensor &t : tensors)
      if (!byName.emplace(t.name, t).second)
        return rt::Status::error("'" + t.name + "' is given twice");
    for (const rt::BindingInfo &b : s_->session->function().params) {
      auto it = byName.find(b.name);
      if (it == byName.end())
        return rt::Status::error("no value for '" + b.name +
                                 "', which the step has");
      rt::TensorView want;
      AMPC_RETURN_IF_ERROR(s_->session->param(b.name, want));
      AMPC_RETURN_IF_ERROR(convertParam(want, /*exact=*/true, it->second));
    }
    if (byName.size() != s_->session->function().params.size())
      for (const auto &[name, t] : byName)
        if (llvm::none_of(
                s_->session->function().params,
                [&](const rt::BindingInfo &b) { return b.name == name; }))
          return rt::Status::error("'" + name +
                                   "' is no parameter or state of the step");
    return rt::Status::ok();
  };
  std::vector<rt::HostTensor> before;
  rt::Status checked = check();
  if (checked && worldSize() > 1)
    checked = paramsOf(*s_->session, before);
  AMPC_RETURN_IF_ERROR(everyRank(checked, "load the state"));
  rt::Status applied = rt::Status::ok();
  for (auto &[name, t] : byName)
    if (applied)
      applied = s_->session->setParam(name, t.view());
  return keepIfEveryRankAgrees(applied, *s_->loop, before);
}

rt::Status Training::param(const std::string &name, rt::HostTensor &out) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  rt::TensorView v;
  AMPC_RETURN_IF_ERROR(s_->session->param(name, v));
  out = rt::copyOf(v, name);
  return rt::Status::ok();
}

rt::Status Training::saveCheckpoint(const std::string &dir) {
  std::lock_guard<std::mutex> lock(s_->busy);
  AMPC_RETURN_IF_ERROR(inStep());
  return s_->loop->saveCheckpointOfRanks(dir);
}

rt::Status Training::loadCheckpoint(const std::string &dir) {
  std::lock_guard<std::mutex> lock(s_->busy);
  // A fresh loop holds the checkpoint's history: the steps done here so
  // far are replaced by those it records.
  std::unique_ptr<tools::TrainLoop> loop = newLoop(*s_);
  tools::Checkpoint ckpt;
  std::vector<rt::HostTensor> before;
  auto check = [&]() -> rt::Status {
    AMPC_RETURN_IF_ERROR(tools::readCheckpoint(dir, ckpt));
    AMPC_RETURN_IF_ERROR(tools::checkResumable(ckpt, s_->config, dir));
    AMPC_RETURN_IF_ERROR(loop->checkpointFits(ckpt, dir));
    return worldSize() > 1 ? paramsOf(*s_->session, before) : rt::Status::ok();
  };
  AMPC_RETURN_IF_ERROR(everyRank(check(), "load the checkpoint"));
  // Each rank read its own copy: they must go on from one state.
  AMPC_RETURN_IF_ERROR(
      keepIfEveryRankAgrees(loop->resume(ckpt, dir), *loop, before));
  s_->loop = std::move(loop);
  return rt::Status::ok();
}

rt::Status Training::everyRank(const rt::Status &mine,
                               const std::string &what) const {
  if (worldSize() <= 1)
    return mine;
  AMPC_RETURN_IF_ERROR(inStep());
  return tools::checkEveryRank(*s_->world, mine, what);
}

rt::Status Training::agreeOnEveryRank(const tools::TrainLoop &loop) const {
  return everyRank(loop.agreeWithRankZero(s_->data.train.get()),
                   "train the run rank 0 trains");
}

rt::Status
Training::keepIfEveryRankAgrees(const rt::Status &applied,
                                const tools::TrainLoop &loop,
                                const std::vector<rt::HostTensor> &before) {
  // The agreement runs even where the load failed: every rank takes part
  // in its exchanges.
  rt::Status agreed = loop.agreeWithRankZero(s_->data.train.get());
  rt::Status all = everyRank(applied ? agreed : applied,
                             "go on from the state rank 0 loaded");
  if (all)
    return all;
  for (const rt::HostTensor &t : before)
    if (rt::Status s = s_->session->setParam(t.name, t.view()); !s)
      return s.withContext("putting the state back after: " + all.message());
  return all;
}

rt::Status Training::waitForRanks(double seconds) {
  std::lock_guard<std::mutex> lock(s_->busy);
  if (worldSize() <= 1)
    return rt::Status::ok();
  AMPC_RETURN_IF_ERROR(inStep());
  return s_->world->waitForAll(rt::boundedSeconds(seconds))
      .withContext("waiting for the other ranks");
}

rt::Status Training::saveOnnx(const std::string &path) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  std::vector<rt::HostTensor> weights;
  AMPC_RETURN_IF_ERROR(tools::weightsOf(*s_->session, s_->step.info, weights));
  std::string err;
  if (!writeOnnxWithWeights(s_->modelBytes, s_->modelName, path, weights, err))
    return rt::Status::error(err);
  return rt::Status::ok();
}

const std::string &Training::ampReport() const { return s_->report; }

std::string Training::memoryJson() const {
  llvm::json::Object memory{{"step", tools::toJson(s_->step.trainArena)}};
  if (s_->amp)
    memory["f32"] = tools::toJson(s_->f32Arena);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(memory));
  return text;
}

const std::string &Training::runLabel() const { return s_->label; }

std::string Training::device() const { return s_->session->deviceName(); }

rt::Status Training::batch(int64_t s, std::vector<rt::HostTensor> &out) {
  std::lock_guard<std::mutex> lock(s_->busy);
  if (!s_->data.train)
    return rt::Status::error(
        "no data to take batches from: give the data option (a directory "
        "of .npy files, fashion-mnist or synthetic)");
  if (s < 0)
    return rt::Status::error("step " + std::to_string(s) + " is negative");
  return s_->data.train->batch(s * worldSize() + rank(), out)
      .withContext("--data: step " + std::to_string(s));
}

int64_t Training::stepsPerEpoch() const {
  int64_t batches = s_->data.train ? s_->data.train->stepsPerEpoch() : 0;
  return batches > 0 ? tools::EpochClock{batches, worldSize()}.stepsFor(1) : 0;
}

int64_t Training::runSteps() const { return s_->run.steps; }

int Training::rank() const { return s_->world ? s_->world->rank() : 0; }

int Training::worldSize() const { return s_->world ? s_->world->size() : 1; }

//===----------------------------------------------------------------------===//
// Inference
//===----------------------------------------------------------------------===//

struct Inference::State {
  std::string modelName, report;
  RunOptions run;
  std::unique_ptr<rt::Session> session;
  std::vector<InputInfo> inputs;
  std::vector<Feed> views;
  std::vector<rt::HostTensor> converted;
  bool ran = false;
  mutable std::mutex busy; // as Training::State's
};

Inference::Inference(std::unique_ptr<State> state) : s_(std::move(state)) {}
Inference::~Inference() = default;

rt::Status Inference::compile(const CompileRequest &given,
                              std::unique_ptr<Inference> &out) {
  CompileRequest r;
  AMPC_RETURN_IF_ERROR(withModelBytes(given, r));
  auto st = std::make_unique<State>();
  st->modelName = modelName(r);
  InferPipelineOptions flags;
  bool checkModel = true;
  AMPC_RETURN_IF_ERROR(
      setOptions(r, flags, st->run, checkModel, /*train=*/false));
  uint64_t budget = 0;
  AMPC_RETURN_IF_ERROR(tools::openRunDevice(st->run, budget));
  AMPC_RETURN_IF_ERROR(tools::checkAmpOptionsNeedAmp(
      flags.amp, flags.givenIn(PipelineOptionGroup::Amp)));

  std::unique_ptr<mlir::MLIRContext> context = tools::createCompilerContext();
  CompileErrors errors(*context);
  mlir::OwningOpRef<mlir::ModuleOp> module;
  AMPC_RETURN_IF_ERROR(importModel(r, checkModel, *context, errors, module));

  std::string report;
  if (flags.amp != AmpLevel::O0)
    AMPC_RETURN_IF_ERROR(reportPath(report));
  InferencePipelineOptions pipeline = flags.loweringOptions(budget);
  pipeline.amp = flags.autoCastOptions(report);
  // The f32 forward, lowered beside it, gives the report's memory figures.
  mlir::OwningOpRef<mlir::ModuleOp> f32;
  if (pipeline.amp)
    f32 = module->clone();
  mlir::PassManager pm(context.get());
  buildInferencePipeline(pm, pipeline);
  bool compiled = mlir::succeeded(pm.run(*module));
  if (compiled && f32) {
    InferencePipelineOptions f32Options = pipeline;
    f32Options.amp.reset();
    mlir::PassManager f32Pm(context.get());
    buildInferencePipeline(f32Pm, f32Options);
    compiled = mlir::succeeded(f32Pm.run(*f32)) &&
               !tools::reportMemory(*f32, *module, "forward", report);
  }
  rt::FunctionInfo forward;
  compiled = compiled && mlir::succeeded(tools::loadFunction(
                             *module, "forward", st->modelName, forward));
  if (!report.empty())
    st->report = takeReport(report);
  if (!compiled)
    return errors.error();
  module = nullptr;
  AMPC_RETURN_IF_ERROR(rt::Session::create(
      std::move(forward), tools::sessionOptionsOf(st->run), st->session));
  st->inputs = inputsOf(*st->session);
  out.reset(new Inference(std::move(st)));
  return rt::Status::ok();
}

const std::vector<InputInfo> &Inference::inputs() const { return s_->inputs; }

std::vector<std::string> Inference::outputNames() const {
  std::vector<std::string> names;
  for (const rt::BindingInfo &b : s_->session->function().outputs)
    names.push_back(b.name);
  return names;
}

rt::Status Inference::run(const std::vector<Feed> &feeds) {
  std::lock_guard<std::mutex> lock(s_->busy);
  AMPC_RETURN_IF_ERROR(checkFeeds(*s_->session, feeds, /*samples=*/false,
                                  s_->views, s_->converted));
  for (const auto &[name, view] : s_->views)
    AMPC_RETURN_IF_ERROR(s_->session->setInput(name, view));
  s_->session->setNonFiniteProbe(s_->run.checkNumerics);
  AMPC_RETURN_IF_ERROR(s_->session->run().withContext(s_->modelName));
  if (std::string fault = tools::nonFiniteFault(*s_->session); !fault.empty())
    return rt::Status::error(s_->modelName + ": " + fault);
  s_->ran = true;
  return rt::Status::ok();
}

rt::Status Inference::output(const std::string &name,
                             rt::TensorView &out) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  if (!s_->ran)
    return rt::Status::error("the model has not run yet: output '" + name +
                             "' has no value");
  return s_->session->output(name, out);
}

rt::Status Inference::weights(std::vector<rt::HostTensor> &out) const {
  std::lock_guard<std::mutex> lock(s_->busy);
  return paramsOf(*s_->session, out);
}

rt::Status Inference::loadWeights(const std::vector<rt::HostTensor> &tensors) {
  std::lock_guard<std::mutex> lock(s_->busy);
  std::vector<rt::HostTensor> ready;
  std::set<std::string> seen;
  for (rt::HostTensor t : tensors) {
    if (!seen.insert(t.name).second)
      return rt::Status::error("'" + t.name + "' is given twice");
    rt::TensorView want;
    if (!s_->session->param(t.name, want))
      return rt::Status::error("'" + t.name + "' is no parameter of the model");
    AMPC_RETURN_IF_ERROR(convertParam(want, /*exact=*/false, t));
    ready.push_back(std::move(t));
  }
  for (rt::HostTensor &t : ready)
    AMPC_RETURN_IF_ERROR(s_->session->setParam(t.name, t.view()));
  return rt::Status::ok();
}

rt::Status Inference::loadWeights(const Training &from) {
  std::vector<rt::HostTensor> tensors;
  for (const rt::BindingInfo &b : s_->session->function().params) {
    rt::HostTensor t;
    if (!from.param(b.name, t))
      return rt::Status::error("parameter '" + b.name +
                               "' of the inference model is not in the "
                               "training step");
    tensors.push_back(std::move(t));
  }
  return loadWeights(tensors);
}

const std::string &Inference::ampReport() const { return s_->report; }

std::string Inference::device() const { return s_->session->deviceName(); }

//===----------------------------------------------------------------------===//
// The ranks
//===----------------------------------------------------------------------===//

bool launchedAsRanks() { return tools::launchRank().has_value(); }

std::string rankPrefix() {
  // From the launch's environment: errors before the ranks join (or of a
  // compile that never joins them) say whose they are too.
  std::optional<int> rank = tools::launchRank();
  return rank ? "rank " + std::to_string(*rank) + ": " : "";
}

void leaveRanks() {
  ProcessRanks &ranks = processRanks();
  std::lock_guard<std::mutex> lock(ranks.mutex);
  ranks.left = true;
  if (ranks.world)
    ranks.world->leave();
}

void abortRanks(int code) {
  ProcessRanks &ranks = processRanks();
  // No lock: a compile on another thread may hold it, and this ends the
  // process.
  if (ranks.world && ranks.world->size() > 1)
    ranks.world->abortAll(code);
}

} // namespace ampc::api
