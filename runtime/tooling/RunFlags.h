//===- RunFlags.h - the run-time flags amp-run and amp-exec share -*- C++ -*-=//
//
// One table of the flags that steer a run rather than compile it (device,
// data, length, metrics, checkpoints, progress): each is declared once,
// with its field of RunOptions, its help and the values it accepts. amp-exec
// parses argv with it; amp-run binds it into llvm::cl (RunFlagsCl.h). Help
// prints each default from RunOptions{}, so no default is written twice,
// and both tools refuse a bad value with the same message.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_RUNFLAGS_H
#define AMPC_RUNTIME_TOOLING_RUNFLAGS_H

#include "runtime/Session.h"
#include "runtime/Status.h"
#include "runtime/tooling/TrainData.h"
#include "runtime/tooling/TrainLoop.h"

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace ampc::tools {

/// What the flags of the table set; a field's initial value is its default.
struct RunOptions {
  std::string mode; // infer | train; empty: the tool decides
  std::string device = "cpu";
  bool cudaGraph = true;
  unsigned threads = 0;     // 0: every hardware thread
  std::string memoryBudget; // SIZE or none; empty: the tool's default
  bool checkNumerics = false;
  std::string data; // synthetic | fashion-mnist | DIR; empty: none
  std::string testData;
  std::optional<bool> shuffle; // none: on for IDX data, off for .npy
  int64_t steps = 0;           // 0: from epochs, or one epoch (1 step)
  int64_t epochs = 0;
  int64_t syntheticBatches = BatchSource::kDefaultSyntheticBatches;
  uint64_t seed = 0;
  std::string metrics, evalMetrics, plot;
  std::string progress = "auto";
  std::string checkpointDir, resumeDir;
  int64_t checkpointEvery = 0;    // 0: at the end of every epoch
  int64_t maxOverflowSteps = 100; // 0: never stop
  bool checksumState = false;
  // amp-run's data parallelism: ranks to start under mpirun (1: none), and
  // the seconds a rank waits in a collective for the others.
  int64_t nproc = 1;
  int64_t collectiveTimeout = 60;
  // amp-exec's own: a Program's weights and the summary file.
  std::string initParams = "keep";
  std::string json;

  /// The flags given, by name (a model's recipe counts as given).
  std::set<std::string> given;
  bool isGiven(const std::string &flag) const { return given.count(flag); }
};

/// Where amp-run's help lists a flag.
enum class RunFlagGroup { General, Training, Checkpoints, LossScaling };

/// The tools that take a flag.
enum RunFlagTools : unsigned { kAmpRun = 1, kAmpExec = 2, kBothTools = 3 };

/// What a flag steers, beyond the tools that take it (RunFlag::scope).
enum RunFlagScope : unsigned {
  kNoScope = 0,
  /// amp-exec's inference reads it as well as training: its inputs come
  /// from --data, as a training run's do (amp-run's inference reads
  /// --input, and takes only the General flags).
  kExecInference = 1,
  /// The tool's own run: the mode, the files it writes as it goes,
  /// progress, checkpoints on a schedule, resuming, when it stops, the ranks
  /// it starts. A program stepping a model through the Python module does
  /// these itself.
  kToolRun = 2,
};

using RunField =
    std::variant<bool RunOptions::*, std::optional<bool> RunOptions::*,
                 unsigned RunOptions::*, int64_t RunOptions::*,
                 uint64_t RunOptions::*, std::string RunOptions::*>;

struct RunFlag {
  const char *name;
  RunField field;
  // The value's name in help ("N", "DIR"); null for a switch (a bool flag
  // that may be given bare).
  const char *value;
  const char *help; // what it does, without the default
  RunFlagGroup group;
  unsigned tools;
  // (An enum, not bits in an integer: a count written where the table
  // wants `min` cannot pass for a scope.)
  RunFlagScope scope = kNoScope;
  // Integers: the least value accepted.
  int64_t min = 0;
  // Strings: the values accepted (empty: any).
  std::vector<std::string> choices = {};
  // Strings: a check of the value (null: none).
  rt::Status (*check)(const std::string &) = nullptr;
  // The default in words, where the field's initial value does not say it
  // (null: that value).
  const char *defaultText = nullptr;
};

/// Every run-time flag, in help order.
const std::vector<RunFlag> &runFlags();

/// The flag named `name` that `tool` takes; null if none.
const RunFlag *findRunFlag(const std::string &name, unsigned tool);

/// Whether `tool`'s inference (--mode infer) takes `flag`: the General
/// flags, and amp-exec the data's (kExecInference). Given to an inference,
/// any other is refused as being for --mode train.
bool inferenceTakes(const RunFlag &flag, unsigned tool);

/// Sets `flag`'s field of `o` from `text` ("" for a switch given bare) and
/// records it as given; the error names the flag and the value.
rt::Status setRunFlag(const RunFlag &flag, const std::string &text,
                      RunOptions &o);

/// The flag's default, as help prints it.
std::string runFlagDefault(const RunFlag &flag);

/// The help of the flags `tool` takes, one block each, for a usage text.
std::string runFlagsHelp(unsigned tool);

/// --init-params: keep (uniform false) or uniform[:SEED]; false when `text`
/// is neither.
bool parseInitParams(const std::string &text, bool &uniform, uint64_t &seed);

/// A bool flag's value: on/off or true/false in any case, or 1/0 (a superset
/// of what llvm::cl reads as a bool). False when `text` is none of them.
bool parseSwitchWord(const std::string &text, bool &out);

/// The checks between run-time flags that both tools make (a value alone is
/// checked by setRunFlag): --steps with --epochs, --checkpoint-every
/// without --checkpoint, synthetic data with --synthetic-batches' opposite,
/// --epochs or --test-data. `train`: a training run.
rt::Status checkRunOptions(const RunOptions &o, bool train);

/// The files the run's flags have it write as it goes or at its end, each
/// with its flag ({"--metrics", PATH}; PATH empty: not given), in help
/// order: what the tools check, beside their own outputs, before a run
/// (rt::checkDistinctOutputs, rt::checkWritable).
std::vector<std::pair<std::string, std::string>>
runOutputFiles(const RunOptions &o);

/// --memory-budget's bytes (0 for none); `text` passed its check.
uint64_t memoryBudgetBytes(const std::string &text);

/// The run's length in steps when --steps is not given: --epochs of
/// `perEpoch` batches, or one epoch, at least one step; a data-parallel
/// step takes `ranks` batches, and the last step may take a few of the
/// next epoch's when the ranks do not divide the epochs.
int64_t runSteps(const RunOptions &o, int64_t perEpoch, int ranks = 1);

/// Refuses a run of `steps` steps that is no whole number of updates of
/// `accumulate` steps: the last steps' gradients would never be applied.
/// `perUpdate` says where the count was set ("--accumulate 3"); the
/// message names --steps when it was given, else --epochs.
rt::Status checkWholeUpdates(const RunOptions &o, int64_t steps,
                             int64_t accumulate, const std::string &perUpdate);

/// The host loop's options the flags decide. `steps` is the tool's to set.
LoopOptions loopOptionsOf(const RunOptions &o);

/// The session's options the flags decide.
rt::SessionOptions sessionOptionsOf(const RunOptions &o);

/// What decides the data order, as a checkpoint records it: a resume with
/// other values is refused, naming the flag.
std::map<std::string, std::string> dataOrderConfig(const RunOptions &o,
                                                   bool shuffled);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_RUNFLAGS_H
