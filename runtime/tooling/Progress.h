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

#include <chrono>
#include <cstdint>
#include <string>

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
  /// which this process runs those from `firstStep`; `stepsPerEpoch` 0 means
  /// the data has no epochs. The clock starts here.
  Progress(Style style, std::string run, int64_t steps, int64_t firstStep,
           int64_t stepsPerEpoch, int64_t batch);
  ~Progress() { clear(); }

  /// After step `step` (0-based) finished with this loss and scale (NaN:
  /// no scaling).
  void update(int64_t step, double loss, double scale);
  /// Erases the bar so that a line printed next starts on a clean line.
  void clear();

private:
  void draw(int64_t step, double loss, double scale, bool force);

  Style style_;
  std::string run_;
  int64_t steps_, stepsPerEpoch_, batch_;
  bool drawn_ = false;
  int64_t firstStep_;
  std::chrono::steady_clock::time_point start_, lastDraw_;
};

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_PROGRESS_H
