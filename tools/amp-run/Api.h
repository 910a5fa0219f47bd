//===- Api.h - compile and step a model from a host program -----*- C++ -*-===//
//
// What the Python module `ampc` wraps (bindings/python): amp-run's
// compiler and runtime as calls, for a host that feeds each batch itself.
// A Training compiles the model as `amp-run --mode train` does (the same
// recipe, checks, pipelines, step and checkpoint configuration: RunSetup.h,
// TrainStep.h) and steps it through the TrainLoop amp-run runs, so a step
// here and a step there compute the same bits and write checkpoints either
// can resume. An Inference compiles @forward as `amp-run --mode infer`.
//
// Options are amp-run's flags by name without the dashes ("amp-dtype") with
// their values as text; errors are amp-run's messages. This header includes
// no MLIR, so that a binding built with exceptions and RTTI can include it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_API_H
#define AMPC_TOOLS_AMPRUN_API_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/io/TensorFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ampc::tools {
class TrainLoop;
} // namespace ampc::tools

namespace ampc::api {

/// A model and how to compile it.
struct CompileRequest {
  std::string modelBytes; // a serialized ModelProto; empty: read modelPath
  // Where it was read from ("" when given in memory): names it in messages,
  // and external tensor data is found next to it.
  std::string modelPath;
  // amp-run's flags without the dashes, with text values ("amp" -> "O2";
  // a list comma-separated; a switch "true" or "false").
  std::vector<std::pair<std::string, std::string>> options;
  // --shape NAME=DIMS and --bind NAME=FILE, with the tensor itself.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  std::vector<rt::HostTensor> binds;
};

/// An input a run must be fed.
struct InputInfo {
  std::string name;
  rt::DType dtype;
  rt::Shape shape;
};

/// A named host view of an input's bytes.
using Feed = std::pair<std::string, rt::TensorView>;

/// What a step did.
struct StepResult {
  int64_t step = 0; // its index: steps done before it
  double loss = 0;
  bool skipped = false; // found_inf: the update did not happen
  double lossScale = 1; // the scale the step ran with
};

class Training {
public:
  /// Compiles the model for training; the status has every error amp-run
  /// would print (compiler diagnostics included), one per line.
  static rt::Status compile(const CompileRequest &request,
                            std::unique_ptr<Training> &out);
  ~Training();

  const std::vector<InputInfo> &inputs() const;
  /// Runs one step on `feeds`: every input exactly once, dtype and shape
  /// exact (an f32 array feeds a bf16 input, rounded once), finite, labels
  /// in their loss's range.
  rt::Status step(const std::vector<Feed> &feeds, StepResult &out);
  int64_t stepsDone() const;
  /// The scale the next step runs with (1 without loss scaling).
  double lossScale() const;
  /// The step's outputs other than the loss and found_inf, by name; a view
  /// valid until the next step.
  std::vector<std::string> outputNames() const;
  rt::Status output(const std::string &name, rt::TensorView &out) const;

  /// Every parameter and state tensor of the step (weights, working
  /// copies, optimizer and loss-scale state, counters), copied.
  rt::Status state(std::vector<rt::HostTensor> &out) const;
  /// Sets them all from `tensors` (every one, by name, dtype and shape
  /// exact; f32 feeds f16/bf16 state only if it converts exactly); checked
  /// in full before anything changes.
  rt::Status loadState(const std::vector<rt::HostTensor> &tensors);
  /// A copy of one parameter or state tensor.
  rt::Status param(const std::string &name, rt::HostTensor &out) const;
  /// amp-run's checkpoint format, in DIR/checkpoint.ampc (atomically);
  /// loading checks the configuration as `amp-run --resume` does.
  rt::Status saveCheckpoint(const std::string &dir);
  rt::Status loadCheckpoint(const std::string &dir);
  /// The model with the trained weights (--save-onnx).
  rt::Status saveOnnx(const std::string &path) const;

  /// The AMP decision report with its memory figures (--amp-report's
  /// JSON); empty without AMP.
  const std::string &ampReport() const;
  /// The planned memory of this step and, with AMP, of the f32 step, as
  /// JSON: {"step": {...}, "f32": {...}} with the report's field names.
  std::string memoryJson() const;
  /// "AMP O2 f16" or "f32", and the session's device in words.
  const std::string &runLabel() const;
  std::string device() const;

  /// The data of the `data` option, in amp-run's order: the inputs of step
  /// `s` (of this rank's step `s`: batch s * worldSize() + rank()). An
  /// error when no data was given.
  rt::Status batch(int64_t s, std::vector<rt::HostTensor> &out);
  /// Steps that take an epoch's batches, the last of them a few of the
  /// next when the ranks do not divide it; 0: no data, or synthetic data.
  int64_t stepsPerEpoch() const;
  /// The run's steps as compiled (--steps, or --epochs of the data): the
  /// length a cosine schedule takes by default, and amp-run's run.
  int64_t runSteps() const;

  /// This process's place among the ranks of a data-parallel run (below):
  /// 0 of 1 in a process of its own.
  int rank() const;
  int worldSize() const;
  /// Returns when every rank has called it, or fails after `seconds`: after
  /// work one rank does alone (an evaluation, a file), which may take
  /// longer than a step's exchange waits for it (--collective-timeout).
  rt::Status waitForRanks(double seconds);

  /// What a compiled step holds (Api.cpp's alone).
  struct State;

private:
  explicit Training(std::unique_ptr<State> state);
  /// `mine` on one process; checkEveryRank's verdict under several ranks
  /// (every rank calls it: a call that must succeed on all of them).
  rt::Status everyRank(const rt::Status &mine, const std::string &what) const;
  /// An error under several ranks when a step failed on this rank before
  /// (the others wait in its exchanges): no collective call may start.
  rt::Status inStep() const;
  /// `loop`'s agreement with rank 0's run, failing on every rank where it
  /// fails on one.
  rt::Status agreeOnEveryRank(const tools::TrainLoop &loop) const;
  /// After a load `applied` (or failed) on this rank: where it failed or
  /// the ranks do not agree on one run (on any rank), every rank puts the
  /// parameters `before` back (taken under several ranks only: one process
  /// checks everything before it loads, and keeps no copy).
  rt::Status keepIfEveryRankAgrees(const rt::Status &applied,
                                   const tools::TrainLoop &loop,
                                   const std::vector<rt::HostTensor> &before);
  std::unique_ptr<State> s_;
};

/// Data parallelism from a host program (docs/python.md): a process that
/// an MPI launcher started (`mpirun -n N python3 train.py`) is one of N
/// ranks. They join at the first Training::compile, which compiles the
/// step of N ranks (the gradients averaged over them); each rank feeds its
/// own batches, and a step's loss is the mean of the ranks'. The calls that
/// read or change the state of every rank (compile, step, loadState,
/// saveCheckpoint, loadCheckpoint, waitForRanks) are collective: every
/// rank makes them, in the same order.
///
/// Whether an MPI launcher started this process as one of several ranks.
bool launchedAsRanks();
/// "rank R: " while this process is one of several ranks, else "": what
/// its errors start with.
std::string rankPrefix();
/// Ends this process's part in the ranks it joined (MPI_Finalize, which
/// returns once every rank has ended theirs): at the program's exit. After
/// it the collective calls fail. Nothing when none were joined.
void leaveRanks();
/// Ends every rank of the launch now, with `code`: after an error that one
/// rank alone met, where the others would wait for it until their timeout.
/// Returns only when no ranks were joined.
void abortRanks(int code);

class Inference {
public:
  static rt::Status compile(const CompileRequest &request,
                            std::unique_ptr<Inference> &out);
  ~Inference();

  const std::vector<InputInfo> &inputs() const;
  std::vector<std::string> outputNames() const;
  /// Runs @forward once on `feeds` (checked as Training::step's).
  rt::Status run(const std::vector<Feed> &feeds);
  rt::Status output(const std::string &name, rt::TensorView &out) const;
  /// Its parameters (the weights, in the compiled precision), copied.
  rt::Status weights(std::vector<rt::HostTensor> &out) const;
  /// Sets the weights named in `tensors` (others keep their values),
  /// converting a float tensor to the parameter's precision as a
  /// training run's evaluation does; checked in full first.
  rt::Status loadWeights(const std::vector<rt::HostTensor> &tensors);
  /// Takes every parameter from the training step (its trained weights),
  /// as amp-run's evaluation of the test split does.
  rt::Status loadWeights(const Training &from);
  const std::string &ampReport() const;
  std::string device() const;

private:
  struct State;
  explicit Inference(std::unique_ptr<State> state);
  std::unique_ptr<State> s_;
};

} // namespace ampc::api

#endif // AMPC_TOOLS_AMPRUN_API_H
