//===- TrainLoop.h - the host loop of a training run ------------*- C++ -*-===//
//
// Runs a compiled train_step once per step on the batches of a BatchSource,
// evaluates the test split at the end of every epoch (and of the run), shows
// progress, writes metrics and checkpoints, and resumes from a checkpoint so
// that the continued run is bit for bit the uninterrupted one: all state is
// in the step's parameters, and the data of a step is a function of the seed
// and the step alone.
//
// MLIR-free: it sees the compiled Program through rt::Session only.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_TRAINLOOP_H
#define AMPC_RUNTIME_TOOLING_TRAINLOOP_H

#include "runtime/Collective.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "runtime/tooling/Checkpoint.h"
#include "runtime/tooling/Epochs.h"
#include "runtime/tooling/Plot.h"
#include "runtime/tooling/Progress.h"
#include "runtime/tooling/RankAgreement.h"
#include "runtime/tooling/Signals.h"
#include "runtime/tooling/TrainData.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace ampc::tools {

class MetricsWriter;

struct LoopOptions {
  std::string tool = "amp-run"; // prefixes its messages
  // What a rank that differs from rank 0 is told to do (RankAgreement.h):
  // how this tool's ranks are started alike.
  std::string howToStart =
      "Start every rank with the same command line, and give each machine "
      "the same model, data and checkpoint";
  std::string run;              // "AMP O2 f16", "f32": names the run in output
  std::string modelPath;        // for messages
  int64_t steps = 1;            // of the whole run, a resumed one included
  int64_t maxOverflowSteps = 100;
  // Probe every step and stop at an inf or NaN that loss scaling does not
  // handle (CheckNumerics.h); note the overflows it does.
  bool checkNumerics = false;
  bool checksumState = false;
  Progress::Style progress = Progress::Style::None;
  std::string metrics, evalMetrics; // files; empty: none
  // Checkpoints: every `checkpointEvery` steps (0: at the end of every
  // epoch) and at the end of the run.
  std::string checkpointDir;
  int64_t checkpointEvery = 0;
  // Set for the --compare-fp32 run, which writes no checkpoint of its own:
  // an interruption then says where the AMP run's checkpoint went.
  std::string comparedCheckpoint;
  std::map<std::string, std::string> config; // written into checkpoints
  // Flags the ranks of a data-parallel run must share that `config` leaves
  // to the compiled step's hash (RankAgreement.h names them).
  std::map<std::string, std::string> rankConfig;
  // Data parallelism: this process is rank `rank` of `worldSize`, and
  // step s takes batch s * worldSize + rank of the data.
  int rank = 0;
  int worldSize = 1;
  // The ranks (worldSize > 1): after a step where rank 0 alone may
  // evaluate or write a checkpoint, the others wait for it here, with a
  // longer timeout than a gradient all-reduce's.
  rt::Collective *collective = nullptr;

  /// This process as rank `rank` of `collective`'s ranks: messages say
  /// "`toolName`: rank R", and only rank 0 shows progress and writes the
  /// metrics and checkpoints (every rank holds the same parameters after
  /// each update). One process (a null `collective`) is left as it is.
  void asRank(const std::string &toolName, rt::Collective *ranks);
};

/// The run so far: one row per step and one per evaluation.
struct History {
  std::vector<std::string> stepColumns, evalColumns;
  std::vector<std::vector<double>> stepRows, evalRows;
};

class TrainLoop {
public:
  /// The columns of History's step and eval rows.
  enum StepColumn {
    kStep,
    kLoss,
    kTimeMs,  // step_time_ms: run() until the loss (and found_inf) are read
    kInputMs, // input_ms: setInput of the batch until it is on the device
    kScale,
    kSkipped,
    kChecksum
  };
  enum EvalColumn {
    kEvalStep,
    kEpoch,
    kTrainLoss,
    kTestLoss,
    kTestAccuracy,
    kSamplesPerS
  };

  /// `eval` and `test` may be null (no evaluation). The sessions and
  /// sources must outlive the loop.
  TrainLoop(rt::Session &train, rt::Session *eval, rt::StepInfo step,
            BatchSource &data, BatchSource *test, LoopOptions options);
  /// A loop whose batches its caller feeds through step() (the Python
  /// module): no data source, no evaluation; `batch` is the batch size.
  TrainLoop(rt::Session &train, rt::StepInfo step, int64_t batch,
            LoopOptions options);

  /// An input's name and a host view of its bytes.
  using Feed = std::pair<std::string, rt::TensorView>;
  /// What one step did.
  struct StepOutcome {
    double loss = 0;
    bool overflow = false; // found_inf: the update was skipped
    bool updates = false;  // the step ends an accumulation (it may update)
    double scale = 1;      // the loss scale it ran with
    // Data parallelism (run()'s): a SIGINT or SIGTERM that rank `stopRank`
    // had received by the step's end (the lowest such rank; -1: every rank
    // had), the same on every rank; 0 for none, and in one process, whose
    // run() reads its own.
    int stopSignal = 0;
    int stopRank = 0;
  };
  /// Runs step `stepsDone()` on `batch` (every graph input, once) and
  /// appends its history row; `probe` turns the non-finite probe on for it
  /// (Session::setNonFiniteProbe).
  rt::Status step(const std::vector<Feed> &batch, bool probe,
                  StepOutcome &out) {
    return runStep(batch, probe, nullptr, out);
  }
  /// Steps done: the next step's index.
  int64_t stepsDone() const {
    return static_cast<int64_t>(history_.stepRows.size());
  }
  /// Writes every parameter of the step and the history, at stepsDone(),
  /// into DIR/checkpoint.ampc with options().config.
  rt::Status saveCheckpoint(const std::string &dir);

  /// Continues from `ckpt` (read and config-checked by the caller): every
  /// parameter of the step is restored and the history is taken over.
  /// Nothing is changed when the checkpoint does not fit the step.
  rt::Status resume(const Checkpoint &ckpt, const std::string &dir);
  /// Whether resume(ckpt, dir) would take `ckpt`; changes nothing.
  rt::Status checkpointFits(const Checkpoint &ckpt,
                            const std::string &dir) const;

  /// Data parallelism, for a caller that feeds the steps (the Python
  /// module); each is a collective call, which every rank makes at the
  /// same point. One process (no collective) does what the call says
  /// alone.
  /// - Checks that this rank trains rank 0's run (RankAgreement.h), `data`
  ///   being the training data whose samples the ranks compare (null:
  ///   batches the caller makes, not compared).
  rt::Status agreeWithRankZero(const BatchSource *data) const;
  /// - saveCheckpoint(dir) by rank 0 (DIR checked first) while the others
  ///   wait; every rank returns rank 0's outcome. Refused between the
  ///   updates of an accumulation, where each rank holds its own partial
  ///   gradients and a resume would give them all rank 0's.
  rt::Status saveCheckpointOfRanks(const std::string &dir);

  /// Runs the remaining steps on the data source's batches; returns the
  /// process exit code after printing any error.
  int run();

  const History &history() const { return history_; }
  /// The run so far as curves for writeTrainingPlot, named `label`.
  PlotRun plotRun(const std::string &label) const;
  int64_t firstStep() const { return firstStep_; }
  double finalLoss() const;
  int64_t skipped() const;
  /// The scale the next step runs with (the state, or the constant: 1
  /// without scaling).
  double currentScale() const;
  /// The CRC-32 of this rank's weights (StepInfo::weights, as they are now)
  /// in `checksum`. Under N ranks every rank must call it (one exchange), and
  /// rank 0 fails when another rank's differs: after the last step of a
  /// data-parallel run, their updates must have been the same. Batch
  /// norm's running statistics are left out (each rank's own, as DDP's).
  rt::Status compareRanks(uint32_t &checksum) const;
  bool scales() const { return step_.checksOverflow; }
  /// Median step time of the steps this process ran (ms): the compiled
  /// step, from run() until the loss is read back.
  double medianStepMs() const;
  /// Median time of the batch's copy to the device (ms), apart from the
  /// step.
  double medianInputMs() const;
  /// Samples/s over the steps this process ran (data loading included,
  /// evaluation not).
  double samplesPerSecond() const;
  /// The last evaluation: false when there was none.
  bool lastEval(double &testLoss, double &testAccuracy) const;

private:
  rt::Status evaluate(int64_t stepsDone, double periodSeconds);
  /// Where the steps fall in the data's epochs.
  EpochClock epochs() const;
  /// Ends the run after SIGINT/SIGTERM `sig` (Signals.h), which rank
  /// `fromRank` received (-1: every rank), with the state of `stepsDone` steps,
  /// fewer than the run's, saved; returns the exit code, 128 + sig. Every rank
  /// calls it after the same step: rank 0 writes the checkpoint and says so,
  /// and the others wait for it.
  int stopOnSignal(int sig, int fromRank, int64_t stepsDone,
                   MetricsWriter *metrics, MetricsWriter *evalMetrics);
  /// step(), as run() steps: the signal `interrupts` has received is
  /// shared in the step's exchange of the ranks' losses, so that every
  /// rank sees it after the same step.
  rt::Status runStep(const std::vector<Feed> &batch, bool probe,
                     const InterruptScope *interrupts, StepOutcome &out);
  uint32_t stateChecksum() const;
  /// The CRC-32 of the parameters in binding order: every one, or the
  /// weights alone (StepInfo::weights).
  rt::Status paramsChecksum(bool weightsOnly, uint32_t &checksum) const;
  /// What the ranks of a data-parallel run must share for their steps to
  /// be one training (RankAgreement.h): the flags and compiled step of
  /// options().config and rankConfig, the loop's length and waits, the
  /// training data's samples (`data`'s, when there is one) and the state
  /// it starts from.
  rt::Status runFacts(const BatchSource *data, RunFacts &facts) const;
  /// resume()'s checks: `stepRows` gets the checkpoint's rows in this
  /// run's columns.
  rt::Status fit(const Checkpoint &ckpt, const std::string &dir,
                 std::vector<std::vector<double>> &stepRows) const;
  int fail(const std::string &msg);
  /// Whether this loop is one of several ranks (LoopOptions::asRank).
  bool dataParallel() const { return o_.collective && o_.worldSize > 1; }
  /// Whether `steps` steps end on an update (whole accumulations), where a
  /// data-parallel run's checkpoint and stop may land.
  bool atUpdate(int64_t steps) const { return steps % step_.accumulate == 0; }

  rt::Session &train_;
  rt::Session *eval_;
  rt::StepInfo step_;
  BatchSource *data_; // null: fed through step()
  BatchSource *test_;
  LoopOptions o_;
  History history_;
  int64_t firstStep_ = 0;
  int64_t batch_ = 1;
  std::vector<double> times_, inputTimes_;
  double runSeconds_ = 0;
  int64_t savedStep_ = -1; // the steps done at the last checkpoint written
  std::unique_ptr<Progress> progress_;
};

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_TRAINLOOP_H
