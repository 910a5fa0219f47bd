//===- Plot.h - a training run's curves as one SVG file
//--------------------===//
//
// `amp-run --plot FILE.svg` draws the train and test loss, the test accuracy
// and the loss scale of one run (or of an AMP run and its f32 twin) over the
// training steps, as one standalone SVG 1.1 file: no scripts, fonts,
// stylesheets or images from elsewhere, so it opens anywhere and can be
// attached to an issue as is.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_PLOT_H
#define AMPC_RUNTIME_TOOLING_PLOT_H

#include "runtime/Status.h"

#include <string>
#include <vector>

namespace ampc::tools {

// One run's curves. NaN and infinite values (a loss that overflowed) leave a
// gap in their line; they are never drawn as 0 and never set an axis range.
struct PlotRun {
  std::string label; // "AMP O2 f16", "f32"
  // One value per training step. lossScale is empty when the run does not
  // scale its loss.
  std::vector<double> step, trainLoss, lossScale;
  // One value per evaluation (end of epoch); testLoss and testAccuracy are
  // each empty or as long as evalStep. Accuracy is a fraction in [0, 1].
  std::vector<double> evalStep, testLoss, testAccuracy;
  // Steps whose update was skipped because a gradient overflowed; drawn as
  // ticks along the bottom of the loss-scale panel.
  std::vector<double> skippedSteps;
};

// Writes `runs` to `path` (through PATH.tmp and a rename) as three stacked
// panels sharing the step axis:
// - loss: each run's train loss per step as a thin line, its exponential
//   moving average as a thick line (the legend gives the smoothing factor),
//   and the test loss per evaluation as markers joined by a line;
// - test accuracy in percent per evaluation;
// - loss scale on a log2 axis labelled in powers of two ("no loss scaling"
//   when no run has one), with the skipped steps marked.
// `title` heads the file and a legend names each run; every run has its own
// colour, and the second (fourth, ...) run's lines are dashed. Per-step lines
// are cut to at most two points per pixel column, so 100k steps still make a
// file of a few hundred kilobytes.
//
// Fails when `runs` is empty, when a run's vectors disagree in length (the
// message names the run and both vectors), when a step is not finite, or
// when the file cannot be written.
rt::Status writeTrainingPlot(const std::string &path, const std::string &title,
                             const std::vector<PlotRun> &runs);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_PLOT_H
