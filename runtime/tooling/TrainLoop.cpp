//===- TrainLoop.cpp - the host loop of a training run --------------------===//

#include "runtime/tooling/TrainLoop.h"

#include "runtime/Checksum.h"
#include "runtime/TypedIO.h"
#include "runtime/tooling/CheckNumerics.h"
#include "runtime/tooling/Fnv.h"
#include "runtime/tooling/Format.h"
#include "runtime/tooling/Metrics.h"
#include "runtime/tooling/Signals.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>
#include <set>

namespace ampc::tools {
namespace {

constexpr const char *kFoundInf = "found_inf";
constexpr const char *kScaleParam = "loss_scale";
// How long the other ranks of a data-parallel run wait while rank 0
// evaluates or writes a checkpoint (an hour: a test split or a checkpoint
// that takes longer is not a hang).
constexpr double kLeadWorkSeconds = 3600;

/// Why the ranks take no checkpoint after `step` steps of `accumulate` per
/// update: "after step S, between two updates (...)".
std::string betweenUpdates(int64_t step, int64_t accumulate) {
  return "after step " + std::to_string(step) +
         ", between two updates (the step accumulates " +
         std::to_string(accumulate) + " steps per update)";
}

using Clock = std::chrono::steady_clock;

double seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string fixed(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
  return buf;
}

/// The integer label of row `i` of a label tensor.
int64_t labelAt(const rt::HostTensor &t, int64_t i) {
  if (t.dtype == rt::DType::I64)
    return reinterpret_cast<const int64_t *>(t.bytes.data())[i];
  return reinterpret_cast<const int32_t *>(t.bytes.data())[i];
}

} // namespace

TrainLoop::TrainLoop(rt::Session &train, rt::Session *eval, rt::StepInfo step,
                     BatchSource &data, BatchSource *test, LoopOptions options)
    : TrainLoop(train, std::move(step),
                data.specs().empty() || data.specs()[0].shape.empty()
                    ? 1
                    : data.specs()[0].shape[0],
                std::move(options)) {
  eval_ = eval;
  data_ = &data;
  test_ = test;
}

TrainLoop::TrainLoop(rt::Session &train, rt::StepInfo step, int64_t batch,
                     LoopOptions options)
    : train_(train), eval_(nullptr), step_(std::move(step)), data_(nullptr),
      test_(nullptr), o_(std::move(options)), batch_(batch) {
  history_.stepColumns = {"step",     "loss",       "step_time_ms",
                          "input_ms", "loss_scale", "skipped"};
  if (o_.checksumState)
    history_.stepColumns.push_back("state_checksum");
  history_.evalColumns = {"step",      "epoch",         "train_loss",
                          "test_loss", "test_accuracy", "samples_per_s"};
}

EpochClock TrainLoop::epochs() const {
  return {data_ ? data_->stepsPerEpoch() : 0, std::max(1, o_.worldSize)};
}

int TrainLoop::fail(const std::string &msg) {
  if (progress_)
    progress_->clear();
  std::fflush(stdout);
  std::fprintf(stderr, "%s: error: %s\n", o_.tool.c_str(), msg.c_str());
  return 1;
}

double TrainLoop::currentScale() const {
  rt::TensorView v;
  if (step_.checksOverflow && train_.param(kScaleParam, v))
    return rt::elementAsDouble(v, 0);
  return step_.staticScale;
}

int64_t TrainLoop::skipped() const {
  int64_t n = 0;
  for (const auto &row : history_.stepRows)
    n += row[kSkipped] != 0;
  return n;
}

PlotRun TrainLoop::plotRun(const std::string &label) const {
  PlotRun r;
  r.label = label;
  for (const auto &row : history_.stepRows) {
    r.step.push_back(row[kStep]);
    r.trainLoss.push_back(row[kLoss]);
    if (scales())
      r.lossScale.push_back(row[kScale]);
    if (row[kSkipped] != 0)
      r.skippedSteps.push_back(row[kStep]);
  }
  for (const auto &row : history_.evalRows) {
    r.evalStep.push_back(row[kEvalStep]);
    r.testLoss.push_back(row[kTestLoss]);
    r.testAccuracy.push_back(row[kTestAccuracy]);
  }
  return r;
}

double TrainLoop::finalLoss() const {
  return history_.stepRows.empty() ? NAN : history_.stepRows.back()[kLoss];
}

/// The median of `times` (the upper one of an even count); NaN if empty.
static double median(std::vector<double> times) {
  if (times.empty())
    return NAN;
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

double TrainLoop::medianStepMs() const { return median(times_); }

double TrainLoop::medianInputMs() const { return median(inputTimes_); }

double TrainLoop::samplesPerSecond() const {
  return runSeconds_ > 0
             ? static_cast<double>(times_.size() * batch_) / runSeconds_
             : NAN;
}

bool TrainLoop::lastEval(double &testLoss, double &testAccuracy) const {
  if (history_.evalRows.empty())
    return false;
  testLoss = history_.evalRows.back()[kTestLoss];
  testAccuracy = history_.evalRows.back()[kTestAccuracy];
  return true;
}

void LoopOptions::asRank(const std::string &toolName, rt::Collective *ranks) {
  if (!ranks || ranks->size() <= 1)
    return;
  rank = ranks->rank();
  worldSize = ranks->size();
  collective = ranks;
  tool = toolName + ": rank " + std::to_string(rank);
  if (rank != 0) {
    metrics.clear();
    evalMetrics.clear();
    checkpointDir.clear();
    progress = Progress::Style::None;
  }
}

/// FNV-1a over the bytes of every parameter and optimizer state tensor,
/// the loss-scale state left out: equal before and after a skipped step.
uint32_t TrainLoop::stateChecksum() const {
  Fnv1a32 h;
  for (const rt::BindingInfo &b : train_.function().params) {
    if (b.name.rfind(kScaleParam, 0) == 0)
      continue;
    rt::TensorView v;
    if (!train_.param(b.name, v))
      continue;
    h.add(v.data, v.byteSize());
  }
  return h.value;
}

rt::Status TrainLoop::paramsChecksum(bool weightsOnly,
                                     uint32_t &checksum) const {
  checksum = 0;
  for (const rt::BindingInfo &b : train_.function().params) {
    if (weightsOnly && !step_.weights.count(b.name))
      continue;
    rt::TensorView v;
    AMPC_RETURN_IF_ERROR(train_.param(b.name, v));
    checksum = rt::crc32Of(v.data, v.byteSize(), checksum);
  }
  return rt::Status::ok();
}

rt::Status TrainLoop::runFacts(const BatchSource *data, RunFacts &facts) const {
  facts = o_.rankConfig;
  for (const auto &[key, value] : o_.config) {
    // Where the data are may differ between machines: what they hold is
    // compared below. (Rank 0 alone evaluates the test data.)
    if (key == "--data" || key == "--test-data")
      continue;
    // The rest are flags, and the hash of the step the ranks compiled or
    // read.
    facts[key.rfind("--", 0) == 0 ? key : kStepHashFact] = value;
  }
  // The loop's own: when the ranks wait for rank 0, and when they stop.
  facts["the run's steps"] = std::to_string(o_.steps);
  facts["the step it starts at"] = std::to_string(firstStep_);
  facts["--checkpoint-every"] = std::to_string(o_.checkpointEvery);
  facts["--max-overflow-steps"] = std::to_string(o_.maxOverflowSteps);
  facts["--checksum-state"] = o_.checksumState ? "true" : "false";
  if (data) {
    facts["the training data's samples"] = std::to_string(data->samples());
    facts["the training data's CRC-32"] = rt::hex32(data->checksum());
  }
  // Every parameter: the weights, the optimizer's and loss scaling's state
  // and batch norm's statistics all start equal (from the model, the
  // checkpoint or --init-params).
  uint32_t state = 0;
  AMPC_RETURN_IF_ERROR(paramsChecksum(/*weightsOnly=*/false, state));
  facts["the CRC-32 of the state it starts from"] = rt::hex32(state);
  return rt::Status::ok();
}

rt::Status TrainLoop::compareRanks(uint32_t &checksum) const {
  AMPC_RETURN_IF_ERROR(paramsChecksum(/*weightsOnly=*/true, checksum));
  if (!dataParallel())
    return rt::Status::ok();
  // Each rank's checksum in its own slot: exact in the double sums.
  std::vector<double> all(static_cast<size_t>(o_.worldSize), 0.0);
  all[static_cast<size_t>(o_.rank)] = checksum;
  AMPC_RETURN_IF_ERROR(o_.collective->sumOverRanks(all.data(), all.size())
                           .withContext("comparing the ranks' weights"));
  if (o_.rank != 0)
    return rt::Status::ok();
  bool equal = true;
  std::string each;
  for (size_t r = 0; r < all.size(); ++r) {
    auto c = static_cast<uint32_t>(all[r]);
    equal &= c == checksum;
    char text[32];
    std::snprintf(text, sizeof text, "%srank %zu %08x", r ? ", " : "", r, c);
    each += text;
  }
  if (!equal)
    return rt::Status::error("the ranks' weights differ after the last step (" +
                             each + "): their updates were not the same");
  return rt::Status::ok();
}

rt::Status TrainLoop::agreeWithRankZero(const BatchSource *data) const {
  if (!dataParallel())
    return rt::Status::ok();
  RunFacts facts;
  AMPC_RETURN_IF_ERROR(runFacts(data, facts));
  return checkSameRunAsRankZero(*o_.collective, facts, o_.howToStart);
}

rt::Status TrainLoop::saveCheckpointOfRanks(const std::string &dir) {
  bool ranks = dataParallel();
  if (ranks && !atUpdate(stepsDone()))
    return rt::Status::error(
        "a checkpoint " + betweenUpdates(stepsDone(), step_.accumulate) +
        ": the ranks write one at an update, where their gradients are "
        "summed");
  rt::Status written = rt::Status::ok();
  if (o_.rank == 0) {
    written = checkCheckpointDirectory(dir);
    if (written)
      written = saveCheckpoint(dir);
  }
  if (!ranks)
    return written;
  // The others wait while rank 0 writes (a large model takes longer than
  // an all-reduce may), then learn whether it did.
  AMPC_RETURN_IF_ERROR(o_.collective->waitForAll(kLeadWorkSeconds)
                           .withContext("waiting for rank 0's checkpoint"));
  return checkEveryRank(*o_.collective, written,
                        "write the checkpoint in " + dir);
}

rt::Status TrainLoop::checkpointFits(const Checkpoint &ckpt,
                                     const std::string &dir) const {
  std::vector<std::vector<double>> stepRows;
  return fit(ckpt, dir, stepRows);
}

rt::Status TrainLoop::resume(const Checkpoint &ckpt, const std::string &dir) {
  std::vector<std::vector<double>> stepRows;
  AMPC_RETURN_IF_ERROR(fit(ckpt, dir, stepRows));
  for (const rt::HostTensor &t : ckpt.params)
    if (rt::Status s = train_.setParam(t.name, t.view()); !s)
      return s;
  history_.stepRows = std::move(stepRows);
  history_.evalRows = ckpt.evalRows;
  firstStep_ = ckpt.step;
  return rt::Status::ok();
}

rt::Status TrainLoop::fit(const Checkpoint &ckpt, const std::string &dir,
                          std::vector<std::vector<double>> &stepRows) const {
  const std::string where = checkpointPath(dir);
  // It holds rank 0's partial gradients alone (run() writes none there).
  if (dataParallel() && !atUpdate(ckpt.step))
    return rt::Status::error(
        where + ": written " + betweenUpdates(ckpt.step, step_.accumulate) +
        ": a data-parallel run resumes only from an update, where the "
        "ranks' gradients are summed");
  // Checkpoints written before the input_ms column get it, unknown (NaN).
  std::vector<std::string> withoutInput = history_.stepColumns;
  withoutInput.erase(withoutInput.begin() + kInputMs);
  stepRows = ckpt.stepRows;
  std::vector<std::string> stepColumns = ckpt.stepColumns;
  if (stepColumns == withoutInput) {
    stepColumns = history_.stepColumns;
    for (std::vector<double> &row : stepRows)
      row.insert(row.begin() + kInputMs, NAN);
  }
  if (stepColumns != history_.stepColumns ||
      ckpt.evalColumns != history_.evalColumns)
    return rt::Status::error(
        where + ": its metric columns differ from this run's (written with " +
        (stepColumns.size() > history_.stepColumns.size()
             ? "--checksum-state, which this run lacks"
             : "no --checksum-state, which this run has") +
        ")");
  if (static_cast<int64_t>(ckpt.stepRows.size()) != ckpt.step)
    return rt::Status::error(
        where + ": it is at step " + std::to_string(ckpt.step) + " but holds " +
        std::to_string(ckpt.stepRows.size()) + " step rows");
  // Every parameter of the step, and nothing else, with its exact type:
  // checked in full before anything is written, so a mismatch changes
  // nothing.
  std::map<std::string, const rt::HostTensor *> byName;
  for (const rt::HostTensor &t : ckpt.params)
    byName[t.name] = &t;
  std::set<std::string> params;
  for (const rt::BindingInfo &b : train_.function().params) {
    params.insert(b.name);
    auto it = byName.find(b.name);
    if (it == byName.end())
      return rt::Status::error(where + ": holds no '" + b.name +
                               "', which this run's step has");
    rt::TensorView want;
    if (rt::Status s = train_.param(b.name, want); !s)
      return s;
    const rt::HostTensor &t = *it->second;
    if (t.dtype != want.dtype || t.shape != want.shape)
      return rt::Status::error(where + ": '" + b.name + "' is " + t.typeStr() +
                               " there but " + want.typeStr() +
                               " in this run's step");
  }
  for (const rt::HostTensor &t : ckpt.params)
    if (!params.count(t.name))
      return rt::Status::error(where + ": holds '" + t.name +
                               "', which this run's step does not have");
  return rt::Status::ok();
}

rt::Status TrainLoop::saveCheckpoint(const std::string &dir) {
  Checkpoint c;
  c.step = stepsDone();
  c.config = o_.config;
  for (const rt::BindingInfo &b : train_.function().params) {
    rt::TensorView v;
    if (rt::Status s = train_.param(b.name, v); !s)
      return s;
    c.params.push_back(rt::copyOf(v, b.name));
  }
  c.stepColumns = history_.stepColumns;
  c.stepRows = history_.stepRows;
  c.evalColumns = history_.evalColumns;
  c.evalRows = history_.evalRows;
  AMPC_RETURN_IF_ERROR(tools::writeCheckpoint(dir, c));
  savedStep_ = c.step;
  return rt::Status::ok();
}

int TrainLoop::stopOnSignal(int sig, int fromRank, int64_t stepsDone,
                            MetricsWriter *metrics,
                            MetricsWriter *evalMetrics) {
  if (progress_)
    progress_->clear();
  bool ranks = dataParallel();
  // The other ranks wait while rank 0 writes the checkpoint, then all end
  // together (the tools then end no rank: isSignalExit).
  auto waitForRankZero = [&]() -> rt::Status {
    return ranks ? o_.collective->waitForAll(kLeadWorkSeconds)
                 : rt::Status::ok();
  };
  std::string what = std::string("interrupted by ") + signalName(sig) +
                     (ranks && fromRank >= 0
                          ? " (sent to rank " + std::to_string(fromRank) + ")"
                          : std::string()) +
                     " after step " + std::to_string(stepsDone) + " of " +
                     std::to_string(o_.steps);
  if (o_.rank != 0) {
    if (rt::Status st = waitForRankZero(); !st)
      return fail(what + ": waiting for rank 0's checkpoint: " + st.message());
    return 128 + sig;
  }
  std::string saved;
  if (!o_.comparedCheckpoint.empty()) {
    saved = "the f32 comparison run writes no checkpoint; the AMP run's is " +
            checkpointPath(o_.comparedCheckpoint);
  } else if (o_.checkpointDir.empty()) {
    saved = "no checkpoint written (--checkpoint DIR was not given)";
  } else {
    if (savedStep_ != stepsDone)
      if (rt::Status st = saveCheckpoint(o_.checkpointDir); !st)
        return fail("--checkpoint: " + st.message() + " (" + what + ")");
    saved = "checkpoint written to " + checkpointPath(o_.checkpointDir) +
            " (continue with --resume " + o_.checkpointDir + ")";
  }
  if (metrics)
    if (rt::Status st = metrics->close(); !st)
      return fail("--metrics: " + st.message() + " (" + what + ")");
  if (evalMetrics)
    if (rt::Status st = evalMetrics->close(); !st)
      return fail("--eval-metrics: " + st.message() + " (" + what + ")");
  std::cout.flush();
  std::fprintf(stderr, "%s: %s; %s\n", o_.tool.c_str(), what.c_str(),
               saved.c_str());
  if (rt::Status st = waitForRankZero(); !st)
    return fail(st.message());
  return 128 + sig;
}

rt::Status TrainLoop::evaluate(int64_t stepsDone, double periodSeconds) {
  // The evaluation function has its own copy of the weights (in its own
  // precision): give it the trained ones.
  for (const rt::BindingInfo &b : eval_->function().params) {
    rt::TensorView from, want;
    if (rt::Status s = train_.param(b.name, from); !s)
      return rt::Status::error("evaluation: parameter '" + b.name +
                               "' of the forward function is not in the "
                               "training step");
    if (rt::Status s = eval_->param(b.name, want); !s)
      return s;
    rt::HostTensor converted;
    if (from.dtype != want.dtype) {
      converted = rt::copyOf(from, b.name);
      if (rt::Status s = rt::convertTo(converted, want.dtype); !s)
        return s;
      from = converted.view();
    }
    if (rt::Status s = eval_->setParam(b.name, from); !s)
      return s;
  }

  // The label input and the logits output, when the loss is a
  // classification loss: accuracy and a test loss over exactly the test
  // samples (a padded last batch counts its real rows only).
  int labelIndex = -1;
  int64_t classes = 0;
  for (size_t i = 0; i < test_->specs().size(); ++i) {
    auto c = step_.classes.find(test_->specs()[i].name);
    if (c != step_.classes.end()) {
      labelIndex = static_cast<int>(i);
      classes = c->second;
    }
  }
  std::string logits;
  double lossSum = 0, correct = 0;
  int64_t lossSamples = 0, samples = 0;
  std::vector<rt::HostTensor> batch;
  for (int64_t i = 0, n = test_->evalBatches(); i < n; ++i) {
    int64_t valid = 0;
    if (rt::Status s = test_->evalBatch(i, batch, valid); !s)
      return rt::Status::error("--test-data: " + s.message());
    for (rt::HostTensor &t : batch)
      if (rt::Status s = eval_->setInput(t.name, t.view()); !s)
        return s;
    if (rt::Status s = eval_->run(); !s)
      return rt::Status::error("evaluation: " + s.message());
    if (i == 0 && labelIndex >= 0)
      for (const rt::BindingInfo &b : eval_->function().outputs) {
        rt::TensorView v;
        if (b.name != step_.loss && eval_->output(b.name, v) && v.rank() == 2 &&
            v.shape[0] == batch_ && v.shape[1] == classes) {
          logits = b.name;
          break;
        }
      }
    samples += valid;
    if (!logits.empty()) {
      rt::TensorView v;
      if (rt::Status s = eval_->output(logits, v); !s)
        return s;
      const rt::HostTensor &labels = batch[labelIndex];
      for (int64_t r = 0; r < valid; ++r) {
        // Softmax cross-entropy in double, and the first maximum as the
        // prediction (a NaN row predicts nothing).
        double mx = -INFINITY;
        int64_t arg = -1;
        for (int64_t c = 0; c < classes; ++c) {
          double x = rt::elementAsDouble(v, r * classes + c);
          if (x > mx) {
            mx = x;
            arg = c;
          }
        }
        double sum = 0;
        for (int64_t c = 0; c < classes; ++c)
          sum += std::exp(rt::elementAsDouble(v, r * classes + c) - mx);
        int64_t label = labelAt(labels, r);
        if (label < 0 || label >= classes)
          continue; // an ignored label: in neither loss nor accuracy
        lossSum +=
            mx + std::log(sum) - rt::elementAsDouble(v, r * classes + label);
        ++lossSamples;
        correct += arg == label;
      }
    } else if (valid == batch_) {
      rt::TensorView v;
      if (rt::Status s = eval_->output(step_.loss, v); !s)
        return s;
      lossSum += rt::elementAsDouble(v, 0) * valid;
      lossSamples += valid;
    }
  }

  // The train loss: the mean finite step loss of the epoch so far (without
  // epochs: since the last evaluation), so that an evaluation at the end of
  // a run cut mid-epoch does not change the next epoch's figure.
  EpochClock clock = epochs();
  int64_t prevEval =
      history_.evalRows.empty()
          ? 0
          : static_cast<int64_t>(history_.evalRows.back()[kEvalStep]);
  int64_t from = clock.known() ? clock.firstStepOf(stepsDone - 1) : prevEval;
  double trainSum = 0;
  int64_t trainN = 0;
  for (int64_t s = from; s < stepsDone; ++s)
    if (std::isfinite(history_.stepRows[s][kLoss])) {
      trainSum += history_.stepRows[s][kLoss];
      ++trainN;
    }
  double epoch = clock.known() ? clock.fraction(stepsDone) : NAN;
  double testLoss = lossSamples ? lossSum / lossSamples : NAN;
  double accuracy =
      logits.empty() || !lossSamples ? NAN : correct / lossSamples;
  double perSec =
      periodSeconds > 0
          ? static_cast<double>((stepsDone - prevEval) * batch_) / periodSeconds
          : NAN;
  history_.evalRows.push_back({static_cast<double>(stepsDone), epoch,
                               trainN ? trainSum / trainN : NAN, testLoss,
                               accuracy, perSec});

  if (progress_)
    progress_->clear();
  std::string line = o_.run + ": ";
  if (clock.endsAt(stepsDone)) {
    line += "epoch " + std::to_string(clock.completed(stepsDone)) + "/" +
            std::to_string(clock.total(o_.steps));
  } else {
    line +=
        "step " + std::to_string(stepsDone) + "/" + std::to_string(o_.steps);
  }
  line += ": train loss " + fixed(trainN ? trainSum / trainN : NAN, 4) +
          ", test loss " + fixed(testLoss, 4);
  if (!std::isnan(accuracy))
    line += ", test accuracy " + fixed(accuracy * 100, 2) + "%";
  if (step_.checksOverflow) {
    int64_t skippedHere = 0;
    for (int64_t s = prevEval; s < stepsDone; ++s)
      skippedHere += history_.stepRows[s][kSkipped] != 0;
    line += ", loss scale " + nineDigits(currentScale()) + ", skipped " +
            std::to_string(skippedHere);
  }
  if (!std::isnan(perSec))
    line += ", " + fixed(perSec, 0) + " samples/s";
  std::cout << line << std::endl;
  return rt::Status::ok();
}

rt::Status TrainLoop::runStep(const std::vector<Feed> &batch, bool probe,
                              const InterruptScope *interrupts,
                              StepOutcome &out) {
  int64_t s = stepsDone();
  out.scale = currentScale();
  out.updates = atUpdate(s + 1);
  auto inputStart = Clock::now();
  for (const Feed &feed : batch)
    AMPC_RETURN_IF_ERROR(train_.setInput(feed.first, feed.second));
  train_.setNonFiniteProbe(probe);
  std::string where = o_.modelPath + ": step " + std::to_string(s) + ": ";
  // The batch's copy to the device is timed apart from the step (input_ms),
  // as the PyTorch peer times its .to(device) (bench/gpu/torch_peer.py).
  if (rt::Status st = train_.waitForInputs(); !st)
    return rt::Status::error(where + st.message());
  auto runStart = Clock::now();
  double inputMs = seconds(inputStart, runStart) * 1e3;
  if (rt::Status st = train_.run(); !st)
    return rt::Status::error(where + st.message());
  // A GPU session's run() only enqueues the step; reading the loss waits
  // for it, so the clock stops after that read.
  rt::TensorView lv;
  AMPC_RETURN_IF_ERROR(train_.output(step_.loss, lv));
  out.loss = rt::elementAsDouble(lv, 0);
  out.overflow = false;
  if (step_.checksOverflow) {
    rt::TensorView fv;
    AMPC_RETURN_IF_ERROR(train_.output(kFoundInf, fv));
    out.overflow = rt::elementAsDouble(fv, 0) != 0;
  }
  // Data parallelism: the step's loss is the mean of the ranks' (what one
  // process accumulating the same batches averages), so every rank reports,
  // and stops on, the same value. The exchange is part of the step's time.
  // Each rank's signal travels with it, in the rank's own slot.
  if (dataParallel()) {
    std::vector<double> shared(1 + static_cast<size_t>(o_.worldSize), 0.0);
    shared[0] = out.loss;
    shared[1 + static_cast<size_t>(o_.rank)] =
        interrupts ? interrupts->received() : 0;
    if (rt::Status st =
            o_.collective->sumOverRanks(shared.data(), shared.size());
        !st)
      return rt::Status::error(where + "the ranks' losses: " + st.message());
    out.loss = shared[0] / o_.worldSize;
    int signalled = 0;
    for (int r = o_.worldSize - 1; r >= 0; --r)
      if (int sig = static_cast<int>(shared[1 + static_cast<size_t>(r)])) {
        out.stopSignal = sig;
        out.stopRank = r;
        ++signalled;
      }
    if (signalled == o_.worldSize)
      out.stopRank = -1; // mpirun passes its signals on to every rank
  }
  double ms = seconds(runStart, Clock::now()) * 1e3;
  times_.push_back(ms);
  inputTimes_.push_back(inputMs);
  std::vector<double> row = {
      static_cast<double>(s),  out.loss, ms, inputMs, out.scale,
      out.overflow ? 1.0 : 0.0};
  if (o_.checksumState)
    row.push_back(stateChecksum());
  history_.stepRows.push_back(std::move(row));
  return rt::Status::ok();
}

int TrainLoop::run() {
  if (!data_)
    return fail("the loop has no data source: its caller feeds it through "
                "step()");
  // Data parallelism: every rank trains rank 0's run (RankAgreement.h).
  if (rt::Status s = agreeWithRankZero(data_); !s)
    return fail(s.message());
  std::unique_ptr<MetricsWriter> metrics, evalMetrics;
  if (!o_.metrics.empty())
    if (rt::Status s =
            MetricsWriter::open(o_.metrics, history_.stepColumns, metrics);
        !s)
      return fail("--metrics: " + s.message());
  if (!o_.evalMetrics.empty())
    if (rt::Status s = MetricsWriter::open(o_.evalMetrics, history_.evalColumns,
                                           evalMetrics);
        !s)
      return fail("--eval-metrics: " + s.message());
  // A resumed run's files cover the whole run.
  if (metrics)
    for (const auto &row : history_.stepRows)
      if (rt::Status s = metrics->row(row); !s)
        return fail("--metrics: " + s.message());
  size_t evalWritten = 0;
  auto flushEval = [&]() -> rt::Status {
    for (; evalMetrics && evalWritten < history_.evalRows.size(); ++evalWritten)
      if (rt::Status s = evalMetrics->row(history_.evalRows[evalWritten]); !s)
        return s;
    return rt::Status::ok();
  };
  if (rt::Status s = flushEval(); !s)
    return fail("--eval-metrics: " + s.message());

  progress_ = std::make_unique<Progress>(o_.progress, o_.run, o_.steps,
                                         firstStep_, epochs(), batch_);
  // Overflowing updates in a row, as far as the history goes back.
  int64_t overflowRun = 0;
  for (int64_t s = 0; s < static_cast<int64_t>(history_.stepRows.size()); ++s)
    if (atUpdate(s + 1))
      overflowRun = history_.stepRows[s][kSkipped] != 0 ? overflowRun + 1 : 0;

  // --check-numerics: what comes in is checked once, what each step makes
  // by the probe.
  std::optional<StepNumerics> numerics;
  if (o_.checkNumerics) {
    if (rt::Status st = checkParamsFinite(train_); !st)
      return fail(o_.modelPath + ": before step " + std::to_string(firstStep_) +
                  ": " + st.message() + " (--check-numerics)");
    numerics.emplace(train_, step_.loss, step_.checksOverflow);
  }

  std::vector<rt::HostTensor> scratch;
  const std::vector<rt::HostTensor> *batch = nullptr;
  std::vector<Feed> feeds;
  const EpochClock clock = epochs();
  double periodSeconds = 0;
  // From here on SIGINT and SIGTERM end the run between steps, state saved.
  InterruptScope interrupts;
  // A checkpoint due between the updates of a data-parallel accumulation,
  // written at the update that ends it.
  bool checkpointOwed = false;
  for (int64_t s = firstStep_; s < o_.steps; ++s) {
    auto start = Clock::now();
    if (rt::Status st =
            data_->batch(s * o_.worldSize + o_.rank, scratch, batch);
        !st)
      return fail("--data: step " + std::to_string(s) + ": " + st.message());
    bool updates = atUpdate(s + 1);
    // The step that would reach --max-overflow-steps runs with the probe
    // that finds the first kernel to write an inf or NaN. Only every
    // accumulate-th step updates, and only an update checks.
    bool probe = step_.checksOverflow && o_.maxOverflowSteps > 0 && updates &&
                 overflowRun + 1 >= o_.maxOverflowSteps;
    feeds.clear();
    for (const rt::HostTensor &t : *batch)
      feeds.emplace_back(t.name, t.view());
    StepOutcome outcome;
    if (rt::Status st =
            runStep(feeds, probe || numerics.has_value(), &interrupts, outcome);
        !st)
      return fail(st.message());
    double loss = outcome.loss, scale = outcome.scale;
    bool overflow = outcome.overflow;
    double taken = seconds(start, Clock::now());
    runSeconds_ += taken;
    periodSeconds += taken;
    if (updates)
      overflowRun = overflow ? overflowRun + 1 : 0;
    if (metrics)
      if (rt::Status st = metrics->row(history_.stepRows.back()); !st)
        return fail("--metrics: " + st.message());
    progress_->update(s, loss, step_.checksOverflow ? scale : NAN);

    if (numerics) {
      NumericsVerdict v = numerics->judge(
          {s, updates, std::isfinite(loss), overflow, scale, currentScale()});
      if (v.kind == NumericsVerdict::Stop) {
        if (metrics)
          (void)metrics->close();
        return fail(o_.modelPath + ": step " + std::to_string(s) + ": " +
                    v.text);
      }
      if (v.kind == NumericsVerdict::Note && o_.rank == 0) {
        progress_->clear();
        std::cout << o_.run << ": " << v.text << std::endl;
      }
    }
    if (probe && overflowRun >= o_.maxOverflowSteps) {
      if (metrics)
        (void)metrics->close();
      const auto &origin = train_.firstNonFinite();
      char scaleText[32];
      std::snprintf(scaleText, sizeof(scaleText), "%.2E", scale);
      return fail(
          o_.modelPath + ": step " + std::to_string(s) + ": " +
          std::to_string(overflowRun) +
          (step_.accumulate > 1 ? " updates" : " steps") +
          " in a row overflowed and were skipped (loss scale " + scaleText +
          "); " +
          (origin ? "the first op whose output overflowed: " + origin->message()
                  : std::string("no kernel wrote an inf or NaN, so it came "
                                "in with the batch")) +
          " (--max-overflow-steps)");
    }

    int64_t done = s + 1;
    bool epochEnd = clock.endsAt(done);
    if (test_ && eval_ && (epochEnd || done == o_.steps)) {
      if (rt::Status st = evaluate(done, periodSeconds); !st)
        return fail(o_.modelPath + ": " + st.message());
      periodSeconds = 0;
      if (rt::Status st = flushEval(); !st)
        return fail("--eval-metrics: " + st.message());
    }
    bool checkpointDue =
        done == o_.steps ||
        (o_.checkpointEvery > 0 ? done % o_.checkpointEvery == 0 : epochEnd);
    // Between the updates of a data-parallel accumulation each rank holds
    // its own partial gradients, and a checkpoint (rank 0's) would resume
    // every rank with rank 0's: the checkpoint, or a stop, waits for the
    // update that ends it. (One process's checkpoint holds its partial
    // sums, and resumes anywhere.)
    bool midAccumulation = dataParallel() && !updates;
    if (midAccumulation) {
      checkpointOwed |= checkpointDue;
      checkpointDue = false;
    } else {
      checkpointDue |= checkpointOwed;
      checkpointOwed = false;
    }
    if (!o_.checkpointDir.empty() && checkpointDue)
      if (rt::Status st = saveCheckpoint(o_.checkpointDir); !st)
        return fail("--checkpoint: " + st.message());
    // Rank 0 alone evaluates and writes checkpoints: the other ranks wait
    // for it after each step where it may, not in their next all-reduce,
    // whose timeout is for a rank that died or hangs.
    if (dataParallel() && (epochEnd || checkpointDue))
      if (rt::Status st = o_.collective->waitForAll(kLeadWorkSeconds); !st)
        return fail(o_.modelPath + ": step " + std::to_string(s) + ": " +
                    st.message());
    // After the evaluation this step owes, which a resumed run would not
    // make up for. A signal during the last step lets the run finish: a
    // resume could not give it its --save-onnx, --plot and summary. One
    // process reads its signal now (one that came during the evaluation or
    // the checkpoint counts); ranks take the one their step's exchange
    // shared, the same on every rank, so that all stop after this step.
    int sig = dataParallel() ? outcome.stopSignal : interrupts.received();
    if (sig && done < o_.steps && !midAccumulation)
      return stopOnSignal(sig, dataParallel() ? outcome.stopRank : -1, done,
                          metrics.get(), evalMetrics.get());
  }
  progress_->clear();
  if (metrics)
    if (rt::Status st = metrics->close(); !st)
      return fail("--metrics: " + st.message());
  if (evalMetrics)
    if (rt::Status st = evalMetrics->close(); !st)
      return fail("--eval-metrics: " + st.message());
  return 0;
}

} // namespace ampc::tools
