//===- RunFlags.cpp - the run-time flags amp-run and amp-exec share -------===//
#include "runtime/tooling/RunFlags.h"

#include "runtime/ByteSize.h"
#include "runtime/tooling/Epochs.h"
#include "runtime/tooling/Progress.h"
#include "runtime/tooling/Ranks.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdlib>

namespace ampc::tools {
namespace {

using G = RunFlagGroup;

rt::Status checkMemoryBudget(const std::string &text) {
  uint64_t bytes;
  std::string err;
  if (text != "none" && !rt::parseByteSize(text, bytes, err))
    return rt::Status::error("--memory-budget '" + text + "' " + err +
                             " ('none' turns the budget off)");
  return rt::Status::ok();
}

rt::Status checkPlotName(const std::string &text) {
  if (text.size() < 4 || text.compare(text.size() - 4, 4, ".svg") != 0)
    return rt::Status::error("--plot: plot file " + text +
                             ": the plot is an SVG; the name must end in .svg");
  return rt::Status::ok();
}

rt::Status checkInitParams(const std::string &text) {
  bool uniform;
  uint64_t seed;
  if (parseInitParams(text, uniform, seed))
    return rt::Status::ok();
  return rt::Status::error("--init-params '" + text +
                           "' is not keep, uniform or uniform:SEED");
}

// --nproc's help below says the limit in words.
static_assert(kRanksPerThread == 4, "--nproc's help says 4 per thread");

std::vector<RunFlag> makeTable() {
  return {
      {"mode",
       &RunOptions::mode,
       "MODE",
       "What to run: infer or train (amp-run: train when --data is given; "
       "amp-exec: train when the Program has a training step)",
       G::General,
       kBothTools,
       kToolRun,
       0,
       {"infer", "train"},
       nullptr,
       "the tool's choice"},
      {"device", &RunOptions::device, "DEVICE", "cpu, cuda or cuda:N",
       G::General, kBothTools},
      {"cuda-graph", &RunOptions::cudaGraph, "on|off",
       "Replay the CUDA step as one CUDA graph (on), or launch it kernel by "
       "kernel (off)",
       G::General, kBothTools},
      {"threads", &RunOptions::threads, "N",
       "CPU threads, in all (0: every hardware thread)", G::General,
       kBothTools},
      {"memory-budget",
       &RunOptions::memoryBudget,
       "SIZE",
       "The most memory, as 512M, 16G, 1.5GiB (K, M, G, T: powers of 1024) "
       "or bytes, or 'none'. amp-run: one compiled function's arena; a "
       "larger tensor or arena is a compile error naming it. amp-exec: what "
       "the sessions may hold together ('none': the device's memory)",
       G::General,
       kBothTools,
       kNoScope,
       0,
       {},
       checkMemoryBudget,
       "the device's memory (for the CPU, the physical memory, or less under "
       "a cgroup limit or ulimit -v)"},
      {"check-numerics", &RunOptions::checkNumerics, nullptr,
       "Read every kernel's outputs for inf and NaN and stop at the first "
       "that is a fault, naming the op (kernel, ONNX node) that made it. In "
       "training with loss scaling, an overflow that the step's check "
       "catches is a note (the update is skipped as always); a non-finite "
       "loss or forward value, or one the check misses, stops the run. Slow "
       "(the data is always checked)",
       G::General, kBothTools},
      {"data",
       &RunOptions::data,
       "DATA",
       "Training data: 'fashion-mnist' (Debian's dataset-fashion-mnist: "
       "images normalised into the float input, labels into the integer "
       "one; test split t10k), a DIR of IDX files in that layout, a DIR "
       "with one <input name>.npy per graph input (samples on axis 0), or "
       "'synthetic' (drawn from --seed). amp-run: giving it implies --mode "
       "train",
       G::Training,
       kBothTools,
       kExecInference,
       0,
       {},
       nullptr,
       "none (amp-exec: synthetic)"},
      {"test-data", &RunOptions::testData, "DIR",
       ".npy files (as --data) evaluated at the end of every epoch and of "
       "the run (IDX data has its own)",
       G::Training, kBothTools},
      {"epochs",
       &RunOptions::epochs,
       "N",
       "Passes over the training data (an epoch is floor(samples / batch) "
       "steps)",
       G::Training,
       kBothTools,
       kNoScope,
       1,
       {},
       nullptr,
       "the model's recipe, else see --steps"},
      {"steps",
       &RunOptions::steps,
       "N",
       "Steps of the whole run, a resumed one included (amp-exec --mode "
       "infer: runs)",
       G::Training,
       kBothTools,
       kExecInference,
       1,
       {},
       nullptr,
       "one epoch, or 1 with synthetic data"},
      {"shuffle",
       &RunOptions::shuffle,
       nullptr,
       "Shuffle the samples every epoch, in an order fixed by --seed",
       G::Training,
       kBothTools,
       kExecInference,
       0,
       {},
       nullptr,
       "on for IDX data, off for .npy, which keeps a reference loop's "
       "order"},
      {"synthetic-batches", &RunOptions::syntheticBatches, "K",
       "--data synthetic: K batches drawn once and cycled, so the host "
       "keeps no device waiting (0: a fresh batch every step)",
       G::Training, kBothTools, kExecInference, 0},
      {"seed", &RunOptions::seed, "S",
       "Seed of the shuffle and of --data synthetic", G::Training, kBothTools,
       kExecInference},
      {"metrics", &RunOptions::metrics, "FILE",
       "Per-step metrics (step, loss, step_time_ms, input_ms, loss_scale, "
       "skipped): .csv or .json",
       G::Training, kBothTools, kToolRun},
      {"eval-metrics", &RunOptions::evalMetrics, "FILE",
       "Per-evaluation metrics (step, epoch, train_loss, test_loss, "
       "test_accuracy, samples_per_s): .csv or .json",
       G::Training, kBothTools, kToolRun},
      {"plot",
       &RunOptions::plot,
       "FILE.svg",
       "Write the loss (train and test), test accuracy and loss scale over "
       "the steps as a self-contained SVG",
       G::Training,
       kBothTools,
       kToolRun,
       0,
       {},
       checkPlotName},
      {"progress",
       &RunOptions::progress,
       "STYLE",
       "auto (a bar on a terminal, plain lines otherwise), bar, lines or "
       "none",
       G::Training,
       kBothTools,
       kToolRun,
       0,
       {"auto", "bar", "lines", "none"}},
      {"checkpoint", &RunOptions::checkpointDir, "DIR",
       "Write the whole training state into DIR (weights, optimizer, loss "
       "scale and counters, data position, the run's history), atomically, "
       "at the end of the run and every --checkpoint-every steps",
       G::Checkpoints, kBothTools, kToolRun},
      {"checkpoint-every", &RunOptions::checkpointEvery, "N",
       "Steps between checkpoints (0: at the end of every epoch)",
       G::Checkpoints, kBothTools, kToolRun, 0},
      {"resume", &RunOptions::resumeDir, "DIR",
       "Continue the run whose checkpoint is in DIR; --steps and --epochs "
       "count the whole run",
       G::Checkpoints, kBothTools, kToolRun},
      {"max-overflow-steps", &RunOptions::maxOverflowSteps, "N",
       "Stop after this many overflowing (skipped) steps in a row, naming "
       "the first op whose output overflowed (0: never)",
       G::LossScaling, kBothTools, kToolRun, 0},
      {"checksum-state", &RunOptions::checksumState, nullptr,
       "Add the column state_checksum to --metrics: FNV-1a (32 bits) of "
       "every parameter and optimizer state byte after the step, loss-scale "
       "state left out",
       G::LossScaling, kBothTools},
      {"nproc", &RunOptions::nproc, "N",
       "Train data-parallel on N local ranks: the tool starts itself N "
       "times under mpirun, as `mpirun -n N TOOL ...` does; rank r takes "
       "batches r, r+N, r+2N, ... and every update averages the N ranks' "
       "gradients, so N ranks compute what one process does with "
       "--accumulate N (amp-exec: a Program compiled with --data-parallel "
       "N); at most 4 per hardware thread (more ranks: mpirun)",
       G::Training, kBothTools, kToolRun, 1},
      {"collective-timeout", &RunOptions::collectiveTimeout, "S",
       "Data parallelism: seconds a rank waits in a gradient all-reduce for "
       "the others before it stops every rank with an error",
       G::Training, kBothTools, kNoScope, 1},
      {"init-params",
       &RunOptions::initParams,
       "keep|uniform[:SEED]",
       "Initial weights: the Program's (keep), or U(-1/sqrt(fan_in), "
       "1/sqrt(fan_in)) for rank >= 2 and below it ones for a batch/layer "
       "norm's scale and a batch norm's variance, zeros for the rest "
       "(biases), as PyTorch's defaults",
       G::General,
       kAmpExec,
       kNoScope,
       0,
       {},
       checkInitParams},
      {"json", &RunOptions::json, "FILE", "Write a summary object", G::General,
       kAmpExec},
  };
}

// A whole decimal number in [0, 2^64); strtoull alone takes "-1" and
// trailing text.
bool parseUnsigned(const std::string &text, uint64_t &out) {
  if (text.empty() || text[0] == '-')
    return false;
  char *end = nullptr;
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), &end, 10);
  if (*end || errno)
    return false;
  out = v;
  return true;
}

std::string joinChoices(const std::vector<std::string> &c) {
  std::string s;
  for (size_t i = 0; i < c.size(); ++i)
    s += (i == 0 ? "" : i + 1 == c.size() ? " or " : ", ") + c[i];
  return s;
}

struct Setter {
  const RunFlag &flag;
  const std::string &text;
  RunOptions &o;

  rt::Status bad(const std::string &what) const {
    return rt::Status::error("--" + std::string(flag.name) + " '" + text +
                             "' is not " + what);
  }
  // A switch given bare is on; otherwise any word parseSwitchWord reads.
  rt::Status switchValue(bool &v) const {
    if (text.empty() && !flag.value)
      v = true;
    else if (!parseSwitchWord(text, v))
      return bad(flag.value ? "on or off" : "true or false");
    return rt::Status::ok();
  }
  rt::Status operator()(bool RunOptions::*f) const { return switchValue(o.*f); }
  rt::Status operator()(std::optional<bool> RunOptions::*f) const {
    bool v;
    AMPC_RETURN_IF_ERROR(switchValue(v));
    o.*f = v;
    return rt::Status::ok();
  }
  rt::Status integer(int64_t &out) const {
    char *end = nullptr;
    errno = 0;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || *end || errno)
      return bad("an integer");
    if (v < flag.min)
      return rt::Status::error("--" + std::string(flag.name) + " must be >= " +
                               std::to_string(flag.min) + ", got " + text);
    out = v;
    return rt::Status::ok();
  }
  rt::Status operator()(int64_t RunOptions::*f) const { return integer(o.*f); }
  rt::Status operator()(unsigned RunOptions::*f) const {
    int64_t v;
    AMPC_RETURN_IF_ERROR(integer(v));
    if (v > UINT32_MAX)
      return bad("a count this machine has");
    o.*f = static_cast<unsigned>(v);
    return rt::Status::ok();
  }
  rt::Status operator()(uint64_t RunOptions::*f) const {
    uint64_t v;
    if (!parseUnsigned(text, v))
      return bad("an integer >= 0");
    o.*f = v;
    return rt::Status::ok();
  }
  rt::Status operator()(std::string RunOptions::*f) const {
    if (!flag.choices.empty() &&
        std::find(flag.choices.begin(), flag.choices.end(), text) ==
            flag.choices.end())
      return bad(joinChoices(flag.choices));
    if (flag.check)
      AMPC_RETURN_IF_ERROR(flag.check(text));
    o.*f = text;
    return rt::Status::ok();
  }
};

struct Shower {
  const RunOptions &o;
  std::string operator()(bool RunOptions::*f) const {
    return o.*f ? "on" : "off";
  }
  std::string operator()(std::optional<bool> RunOptions::*f) const {
    return !(o.*f) ? "none" : *(o.*f) ? "true" : "false";
  }
  template <typename T> std::string operator()(T RunOptions::*f) const {
    return std::to_string(o.*f);
  }
  std::string operator()(std::string RunOptions::*f) const {
    return (o.*f).empty() ? "none" : o.*f;
  }
};

} // namespace

bool parseInitParams(const std::string &text, bool &uniform, uint64_t &seed) {
  uniform = text != "keep";
  seed = 0;
  if (text == "keep" || text == "uniform")
    return true;
  return text.rfind("uniform:", 0) == 0 && parseUnsigned(text.substr(8), seed);
}

bool parseSwitchWord(const std::string &text, bool &out) {
  std::string w = text;
  for (char &c : w)
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (w == "on" || w == "true" || w == "1")
    out = true;
  else if (w == "off" || w == "false" || w == "0")
    out = false;
  else
    return false;
  return true;
}

rt::Status checkRunOptions(const RunOptions &o, bool train) {
  bool synthetic = o.data == "synthetic";
  if (o.isGiven("steps") && o.isGiven("epochs"))
    return rt::Status::error("--steps " + std::to_string(o.steps) +
                             " and --epochs " + std::to_string(o.epochs) +
                             " both give the length of the run: give one");
  if (o.isGiven("checkpoint-every") && o.checkpointDir.empty())
    return rt::Status::error("--checkpoint-every needs --checkpoint DIR");
  if (o.isGiven("synthetic-batches") && !synthetic)
    return rt::Status::error(
        "--synthetic-batches is for --data synthetic, not --data " +
        (o.data.empty() ? std::string("(none)") : o.data));
  if (train && o.epochs > 0 && synthetic)
    return rt::Status::error(
        "--epochs needs data with samples (--data DIR or fashion-mnist): "
        "synthetic data has no epochs; use --steps");
  if (train && !o.testData.empty() && synthetic)
    return rt::Status::error(
        "--test-data is evaluated only with file data (--data DIR): "
        "synthetic data has no epochs to evaluate after");
  return rt::Status::ok();
}

const std::vector<RunFlag> &runFlags() {
  static const std::vector<RunFlag> table = makeTable();
  return table;
}

bool inferenceTakes(const RunFlag &flag, unsigned tool) {
  return flag.group == RunFlagGroup::General ||
         (tool == kAmpExec && flag.scope == kExecInference);
}

const RunFlag *findRunFlag(const std::string &name, unsigned tool) {
  for (const RunFlag &f : runFlags())
    if (name == f.name && (f.tools & tool))
      return &f;
  return nullptr;
}

rt::Status setRunFlag(const RunFlag &flag, const std::string &text,
                      RunOptions &o) {
  AMPC_RETURN_IF_ERROR(std::visit(Setter{flag, text, o}, flag.field));
  o.given.insert(flag.name);
  return rt::Status::ok();
}

std::string runFlagDefault(const RunFlag &flag) {
  if (flag.defaultText)
    return flag.defaultText;
  return std::visit(Shower{RunOptions()}, flag.field);
}

std::string runFlagsHelp(unsigned tool) {
  std::string s;
  for (const RunFlag &f : runFlags()) {
    if (!(f.tools & tool))
      continue;
    s += "  --" + std::string(f.name) +
         (f.value ? " " + std::string(f.value) : std::string()) + "\n      " +
         f.help + " (default: " + runFlagDefault(f) + ")\n";
  }
  return s;
}

uint64_t memoryBudgetBytes(const std::string &text) {
  uint64_t bytes = 0;
  std::string err;
  if (text != "none")
    rt::parseByteSize(text, bytes, err);
  return bytes;
}

std::vector<std::pair<std::string, std::string>>
runOutputFiles(const RunOptions &o) {
  return {{"--metrics", o.metrics},
          {"--eval-metrics", o.evalMetrics},
          {"--plot", o.plot}};
}

int64_t runSteps(const RunOptions &o, int64_t perEpoch, int ranks) {
  return EpochClock{perEpoch, ranks}.stepsFor(std::max<int64_t>(1, o.epochs));
}

rt::Status checkWholeUpdates(const RunOptions &o, int64_t steps,
                             int64_t accumulate, const std::string &perUpdate) {
  if (steps % accumulate == 0)
    return rt::Status::ok();
  std::string count = std::to_string(steps);
  return rt::Status::error(
      (o.isGiven("steps")
           ? "--steps " + count + " is"
           : "the run's " + count + " steps (--epochs " +
                 std::to_string(std::max<int64_t>(1, o.epochs)) + ") are") +
      " not a multiple of " + perUpdate + ": the gradients of the last " +
      std::to_string(steps % accumulate) + " steps would never be applied");
}

LoopOptions loopOptionsOf(const RunOptions &o) {
  LoopOptions lo;
  lo.maxOverflowSteps = o.maxOverflowSteps;
  lo.checkNumerics = o.checkNumerics;
  lo.checksumState = o.checksumState;
  lo.progress = Progress::named(o.progress);
  lo.metrics = o.metrics;
  lo.evalMetrics = o.evalMetrics;
  lo.checkpointDir = o.checkpointDir;
  lo.checkpointEvery = o.checkpointEvery;
  return lo;
}

rt::SessionOptions sessionOptionsOf(const RunOptions &o) {
  rt::SessionOptions so;
  so.device = o.device;
  so.threads = o.threads;
  so.cudaGraph = o.cudaGraph;
  return so;
}

std::map<std::string, std::string> dataOrderConfig(const RunOptions &o,
                                                   bool shuffled) {
  std::map<std::string, std::string> c;
  c["--data"] = o.data;
  c["--test-data"] = o.testData;
  c["--seed"] = std::to_string(o.seed);
  c["--shuffle"] = shuffled ? "true" : "false";
  if (o.data == "synthetic")
    c["--synthetic-batches"] = std::to_string(o.syntheticBatches);
  return c;
}

} // namespace ampc::tools
