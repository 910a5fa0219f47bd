//===- amp-run.cpp - compile an ONNX model and run it ---------------------===//
//
// The user-facing driver: parses and checks the flags, imports the model,
// and hands it to runInference (Infer.cpp: compile the forward function,
// load it as amp-exec would, run it on the --input files) or, with
// `--mode train` (the default when --data is given), to runTraining
// (Train.cpp). `--emit=STAGE` stops after a stage. The compile flags are the
// pipelines' options (PipelineOptions.h), the run-time flags the table
// amp-exec shares (RunFlags.h). A model may carry the recipe it was tuned
// with in its metadata (`ampc.train.<option>`): those are the defaults of
// the options the user did not give.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Import/Onnx/OnnxMetadata.h"
#include "compiler/Pipelines/PipelineOptions.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/HostMemory.h"
#include "runtime/Session.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/Checkpoint.h"
#include "runtime/tooling/Ranks.h"
#include "tools/amp-run/CheckpointOnnx.h"
#include "tools/amp-run/Fail.h"
#include "tools/amp-run/Infer.h"
#include "tools/amp-run/ProgramIO.h"
#include "tools/amp-run/RankDiagnostics.h"
#include "tools/amp-run/RunFlagsCl.h"
#include "tools/amp-run/RunSetup.h"
#include "tools/amp-run/Train.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <set>

using namespace llvm;
namespace rt = ampc::rt;
using ampc::tools::fail;

namespace {

cl::OptionCategory generalCat("General");
cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::cat(generalCat));
cl::opt<std::string>
    emit("emit",
         cl::desc("Stop after a stage and print it (default: run): "
                  "onnx-import (the onnx dialect), graph (graph ops), amp "
                  "(after amp-auto-cast; needs --amp), training (the "
                  "@train_step graph), rt (kernels and memory plan), program "
                  "(the binary Program, needs -o); mlir is training with "
                  "--mode train, else amp or graph"),
         cl::cat(generalCat));
cl::opt<std::string> outputFile("o",
                                cl::desc("Output file for --emit (default: "
                                         "stdout)"),
                                cl::init("-"), cl::cat(generalCat));
cl::opt<std::string> programWeights(
    "program-weights",
    cl::desc("With --emit=program: keep (default) writes every parameter's "
             "initial value; omit writes none but nonzero scalars such as "
             "the loss scale (amp-exec then needs --init-params or "
             "--resume)"),
    cl::init("keep"), cl::cat(generalCat));
cl::list<std::string>
    shapes("shape",
           cl::desc("NAME=d0,d1,...: the shape of a dynamic graph input "
                    "(repeatable)"),
           cl::cat(generalCat));
cl::list<std::string>
    binds("bind",
          cl::desc("NAME=FILE: compile a graph input as this constant "
                   "(repeatable)"),
          cl::cat(generalCat));
cl::opt<bool> noCheck("no-onnx-check",
                      cl::desc("Skip ONNX's model checker (default: check)"),
                      cl::cat(generalCat));

cl::OptionCategory inferCat("Inference (--mode infer)");
cl::list<std::string> inputs("input",
                             cl::desc("NAME=FILE: a graph input (.npy or "
                                      "ONNX TensorProto .pb; repeatable)"),
                             cl::cat(inferCat));
cl::opt<std::string>
    saveOutputs("save-outputs",
                cl::desc("Directory to write <output name>.npy into "
                         "(default: none)"),
                cl::cat(inferCat));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Run N times and print the time per run "
                                  "(median) (default 1)"),
                         cl::init(1), cl::cat(inferCat));
cl::opt<bool> printOutputs("print-outputs",
                           cl::desc("Print each output's type (default "
                                    "off)"),
                           cl::cat(inferCat));

cl::OptionCategory trainCat("Training (--mode train)");
cl::opt<bool> compareFp32(
    "compare-fp32",
    cl::desc("Also train the model in f32 on the same batches in the same "
             "order, and put both runs in the summary and the plot (needs "
             "--amp; default off)"),
    cl::cat(trainCat));
cl::opt<std::string>
    saveOnnx("save-onnx",
             cl::desc("Write the model with the trained weights here "
                      "(default: none)"),
             cl::cat(trainCat));

cl::OptionCategory ckptCat("Checkpoints");
cl::opt<std::string> fromCheckpoint(
    "from-checkpoint",
    cl::desc("With --save-onnx alone: write the model with the weights of "
             "the checkpoint in DIR (of amp-exec, amp-run or the Python "
             "module) and run nothing (default: none)"),
    cl::value_desc("DIR"), cl::cat(ckptCat));

// The compile flags are the pipelines' options (PipelineOptions.h), declared
// there once and registered here as flags of the same names.
ampc::TrainPipelineOptions compileFlags;
cl::OptionCategory &ampCat =
    ampc::pipelineCategory(ampc::PipelineOptionGroup::Amp);
cl::OptionCategory &compileTrainCat =
    ampc::pipelineCategory(ampc::PipelineOptionGroup::Training);
cl::opt<std::string> ampReport(
    "amp-report",
    cl::desc("Write the AMP decisions and the planned f32 and AMP activation "
             "bytes here (JSON; default: none)"),
    cl::cat(ampCat));

cl::OptionCategory &scaleCat =
    ampc::pipelineCategory(ampc::PipelineOptionGroup::LossScaling);

// The run-time flags amp-exec shares (runtime/tooling/RunFlags.h), in the
// categories above.
ampc::tools::ClRunFlags
runFlagsCl([](ampc::tools::RunFlagGroup g) -> cl::OptionCategory & {
  switch (g) {
  case ampc::tools::RunFlagGroup::General:
    return generalCat;
  case ampc::tools::RunFlagGroup::Training:
    return trainCat;
  case ampc::tools::RunFlagGroup::Checkpoints:
    return ckptCat;
  case ampc::tools::RunFlagGroup::LossScaling:
    return scaleCat;
  }
  return generalCat;
});

bool splitSpec(StringRef spec, StringRef flag, std::string &name,
               std::string &file) {
  auto [n, f] = spec.split('=');
  if (n.empty() || f.empty() || !spec.contains('=')) {
    fail("--" + flag + " '" + spec + "' is not of the form NAME=FILE");
    return false;
  }
  name = n.str();
  file = f.str();
  return true;
}

/// The model file's bytes; null after printing an error. Only a regular
/// file is read: a device (/dev/zero) or a pipe would be read forever (a
/// directory fails to read, saying so).
std::unique_ptr<MemoryBuffer> readModel() {
  sys::fs::file_status status;
  if (!sys::fs::status(modelPath, status) &&
      status.type() != sys::fs::file_type::regular_file &&
      status.type() != sys::fs::file_type::directory_file) {
    fail("cannot read '" + modelPath +
         "': it is not a regular file (a device, a pipe or a socket), not an "
         "ONNX model");
    return nullptr;
  }
  auto file = MemoryBuffer::getFile(modelPath, /*IsText=*/false);
  if (!file) {
    fail("cannot read '" + modelPath + "': " + file.getError().message());
    return nullptr;
  }
  return std::move(*file);
}

/// Applies the recipe of the model `file` holds to the options the user
/// left unset, says so on `os` and adds their names to `applied`; returns
/// false after printing an error.
bool applyRecipe(const MemoryBuffer &file, const ampc::tools::RunOptions &run,
                 raw_ostream &os, std::set<std::string> &applied) {
  std::vector<std::pair<std::string, std::string>> recipe;
  if (rt::Status s =
          ampc::tools::readRecipe(file.getBuffer(), modelPath, recipe);
      !s) {
    fail(s.message());
    return false;
  }
  auto &registered = cl::getRegisteredOptions();
  std::string said;
  for (const auto &[name, value] : recipe) {
    cl::Option *opt = registered.lookup(name);
    if (!ampc::tools::recipeApplies(name, run, opt->getNumOccurrences() > 0))
      continue;
    if (opt->addOccurrence(0, name, value)) {
      fail(ampc::tools::badRecipeValue(modelPath, name, value));
      return false;
    }
    said += " --" + name + " " + value;
    applied.insert(name);
  }
  if (!said.empty())
    os << "amp-run: recipe from " << modelPath << ":" << said
       << " (flags given override it)\n";
  return true;
}

constexpr StringLiteral kStages[] = {
    "onnx-import", "graph", "amp", "training", "rt", "program", "mlir"};

/// The launch's world when mpirun started this process
/// (runtime/tooling/Ranks.h).
std::shared_ptr<ampc::rt::mpi::MpiCollective> world;

int runTool(int argc, char **argv);

} // namespace

int main(int argc, char **argv) {
  InitLLVM y(argc, argv);
  return ampc::tools::endRanks(world, runTool(argc, argv));
}

namespace {

/// amp-run MODEL --from-checkpoint DIR --save-onnx OUT: the checkpoint's
/// weights into the model, and nothing run. `launched`: under mpirun.
int writeModelFromCheckpoint(bool launched) {
  const char *what = "--from-checkpoint writes the model with a "
                     "checkpoint's weights and runs nothing";
  if (launched)
    return fail(std::string(what) + ": start it alone, not under mpirun");
  for (auto &[name, opt] : cl::getRegisteredOptions())
    if (opt->getNumOccurrences() && !opt->isPositional() &&
        name != "from-checkpoint" && name != "save-onnx")
      return fail(std::string(what) + ": --" + name.str() +
                  " is not for it (give --save-onnx FILE alone)");
  std::string out = saveOnnx;
  if (out.empty())
    return fail(std::string(what) + ": give the file with --save-onnx FILE");
  ampc::tools::CheckpointOnnxReport report;
  if (rt::Status s = ampc::tools::saveOnnxFromCheckpoint(
          modelPath, fromCheckpoint, out, report);
      !s)
    return fail(s.message());
  outs() << "amp-run: wrote " << out << ": " << modelPath << " with "
         << report.written.size() << " initializer"
         << (report.written.size() == 1 ? "" : "s") << " from "
         << fromCheckpoint << " (after step " << report.step << ")\n";
  if (!report.kept.empty())
    outs() << "amp-run: " << report.kept.size() << " floating-point initializer"
           << (report.kept.size() == 1 ? " keeps its" : "s keep their")
           << " value from the model (the checkpoint holds none): "
           << join(report.kept, ", ") << "\n";
  return 0;
}

/// Parses the command line. Under a launch, llvm::cl's own messages (an
/// unknown flag, a value that does not parse) name the rank as ours do.
bool parseFlags(int argc, char **argv, std::optional<int> rank) {
  const char *overview =
      "amp-run: compile an ONNX model and run it, or train it\n\n"
      "  amp-run model.onnx --input x=x.npy            run the forward pass\n"
      "  amp-run model.onnx --data fashion-mnist --amp O2   train\n";
  // (The help's usage line names the program as given.)
  bool help = llvm::any_of(ArrayRef(argv + 1, argv + argc), [](StringRef a) {
    return a.starts_with("-") && a.ltrim('-').starts_with("help");
  });
  if (!rank || help) {
    cl::ParseCommandLineOptions(argc, argv, overview); // exits on an error
    return true;
  }
  // llvm::cl starts each message with the program's name, which it takes
  // from argv[0]. (Some go straight to errs(), so they come before the
  // ones it gives `saidStream`.) ...
  std::string name = "amp-run: rank " + std::to_string(*rank);
  std::vector<const char *> args(argv, argv + argc);
  args[0] = name.c_str();
  std::string said;
  raw_string_ostream saidStream(said);
  bool parsed =
      cl::ParseCommandLineOptions(argc, args.data(), overview, &saidStream);
  // ... and its hint names argv[0] as the command to run with --help.
  std::string hint = name + " --help";
  for (size_t at; (at = said.find(hint)) != std::string::npos;)
    said.replace(at, hint.size(), "amp-run --help");
  errs() << said;
  return parsed;
}

int runTool(int argc, char **argv) {
  // Under a launch, the errors before the ranks join say whose they are
  // too (a rank whose machine lacks the data).
  std::optional<int> rank = ampc::tools::launchRank();
  if (rank)
    ampc::tools::failPrefix() =
        "amp-run: rank " + std::to_string(*rank) + ": error: ";
  compileFlags.exposeAsFlags();
  cl::HideUnrelatedOptions(
      {&generalCat, &inferCat, &trainCat, &ckptCat, &ampCat, &scaleCat,
       &compileTrainCat,
       &ampc::pipelineCategory(ampc::PipelineOptionGroup::Lowering)});
  if (!parseFlags(argc, argv, rank))
    return 1;
  ampc::tools::RunOptions run;
  if (rt::Status s = runFlagsCl.read(run); !s)
    return fail(s.message());
  if (fromCheckpoint.getNumOccurrences())
    return writeModelFromCheckpoint(rank.has_value());
  if (run.mode.empty())
    run.mode = run.isGiven("data") ? "train" : "infer";
  bool train = run.mode == "train";
  if (!emit.empty() && !llvm::is_contained(kStages, StringRef(emit)))
    return fail("--emit '" + emit + "' is not a stage (stages: " +
                join(ArrayRef(kStages), ", ") + ")");
  if (emit == "mlir")
    emit = train ? "training"
                 : (compileFlags.amp != ampc::AmpLevel::O0 ? "amp" : "graph");
  if (emit == "training" && !train)
    return fail("--emit=training shows the training step: it needs --mode "
                "train (or --data)");
  if (emit == "amp" && compileFlags.amp == ampc::AmpLevel::O0)
    return fail("--emit=amp shows the graph after amp-auto-cast: give --amp "
                "O1|O2|O3");
  if (emit == "program" && outputFile == "-")
    return fail("--emit=program writes a binary file: give it with -o FILE");
  if (programWeights != "keep" && programWeights != "omit")
    return fail("--program-weights '" + programWeights +
                "' is not keep or omit");
  if (programWeights.getNumOccurrences() && emit != "program")
    return fail("--program-weights is for --emit=program");
  if (!train)
    for (auto &[name, opt] : cl::getRegisteredOptions())
      if (opt->getNumOccurrences() &&
          llvm::any_of(opt->Categories, [](cl::OptionCategory *c) {
            return c == &trainCat || c == &ckptCat || c == &scaleCat ||
                   c == &compileTrainCat;
          }))
        return fail("--" + name + " is for --mode train");
  if (train &&
      (!inputs.empty() || !saveOutputs.empty() || repeat != 1 || printOutputs))
    return fail("--input, --save-outputs, --repeat and --print-outputs are "
                "for --mode infer; training reads its inputs from --data");
  if (train && run.data.empty() && emit.empty())
    return fail("--mode train needs --data (fashion-mnist, a DIR, or "
                "synthetic)");
  // What a run's flags say together (amp-exec checks the same); --emit
  // runs nothing.
  if (emit.empty())
    if (rt::Status s = ampc::tools::checkRunOptions(run, train); !s)
      return fail(s.message());
  // Before --nproc starts ranks that would each say it (the recipe's values
  // are checked once it is applied).
  if (train)
    if (rt::Status s = ampc::tools::checkTrainOptions(compileFlags); !s)
      return fail(s.message());
  if (compareFp32 && compileFlags.amp == ampc::AmpLevel::O0)
    return fail("--compare-fp32 compares an AMP run with f32: give --amp "
                "O1|O2|O3");
  // What ranks refuse, and the step they compile; `started` says who
  // starts them.
  auto takeRanks = [&](int64_t ranks, const std::string &started) {
    if (compareFp32)
      return rt::Status::error("--compare-fp32 trains a second model in one "
                               "process; it does not run data-parallel "
                               "(compare in a run of one process)");
    return ampc::tools::setDataParallelRanks(compileFlags, ranks, started);
  };
  // Data parallelism: --nproc starts the ranks (this process is replaced);
  // under mpirun this process is one of them.
  if (run.nproc > 1 && !ampc::tools::launchedByMpi()) {
    if (!train || !emit.empty())
      return fail("--nproc starts ranks that train: it needs --mode train "
                  "(or --data) and no --emit (--data-parallel N shows the "
                  "step of N ranks)");
    // Said once, before any rank starts.
    if (rt::Status s = takeRanks(run.nproc, "--nproc starts"); !s)
      return fail(s.message());
    return fail(ampc::tools::startRanks(argc, argv, run.nproc).message());
  }
  if (rt::Status s = ampc::tools::joinRanks(run, "amp-run", world); !s)
    return fail(s.message());
  int64_t ranks = world ? world->size() : 1;
  // What each line a rank says about itself starts with.
  const std::string rankLine =
      ranks > 1 ? "amp-run: rank " + std::to_string(world->rank()) + ": " : "";
  if (ranks > 1) {
    ampc::tools::failPrefix() = rankLine + "error: ";
    if (!train || !emit.empty())
      return fail("started as one of " + std::to_string(ranks) +
                  " ranks, which train data-parallel: this needs --mode "
                  "train (or --data) and no --emit");
    if (rt::Status s = takeRanks(ranks, "mpirun started"); !s)
      return fail(s.message());
  } else if (compileFlags.dataParallel > 1 && emit.empty()) {
    return fail("--data-parallel " + Twine(compileFlags.dataParallel) +
                " needs that many ranks: start amp-run with --nproc " +
                Twine(compileFlags.dataParallel) + " (or under mpirun -n " +
                Twine(compileFlags.dataParallel) + ")");
  }
  // Each rank of a launch takes its own GPU (Ranks.h).
  const std::string givenDevice = run.device;
  run.device = ampc::tools::rankDevice(run.device);
  // Opened before anything is compiled: a missing GPU is the one line the
  // user sees.
  uint64_t budget = 0;
  if (rt::Status s = ampc::tools::openRunDevice(run, budget); !s)
    return fail(
        ampc::tools::rankDeviceError(s, givenDevice, run.device).message());
  if (repeat == 0)
    return fail("--repeat must be at least 1");
  if (rt::Status s = ampc::tools::checkAmpOptionsNeedAmp(
          compileFlags.amp,
          compileFlags.givenIn(ampc::PipelineOptionGroup::Amp));
      !s)
    return fail(s.message());
  // What a run writes at its end or as it goes must be writable before it
  // starts: a bad path found after the training loses the training. And no
  // two of them one file: the later would replace the earlier.
  std::vector<std::pair<std::string, std::string>> outputs = {
      {"-o", emit.empty() || outputFile == "-" ? std::string()
                                               : std::string(outputFile)}};
  llvm::append_range(outputs, ampc::tools::runOutputFiles(run));
  outputs.insert(
      outputs.end(),
      {{"--save-onnx", saveOnnx},
       {"--amp-report", ampReport},
       {"--checkpoint", run.checkpointDir.empty()
                            ? ""
                            : ampc::tools::checkpointPath(run.checkpointDir)}});
  if (rt::Status s = rt::checkDistinctOutputs(outputs); !s)
    return fail(s.message());
  if (emit == "program")
    if (rt::Status s = rt::checkWritable(outputFile); !s)
      return fail("-o: " + s.message());
  // (Rank 0 alone writes them.)
  if (emit.empty() && (!world || world->rank() == 0)) {
    std::vector<std::pair<std::string, std::string>> files =
        ampc::tools::runOutputFiles(run);
    files.emplace_back("--save-onnx", saveOnnx);
    for (const auto &[flag, path] : files)
      if (!path.empty())
        if (rt::Status s = rt::checkWritable(path); !s)
          return fail(flag + ": " + s.message());
    if (!run.checkpointDir.empty())
      if (rt::Status s =
              ampc::tools::checkCheckpointDirectory(run.checkpointDir);
          !s)
        return fail("--checkpoint: " + s.message());
    if (!saveOutputs.empty() && sys::fs::exists(saveOutputs) &&
        !sys::fs::is_directory(saveOutputs))
      return fail("--save-outputs: " + saveOutputs +
                  " exists and is not a directory");
  }
  // --emit shows the step a run would compile, recipe included; its output
  // may be stdout, so the recipe line goes to stderr then.
  // (In a data-parallel run, rank 0 says so for all.)
  // Read once: for the recipe, then to import.
  std::unique_ptr<MemoryBuffer> file;
  std::set<std::string> recipe;
  if (train) {
    file = readModel();
    if (!file || !applyRecipe(*file, run,
                              world && world->rank() > 0 ? nulls()
                              : emit.empty()             ? outs()
                                                         : errs(),
                              recipe))
      return 1;
  }
  // Read again, with the recipe's values: the user's were checked above.
  ampc::tools::RunOptions withRecipe;
  if (rt::Status s = runFlagsCl.read(withRecipe); !s)
    return fail(modelPath + ": its recipe: " + s.message());
  withRecipe.mode = run.mode;
  run = std::move(withRecipe);
  // The user's values were checked before; what fails now, the recipe
  // set (alone or with a flag given).
  if (train)
    if (rt::Status s = ampc::tools::checkTrainOptions(compileFlags); !s)
      return fail(modelPath + ": with its recipe: " + s.message());
  shareCores(run, ranks);
  if (run.isGiven("steps") && run.isGiven("epochs") && emit.empty())
    return fail(modelPath + ": its recipe gives both --steps and --epochs");

  ampc::OnnxImportOptions importOptions;
  importOptions.checkModel = !noCheck;
  importOptions.modelDir = sys::path::parent_path(modelPath).str();
  if (importOptions.modelDir.empty())
    importOptions.modelDir = ".";
  for (const std::string &spec : shapes) {
    std::string err;
    if (!ampc::addShapeSpec(spec, importOptions.shapes, err))
      return fail(err);
  }
  // A graph input compiled as the constant in `file`; `flag` names the
  // option in messages.
  auto bindFile = [&](const std::string &flag, const std::string &name,
                      const std::string &file, bool integerOnly) -> bool {
    rt::HostTensor t;
    if (rt::Status s = rt::readTensorFile(file, t); !s)
      return fail("--" + flag + " " + name + ": " + s.message()), false;
    if (integerOnly && t.dtype != rt::DType::I64 && t.dtype != rt::DType::I32)
      return false;
    importOptions.bindings.push_back(ampc::tools::boundInputOf(name, t));
    return true;
  };
  for (const std::string &spec : binds) {
    std::string name, file;
    if (!splitSpec(spec, "bind", name, file))
      return 1;
    if (llvm::any_of(importOptions.bindings,
                     [&](const auto &b) { return b.name == name; }))
      return fail("--bind " + name + " is given twice");
    if (!bindFile("bind", name, file, /*integerOnly=*/false))
      return 1;
  }

  std::optional<ampc::AmpAutoCastPassOptions> amp =
      compileFlags.autoCastOptions(ranks > 1 && world->rank() > 0
                                       ? std::string() // rank 0 writes it
                                       : std::string(ampReport));

  std::unique_ptr<mlir::MLIRContext> contextOwner =
      ampc::tools::createCompilerContext();
  mlir::MLIRContext &context = *contextOwner;
  llvm::SourceMgr sourceMgr;
  // Each rank's diagnostics name the rank, as its other errors do.
  std::optional<mlir::SourceMgrDiagnosticHandler> diagHandler;
  std::optional<ampc::tools::RankDiagnostics> rankDiagHandler;
  if (ranks > 1)
    rankDiagHandler.emplace(sourceMgr, context, rankLine);
  else
    diagHandler.emplace(sourceMgr, &context);
  // Run first (registered last): what stdout holds goes out before a
  // diagnostic, as fail() does, so one log keeps the order; then the
  // handler above prints it.
  mlir::ScopedDiagnosticHandler stdoutFirst(&context, [](mlir::Diagnostic &) {
    llvm::outs().flush();
    return mlir::failure();
  });

  if (!file)
    file = readModel();
  if (!file)
    return 1;
  mlir::OwningOpRef<mlir::ModuleOp> module = ampc::importOnnxModel(
      file->getBuffer(), modelPath, &context, importOptions);
  if (!module)
    return 1;
  // Inference: an integer --input that a node needs as a constant (a shape,
  // a Range bound) is bound at compile time from its file, as --bind would,
  // with one line saying so. The conversion stops at its first such input,
  // so this repeats until none is left.
  std::vector<std::pair<std::string, std::string>> inferInputs;
  for (const std::string &spec : inputs) {
    std::string name, path;
    if (!splitSpec(spec, "input", name, path))
      return 1;
    inferInputs.emplace_back(name, path);
  }
  // Only an integer graph input can be bound so: without one among the
  // --input names, the probe (a second conversion) is skipped.
  bool integerInputGiven = false;
  if (auto forward = module->lookupSymbol<mlir::func::FuncOp>("forward"))
    for (unsigned i = 0; i < forward.getNumArguments(); ++i) {
      auto name = forward.getArgAttrOfType<mlir::StringAttr>(i, "onnx.name");
      auto type = dyn_cast<mlir::ShapedType>(forward.getArgument(i).getType());
      integerInputGiven |= name && type && type.getElementType().isInteger() &&
                           llvm::any_of(inferInputs, [&](const auto &in) {
                             return in.first == name.getValue();
                           });
    }
  std::set<std::string> autoBound;
  for (size_t round = 0;
       !train && integerInputGiven && round < inferInputs.size(); ++round) {
    bool bound = false;
    for (const std::string &name : ampc::findShapeInputs(*module)) {
      auto it = llvm::find_if(inferInputs,
                              [&](const auto &in) { return in.first == name; });
      if (it == inferInputs.end() || autoBound.count(name) ||
          !bindFile("input", name, it->second, /*integerOnly=*/true))
        continue;
      errs() << "amp-run: --input " << name << ": an integer input that "
             << "sets shapes, bound at compile time (as --bind " << name << "="
             << it->second << ")\n";
      autoBound.insert(name);
      bound = true;
    }
    if (!bound)
      break;
    module = ampc::importOnnxModel(file->getBuffer(), modelPath, &context,
                                   importOptions);
    if (!module)
      return 1;
  }
  if (emit == "onnx-import")
    return ampc::tools::printModule(*module, outputFile);

  ampc::tools::CompiledRunOptions common;
  common.modelPath = modelPath;
  common.amp = amp;
  common.lowering = compileFlags.loweringOptions(budget);
  common.run = run;
  common.emit = emit;
  common.outputFile = outputFile;
  common.omitWeights = programWeights == "omit";
  if (train) {
    ampc::tools::TrainOptions t;
    static_cast<ampc::tools::CompiledRunOptions &>(t) = common;
    // lr-total-steps 0: the run's updates, known once the data fixes the
    // run's length.
    t.training = compileFlags.trainingOptions();
    t.recipe = std::move(recipe);
    t.lossScale = compileFlags.lossScaleOptions();
    t.compileFlags = &compileFlags;
    t.compareFp32 = compareFp32;
    t.saveOnnx = saveOnnx;
    t.dataParallel = compileFlags.dataParallelOptions();
    if (ranks > 1)
      t.collective = world;
    return ampc::tools::runTraining(std::move(module), t);
  }

  ampc::tools::InferOptions inf;
  static_cast<ampc::tools::CompiledRunOptions &>(inf) = common;
  for (const auto &[name, path] : inferInputs)
    if (!autoBound.count(name))
      inf.inputs.emplace_back(name, path);
  inf.saveOutputs = saveOutputs;
  inf.repeat = repeat;
  inf.printOutputs = printOutputs;
  return ampc::tools::runInference(std::move(module), inf);
}

} // namespace
