//===- Progress.h - a training run's progress on the terminal ---*- C++ -*-===//
//
// On a terminal, one line on stderr redrawn in place (at most ten times a
// second): the run, epoch, a bar, the step, the loss, the loss scale,
// samples/s and the time left. Anywhere else (a log file, a CI job) redrawing
// makes a mess, so the same facts go out as plain lines at every tenth of an
// epoch (or of the run, without epochs), only for runs long enough to need
// them. The epoch summaries are not progress: the caller prints them on
// stdout.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_PROGRESS_H
#define AMPC_RUNTIME_TOOLING_PROGRESS_H

#include "runtime/tooling/Epochs.h"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>

namespace ampc::tools {

class Progress {
public:
  enum class Style { Bar, Lines, None };
  /// Bar when stderr is a terminal (and TERM is not "dumb"), else Lines.
  static Style detect();
  /// The style a --progress value names: bar, lines, none; anything else
  /// (auto) is detect()'s. The tools check the value first.
  static Style named(const std::string &name);

  /// `steps` is the run's total (in its whole, a resumed run included), of
  /// which this process runs those from `firstStep`; `epochs` says where
  /// they fall in the data's epochs. The clock starts here.
  Progress(Style style, std::string run, int64_t steps, int64_t firstStep,
           EpochClock epochs, int64_t batch);
  ~Progress() { clear(); }

  /// After step `step` (0-based) finished with this loss and scale (NaN:
  /// no scaling).
  void update(int64_t step, double loss, double scale);
  /// Erases the bar so that a line printed next starts on a clean line.
  void clear();

private:
  void draw(int64_t step, double loss, double scale, bool force);
  /// Steps of the epoch (or of the run, without epochs) `step` is in, and
  /// how far into them `step` is (from 1).
  std::pair<int64_t, int64_t> periodOf(int64_t step) const;

  Style style_;
  std::string run_;
  int64_t steps_;
  EpochClock epochs_;
  int64_t batch_;
  bool drawn_ = false;
  int64_t firstStep_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_PROGRESS_H
