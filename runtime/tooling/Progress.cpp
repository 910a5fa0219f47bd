//===- Progress.cpp - a training run's progress on the terminal -----------===//

#include "runtime/tooling/Progress.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

namespace ampc::tools {

Progress::Style Progress::detect() {
  const char *term = std::getenv("TERM");
  if (::isatty(STDERR_FILENO) && !(term && std::strcmp(term, "dumb") == 0))
    return Style::Bar;
  return Style::Lines;
}

Progress::Style Progress::named(const std::string &name) {
  if (name == "bar")
    return Style::Bar;
  if (name == "lines")
    return Style::Lines;
  if (name == "none")
    return Style::None;
  return detect();
}

Progress::Progress(Style style, std::string run, int64_t steps,
                   int64_t firstStep, EpochClock epochs, int64_t batch)
    : style_(style), run_(std::move(run)), steps_(steps), epochs_(epochs),
      batch_(batch), firstStep_(firstStep),
      start_(std::chrono::steady_clock::now()) {}

std::pair<int64_t, int64_t> Progress::periodOf(int64_t step) const {
  if (!epochs_.known())
    return {steps_, step + 1};
  int64_t first = epochs_.firstStepOf(step);
  // To the step that takes the epoch's last batch, or the run's last.
  int64_t last = std::min(epochs_.lastStepOf(step), steps_ - 1);
  return {last - first + 1, step - first + 1};
}

void Progress::update(int64_t step, double loss, double scale) {
  auto now = std::chrono::steady_clock::now();
  auto [period, inPeriod] = periodOf(step);
  bool last = step + 1 == steps_ || epochs_.endsAt(step + 1);
  if (style_ == Style::Bar) {
    draw(step, loss, scale,
         last || now - lastDraw_ >= std::chrono::milliseconds(100));
    return;
  }
  // Short runs finish before anyone reads a progress line.
  if (style_ == Style::None || period < 20)
    return;
  int64_t tenth = period / 10;
  if (inPeriod % tenth == 0 && inPeriod != period)
    draw(step, loss, scale, true);
}

void Progress::clear() {
  if (style_ == Style::Bar && drawn_) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    drawn_ = false;
  }
}

void Progress::draw(int64_t step, double loss, double scale, bool force) {
  if (!force)
    return;
  auto now = std::chrono::steady_clock::now();
  lastDraw_ = now;
  double secs = std::chrono::duration<double>(now - start_).count();
  int64_t done = step + 1 - firstStep_;
  double perSec = secs > 0 ? static_cast<double>(done * batch_) / secs : 0;
  double left = done > 0 ? secs / done * (steps_ - step - 1) : 0;

  std::string where;
  auto [period, inPeriod] = periodOf(step);
  if (epochs_.known())
    where = "epoch " + std::to_string(epochs_.epochOf(step)) + "/" +
            std::to_string(epochs_.total(steps_)) + " ";
  char tail[160];
  if (std::isnan(scale))
    std::snprintf(tail, sizeof(tail), "loss %.4f  %.0f samples/s  %.0fs left",
                  loss, perSec, std::ceil(left));
  else
    std::snprintf(tail, sizeof(tail),
                  "loss %.4f  scale %g  %.0f samples/s  %.0fs left", loss,
                  scale, perSec, std::ceil(left));
  std::string line = run_ + ": " + where;
  if (style_ == Style::Bar) {
    constexpr int kWidth = 24;
    int filled = static_cast<int>(kWidth * inPeriod / period);
    line += "[" + std::string(filled, '#') + std::string(kWidth - filled, '.') +
            "] ";
  }
  line += std::to_string(inPeriod) + "/" + std::to_string(period) + "  " + tail;
  if (style_ == Style::Bar) {
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    drawn_ = true;
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
  std::fflush(stderr);
}

} // namespace ampc::tools
