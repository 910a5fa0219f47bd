//===- Plot.cpp - a training run's curves as one SVG file
//------------------===//
//
// The SVG is written as text: a few kinds of element (polyline, circle, path,
// text, rect) with presentation attributes, so the file needs no stylesheet.
// Each panel is a <g id="loss-panel|accuracy-panel|scale-panel"> holding one
// rect.plot-area, and every series carries a class naming what it is
// (train-raw, train-ema, test-loss, accuracy, loss-scale, skipped): the tests
// and anyone post-processing the file find them by those names.
//
//===----------------------------------------------------------------------===//

#include "runtime/tooling/Plot.h"

#include "runtime/io/TensorFile.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ampc::tools {
namespace {

using rt::Status;

// Layout in SVG user units (pixels at 100% zoom).
constexpr double kWidth = 960;
constexpr double kLeft = 72; // room for the y tick labels
constexpr double kRight = 24;
constexpr double kPlotWidth = kWidth - kLeft - kRight;
constexpr double kLossHeight = 240, kAccuracyHeight = 150, kScaleHeight = 150;
constexpr double kPanelGap = 38; // heading of the next panel included
// A per-step series keeps at most the minimum and maximum of each pixel
// column (see toLines).
constexpr size_t kBuckets = size_t(kPlotWidth);

const char *const kPalette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                "#9467bd", "#ff7f0e", "#8c564b"};
const char *colourOf(size_t run) {
  return kPalette[run % (sizeof kPalette / sizeof *kPalette)];
}
// Dashes tell the runs apart in greyscale too.
bool isDashed(size_t run) { return run % 2 == 1; }

const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Point {
  double x, y;
};
using Line = std::vector<Point>; // one unbroken polyline
using Lines = std::vector<Line>;

// XML text and attribute values: the five special characters as entities,
// control characters (not allowed in XML 1.0) and bytes that are not UTF-8
// as U+FFFD, so any model path or label keeps the file well-formed.
std::string escapeXml(const std::string &s) {
  const char *kReplacement = "\xEF\xBF\xBD";
  std::string out;
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
          out += kReplacement;
        else
          out += char(c);
      }
      ++i;
      continue;
    }
    // A multi-byte sequence: its length from the lead byte, then the
    // continuation bytes; overlong forms and surrogates are rejected.
    size_t len = c >= 0xC2 && c <= 0xDF   ? 2
                 : c >= 0xE0 && c <= 0xEF ? 3
                 : c >= 0xF0 && c <= 0xF4 ? 4
                                          : 0;
    bool valid = len != 0 && i + len <= s.size();
    for (size_t k = 1; valid && k < len; ++k)
      valid = (static_cast<unsigned char>(s[i + k]) & 0xC0) == 0x80;
    if (valid && len >= 3) {
      unsigned char c1 = static_cast<unsigned char>(s[i + 1]);
      valid = !(c == 0xE0 && c1 < 0xA0) && !(c == 0xED && c1 >= 0xA0) &&
              !(c == 0xF0 && c1 < 0x90) && !(c == 0xF4 && c1 >= 0x90);
    }
    if (!valid) {
      out += kReplacement;
      ++i;
      continue;
    }
    out.append(s, i, len);
    i += len;
  }
  return out;
}

// A coordinate: one decimal is a tenth of a pixel, and "12" rather than
// "12.0" keeps a 100k-step file small.
std::string coord(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f", v);
  std::string s = buf;
  if (s.size() > 2 && s.compare(s.size() - 2, 2, ".0") == 0)
    s.resize(s.size() - 2);
  return s == "-0" ? "0" : s;
}

std::string fixed(double v, int decimals) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  std::string s = buf;
  // -0.0 prints as "-0"; a tick at zero reads "0".
  if (s.find_first_not_of("-0.") == std::string::npos)
    return decimals > 0 ? "0." + std::string(decimals, '0') : "0";
  return s;
}

// Data range of the finite values seen.
struct Range {
  double lo = std::numeric_limits<double>::infinity();
  double hi = -std::numeric_limits<double>::infinity();
  void add(double v) {
    if (std::isfinite(v)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  void add(const std::vector<double> &vs, double factor = 1) {
    for (double v : vs)
      add(v * factor);
  }
  bool empty() const { return lo > hi; }
  // A range with room to map into: [0, 1] when nothing was seen, and a
  // single value widened by `pad` either side.
  Range usable(double pad) const {
    if (empty())
      return {0, 1};
    if (lo == hi)
      return {lo - pad, hi + pad};
    return *this;
  }
};

// Maps data [lo, hi] onto pixels [from, to] (to < from for a y axis).
struct Axis {
  double lo, hi, from, to;
  double operator()(double v) const {
    return from + (v - lo) / (hi - lo) * (to - from);
  }
};

// 1, 2 or 5 times a power of ten, near span / target.
double niceStep(double span, int target) {
  double raw = span / target;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double n = raw / mag;
  return (n < 1.5 ? 1 : n < 3 ? 2 : n < 7 ? 5 : 10) * mag;
}

struct Tick {
  double value;
  std::string label;
};

// The multiples of `step` inside [lo, hi], labelled with as many decimals
// as the step needs.
std::vector<Tick> ticksAt(double lo, double hi, double step) {
  int decimals = step >= 1 ? 0 : int(std::ceil(-std::log10(step) - 1e-9));
  std::vector<Tick> ticks;
  double first = std::ceil(lo / step - 1e-9);
  for (double k = first; k * step <= hi + step * 1e-9 && ticks.size() < 50; ++k)
    ticks.push_back({k * step, fixed(k * step, decimals)});
  return ticks;
}

std::vector<Tick> niceTicks(double lo, double hi, int target,
                            double minStep = 0) {
  return ticksAt(lo, hi, std::max(niceStep(hi - lo, target), minStep));
}

// 2 with the exponent as superscript digits (character references, so the
// source stays ASCII and the file needs no font beyond a default one).
std::string powerOfTwo(int exponent) {
  static const char *const kDigits[] = {
      "&#x2070;", "&#xB9;",   "&#xB2;",   "&#xB3;",   "&#x2074;",
      "&#x2075;", "&#x2076;", "&#x2077;", "&#x2078;", "&#x2079;"};
  std::string digits = std::to_string(exponent < 0 ? -exponent : exponent);
  std::string out = "2";
  if (exponent < 0)
    out += "&#x207B;";
  for (char d : digits)
    out += kDigits[d - '0'];
  return out;
}

// Splits a series at its non-finite values into unbroken lines. A series
// longer than two points per pixel column is decimated: each column
// (bucket of the x range) keeps only its minimum and maximum, in step order,
// which draws the same picture at this resolution, so 100k steps become at
// most 2 * kBuckets points. A non-finite value still breaks the line inside
// its column; further ones in the same column are dropped, so a column gives
// at most four points.
Lines toLines(const std::vector<double> &xs, const std::vector<double> &ys,
              double xLo, double xHi) {
  Lines lines(1);
  auto breakLine = [&] {
    if (!lines.back().empty())
      lines.emplace_back();
  };
  size_t n = std::min(xs.size(), ys.size());
  if (n <= 2 * kBuckets) {
    for (size_t i = 0; i < n; ++i) {
      if (std::isfinite(ys[i]))
        lines.back().push_back({xs[i], ys[i]});
      else
        breakLine();
    }
  } else {
    const size_t kNone = std::numeric_limits<size_t>::max();
    size_t minAt = kNone, maxAt = kNone;
    auto flush = [&] {
      if (minAt == kNone)
        return;
      size_t a = std::min(minAt, maxAt), b = std::max(minAt, maxAt);
      lines.back().push_back({xs[a], ys[a]});
      if (b != a)
        lines.back().push_back({xs[b], ys[b]});
      minAt = maxAt = kNone;
    };
    size_t bucket = kNone;
    bool broken = false;
    for (size_t i = 0; i < n; ++i) {
      double t = xHi > xLo ? (xs[i] - xLo) / (xHi - xLo) : 0;
      size_t b =
          size_t(std::clamp(t * double(kBuckets), 0.0, double(kBuckets - 1)));
      if (b != bucket) {
        flush();
        bucket = b;
        broken = false;
      }
      if (!std::isfinite(ys[i])) {
        if (!broken) {
          flush();
          breakLine();
          broken = true;
        }
        continue;
      }
      if (minAt == kNone || ys[i] < ys[minAt])
        minAt = i;
      if (maxAt == kNone || ys[i] > ys[maxAt])
        maxAt = i;
    }
    flush();
  }
  if (lines.back().empty())
    lines.pop_back();
  return lines;
}

// Exponential moving average of the finite values; a non-finite input gives
// NaN at its step (a gap in the smoothed line too) and leaves the average
// as it was. Starting from the first value avoids the bias towards zero.
std::vector<double> movingAverage(const std::vector<double> &ys, double alpha) {
  std::vector<double> out(ys.size(), kNaN);
  bool started = false;
  double avg = 0;
  for (size_t i = 0; i < ys.size(); ++i) {
    if (!std::isfinite(ys[i]))
      continue;
    avg = started ? avg + alpha * (ys[i] - avg) : ys[i];
    started = true;
    out[i] = avg;
  }
  return out;
}

// A loss scale holds from its step until the next one, so it is drawn as a
// staircase. Only the first and last step of each stretch of equal values
// are kept (a scale that doubles every 2000 steps is a handful of points),
// and the log2 of values that are not positive is NaN: a gap.
void scaleSeries(const PlotRun &run, std::vector<double> &xs,
                 std::vector<double> &ys) {
  size_t n = std::min(run.step.size(), run.lossScale.size());
  auto log2At = [&](size_t i) {
    double s = run.lossScale[i];
    return s > 0 && std::isfinite(s) ? std::log2(s) : kNaN;
  };
  for (size_t i = 0; i < n; ++i) {
    double y = log2At(i);
    // != is true for NaN, so gaps are kept.
    bool first = i == 0 || !(log2At(i - 1) == y);
    bool last = i + 1 == n || !(log2At(i + 1) == y);
    if (first || last) {
      xs.push_back(run.step[i]);
      ys.push_back(y);
    }
  }
}

Lines staircase(const Lines &lines) {
  Lines out;
  for (const Line &line : lines) {
    Line stepped;
    for (size_t i = 0; i < line.size(); ++i) {
      if (i > 0 && line[i].y != line[i - 1].y)
        stepped.push_back({line[i].x, line[i - 1].y});
      stepped.push_back(line[i]);
    }
    out.push_back(std::move(stepped));
  }
  return out;
}

// How one series is stroked.
struct Stroke {
  const char *colour;
  double width;
  bool dashed;
  double opacity = 1;
};

std::string strokeAttributes(const Stroke &s) {
  std::string out = " fill=\"none\" stroke=\"" + std::string(s.colour) +
                    "\" stroke-width=\"" + coord(s.width) +
                    "\" stroke-linejoin=\"round\"";
  if (s.dashed)
    out += " stroke-dasharray=\"6,3\"";
  if (s.opacity < 1)
    out += " stroke-opacity=\"" + coord(s.opacity) + "\"";
  return out;
}

// One polyline per line; a line of a single point is a dot, since a
// one-point polyline draws nothing.
void drawLines(std::string &out, const Lines &lines, const Axis &x,
               const Axis &y, const std::string &cls, const Stroke &stroke) {
  for (const Line &line : lines) {
    if (line.size() == 1) {
      out += "<circle class=\"" + cls + "\" cx=\"" + coord(x(line[0].x)) +
             "\" cy=\"" + coord(y(line[0].y)) + "\" r=\"" +
             coord(std::max(1.5, stroke.width)) + "\" fill=\"" + stroke.colour +
             "\"/>\n";
      continue;
    }
    out += "<polyline class=\"" + cls + "\" points=\"";
    for (size_t i = 0; i < line.size(); ++i) {
      if (i)
        out += ' ';
      out += coord(x(line[i].x)) + "," + coord(y(line[i].y));
    }
    out += "\"" + strokeAttributes(stroke) + "/>\n";
  }
}

// A marker per finite evaluation; hollow for dashed runs, like their lines.
void drawMarkers(std::string &out, const std::vector<double> &xs,
                 const std::vector<double> &ys, const Axis &x, const Axis &y,
                 const std::string &cls, size_t run) {
  for (size_t i = 0; i < std::min(xs.size(), ys.size()); ++i) {
    if (!std::isfinite(ys[i]))
      continue;
    out += "<circle class=\"" + cls + "\" cx=\"" + coord(x(xs[i])) +
           "\" cy=\"" + coord(y(ys[i])) + "\" r=\"3\"";
    if (isDashed(run))
      out += " fill=\"#fff\" stroke=\"" + std::string(colourOf(run)) +
             "\" stroke-width=\"1.5\"/>\n";
    else
      out += " fill=\"" + std::string(colourOf(run)) +
             "\" stroke=\"#fff\" stroke-width=\"0.8\"/>\n";
  }
}

void text(std::string &out, double x, double y, const std::string &escaped,
          const char *attributes = "") {
  out += "<text x=\"" + coord(x) + "\" y=\"" + coord(y) + "\"" + attributes +
         ">" + escaped + "</text>\n";
}

// Opens a panel: its heading, the grid at the ticks, and the y tick labels.
// The frame is drawn by closePanel, over the series.
void openPanel(std::string &out, const char *id, const std::string &heading,
               const Axis &x, const Axis &y, const std::vector<Tick> &xTicks,
               const std::vector<Tick> &yTicks) {
  double top = y.to, bottom = y.from;
  out += "<g id=\"" + std::string(id) + "\">\n";
  text(out, kLeft, top - 8, heading, " font-size=\"13\" font-weight=\"bold\"");
  std::string grid;
  for (const Tick &t : xTicks)
    grid += "M" + coord(x(t.value)) + " " + coord(top) + "V" + coord(bottom);
  for (const Tick &t : yTicks)
    grid += "M" + coord(kLeft) + " " + coord(y(t.value)) + "H" +
            coord(kLeft + kPlotWidth);
  if (!grid.empty())
    out += "<path class=\"grid\" d=\"" + grid +
           "\" fill=\"none\" stroke=\"#e6e6e6\" stroke-width=\"1\"/>\n";
  for (const Tick &t : yTicks)
    text(out, kLeft - 6, y(t.value) + 4, t.label,
         " font-size=\"11\" fill=\"#444\" text-anchor=\"end\"");
}

void closePanel(std::string &out, const Axis &y, const char *emptyMessage) {
  double top = y.to, height = y.from - y.to;
  if (emptyMessage)
    text(out, kLeft + kPlotWidth / 2, top + height / 2 + 5, emptyMessage,
         " font-size=\"14\" fill=\"#888\" text-anchor=\"middle\"");
  out += "<rect class=\"plot-area\" x=\"" + coord(kLeft) + "\" y=\"" +
         coord(top) + "\" width=\"" + coord(kPlotWidth) + "\" height=\"" +
         coord(height) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  out += "</g>\n";
}

std::string runName(const PlotRun &run, size_t index) {
  return run.label.empty() ? "run " + std::to_string(index + 1) : run.label;
}

Status checkRun(const PlotRun &run, size_t index) {
  std::string name = "run " + std::to_string(index + 1) +
                     (run.label.empty() ? "" : " ('" + run.label + "')");
  auto sameLength = [&](const char *aName, const std::vector<double> &a,
                        const char *bName, const std::vector<double> &b,
                        bool bMayBeEmpty) {
    if (a.size() == b.size() || (bMayBeEmpty && b.empty()))
      return Status::ok();
    return Status::error(name + ": " + aName + " has " +
                         std::to_string(a.size()) + " values but " + bName +
                         " has " + std::to_string(b.size()) +
                         (bMayBeEmpty ? " (it must be empty or as long)" : ""));
  };
  auto finite = [&](const char *vName, const std::vector<double> &v) {
    for (size_t i = 0; i < v.size(); ++i)
      if (!std::isfinite(v[i]))
        return Status::error(name + ": " + vName + "[" + std::to_string(i) +
                             "] is not finite");
    return Status::ok();
  };
  AMPC_RETURN_IF_ERROR(
      sameLength("step", run.step, "trainLoss", run.trainLoss, false));
  AMPC_RETURN_IF_ERROR(
      sameLength("step", run.step, "lossScale", run.lossScale, true));
  AMPC_RETURN_IF_ERROR(
      sameLength("evalStep", run.evalStep, "testLoss", run.testLoss, true));
  AMPC_RETURN_IF_ERROR(sameLength("evalStep", run.evalStep, "testAccuracy",
                                  run.testAccuracy, true));
  AMPC_RETURN_IF_ERROR(finite("step", run.step));
  AMPC_RETURN_IF_ERROR(finite("evalStep", run.evalStep));
  return finite("skippedSteps", run.skippedSteps);
}

// Loss: the data range exactly, so the curve fills the panel. `alpha` is
// the smoothing factor of the moving average.
void lossPanel(std::string &out, const std::vector<PlotRun> &runs,
               const Axis &x, const std::vector<Tick> &xTicks, double top,
               double alpha) {
  Range lossRange;
  for (const PlotRun &run : runs) {
    lossRange.add(run.trainLoss);
    lossRange.add(run.testLoss);
  }
  bool anyLoss = !lossRange.empty();
  // A constant loss sits mid-panel, 10% of its value either side.
  lossRange =
      lossRange.usable(lossRange.lo != 0 ? std::fabs(lossRange.lo) * 0.1 : 0.5);
  Axis lossY{lossRange.lo, lossRange.hi, top + kLossHeight, top};
  openPanel(out, "loss-panel", "Loss", x, lossY, xTicks,
            anyLoss ? niceTicks(lossY.lo, lossY.hi, 5) : std::vector<Tick>());
  for (size_t r = 0; r < runs.size(); ++r) {
    const PlotRun &run = runs[r];
    const char *colour = colourOf(r);
    // The per-step line stays solid: dashes on a line that changes
    // direction every pixel read as noise. Its EMA carries the dashes.
    drawLines(out, toLines(run.step, run.trainLoss, x.lo, x.hi), x, lossY,
              "train-raw", {colour, 0.8, false, 0.35});
    drawLines(
        out, toLines(run.step, movingAverage(run.trainLoss, alpha), x.lo, x.hi),
        x, lossY, "train-ema", {colour, 2, isDashed(r)});
    drawLines(out, toLines(run.evalStep, run.testLoss, x.lo, x.hi), x, lossY,
              "test-loss", {colour, 1.5, isDashed(r)});
    drawMarkers(out, run.evalStep, run.testLoss, x, lossY, "test-loss-marker",
                r);
  }
  closePanel(out, lossY, anyLoss ? nullptr : "no finite loss values");
}

// Test accuracy in percent: widened to whole ticks, kept within 0..100
// where the data is.
void accuracyPanel(std::string &out, const std::vector<PlotRun> &runs,
                   const Axis &x, const std::vector<Tick> &xTicks, double top) {
  Range accuracyRange;
  for (const PlotRun &run : runs)
    accuracyRange.add(run.testAccuracy, 100);
  bool anyAccuracy = !accuracyRange.empty();
  Range acc = accuracyRange.usable(1);
  double accStep = niceStep(acc.hi - acc.lo, 4);
  double accLo = std::floor(acc.lo / accStep) * accStep;
  double accHi = std::ceil(acc.hi / accStep) * accStep;
  if (anyAccuracy && accuracyRange.lo >= 0)
    accLo = std::max(accLo, 0.0);
  if (anyAccuracy && accuracyRange.hi <= 100)
    accHi = std::min(accHi, 100.0);
  Axis accuracyY{accLo, accHi, top + kAccuracyHeight, top};
  openPanel(out, "accuracy-panel", "Test accuracy (%)", x, accuracyY, xTicks,
            anyAccuracy ? ticksAt(accLo, accHi, accStep) : std::vector<Tick>());
  for (size_t r = 0; r < runs.size(); ++r) {
    std::vector<double> percent;
    for (double a : runs[r].testAccuracy)
      percent.push_back(100 * a);
    drawLines(out, toLines(runs[r].evalStep, percent, x.lo, x.hi), x, accuracyY,
              "accuracy", {colourOf(r), 1.5, isDashed(r)});
    drawMarkers(out, runs[r].evalStep, percent, x, accuracyY, "accuracy-marker",
                r);
  }
  closePanel(out, accuracyY, anyAccuracy ? nullptr : "no evaluations");
}

// Loss scale: whole powers of two on a log2 axis, and the skipped steps.
void scalePanel(std::string &out, const std::vector<PlotRun> &runs,
                const Axis &x, const std::vector<Tick> &xTicks, double top) {
  std::vector<std::vector<double>> scaleX(runs.size()), scaleY(runs.size());
  Range exponents;
  bool anySkipped = false;
  for (size_t r = 0; r < runs.size(); ++r) {
    scaleSeries(runs[r], scaleX[r], scaleY[r]);
    exponents.add(scaleY[r]);
    anySkipped = anySkipped || !runs[r].skippedSteps.empty();
  }
  bool anyScale = !exponents.empty();
  // Half a power of two beyond the extremes keeps the staircase off the
  // frame and clear of the skipped-step ticks.
  double expLo = anyScale ? exponents.lo - 0.5 : 0;
  double expHi = anyScale ? exponents.hi + 0.5 : 1;
  int stride = std::max(1, int(std::ceil((expHi - expLo) / 6)));
  std::vector<Tick> scaleTicks;
  if (anyScale)
    for (double e = std::ceil(expLo / stride) * stride; e <= expHi; e += stride)
      scaleTicks.push_back({e, powerOfTwo(int(e))});
  Axis scaleAxis{expLo, expHi, top + kScaleHeight, top};
  openPanel(out, "scale-panel",
            anySkipped ? "Loss scale (log&#x2082; axis); ticks along the "
                         "bottom: steps skipped on overflow"
                       : "Loss scale (log&#x2082; axis)",
            x, scaleAxis, xTicks, scaleTicks);
  for (size_t r = 0; r < runs.size(); ++r)
    drawLines(out, staircase(toLines(scaleX[r], scaleY[r], x.lo, x.hi)), x,
              scaleAxis, "loss-scale", {colourOf(r), 1.8, isDashed(r)});
  // Skipped steps as a rug: one tick per pixel column and run, each run on
  // its own row above the bottom edge.
  for (size_t r = 0; r < runs.size(); ++r) {
    std::string d;
    std::string lastX;
    std::vector<double> skipped = runs[r].skippedSteps;
    std::sort(skipped.begin(), skipped.end());
    double y0 = scaleAxis.from - 2 - 8 * double(r % 4);
    for (double s : skipped) {
      std::string px = coord(std::round(x(s)));
      if (px == lastX)
        continue;
      lastX = px;
      d += "M" + px + " " + coord(y0) + "v-6";
    }
    if (!d.empty())
      out += "<path class=\"skipped\" d=\"" + d + "\"" +
             strokeAttributes({colourOf(r), 1.2, false}) + "/>\n";
  }
  closePanel(out, scaleAxis, anyScale ? nullptr : "no loss scaling");
}

std::string render(const std::string &title, const std::vector<PlotRun> &runs) {
  // The shared step axis spans every step, evaluation and skipped step.
  Range xRange;
  size_t longest = 0;
  for (const PlotRun &run : runs) {
    xRange.add(run.step);
    xRange.add(run.evalStep);
    xRange.add(run.skippedSteps);
    longest = std::max(longest, run.step.size());
  }
  xRange = xRange.usable(1);
  Axis x{xRange.lo, xRange.hi, kLeft, kLeft + kPlotWidth};
  // Steps are whole numbers: no tick between two of them.
  std::vector<Tick> xTicks = niceTicks(x.lo, x.hi, 8, 1);

  // Smoothing over about 1% of the run (at least 5 steps), the same factor
  // for every run so their smoothed lines compare.
  double span = std::max(5.0, std::round(double(longest) / 100));
  double alpha = 2 / (span + 1);

  std::string titleText = escapeXml(title.empty() ? "training run" : title);
  double legendTop = 58;
  double keyY = legendTop + 18 * double(runs.size());
  double lossTop = keyY + 40;
  double accuracyTop = lossTop + kLossHeight + kPanelGap;
  double scaleTop = accuracyTop + kAccuracyHeight + kPanelGap;
  double bottom = scaleTop + kScaleHeight;
  double height = bottom + 46;

  std::string out;
  out.reserve(64 * 1024);
  out += "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"" +
         coord(kWidth) + "\" height=\"" + coord(height) + "\" viewBox=\"0 0 " +
         coord(kWidth) + " " + coord(height) +
         "\" font-family=\"sans-serif\">\n";
  out += "<title>" + titleText + "</title>\n";
  out += "<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n";
  text(out, kWidth / 2, 30, titleText,
       " font-size=\"18\" font-weight=\"bold\" text-anchor=\"middle\"");

  // Legend: a row per run, then what the line kinds in the loss panel mean.
  for (size_t r = 0; r < runs.size(); ++r) {
    double y = legendTop + 18 * double(r);
    out += "<g class=\"legend\">\n";
    out += "<path d=\"M" + coord(kLeft) + " " + coord(y - 4) + "H" +
           coord(kLeft + 36) + "\"" +
           strokeAttributes({colourOf(r), 2, isDashed(r)}) + "/>\n";
    Axis identity{0, 1, 0, 1};
    drawMarkers(out, {kLeft + 18}, {y - 4}, identity, identity, "legend-marker",
                r);
    text(out, kLeft + 44, y, escapeXml(runName(runs[r], r)),
         " font-size=\"13\"");
    out += "</g>\n";
  }
  char key[256];
  std::snprintf(key, sizeof key,
                "Loss: thin line = train loss per step; thick line = its "
                "exponential moving average (&#x3B1; = %.3g, about %.0f "
                "steps); markers = test loss at each evaluation.",
                alpha, span);
  text(out, kLeft, keyY, key, " font-size=\"11\" fill=\"#555\"");

  lossPanel(out, runs, x, xTicks, lossTop, alpha);
  accuracyPanel(out, runs, x, xTicks, accuracyTop);
  scalePanel(out, runs, x, xTicks, scaleTop);

  // The step axis is labelled once, under the bottom panel.
  for (const Tick &t : xTicks)
    text(out, x(t.value), bottom + 16, t.label,
         " font-size=\"11\" fill=\"#444\" text-anchor=\"middle\"");
  text(out, kLeft + kPlotWidth / 2, bottom + 36, "step",
       " font-size=\"12\" text-anchor=\"middle\"");
  out += "</svg>\n";
  return out;
}

} // namespace

rt::Status writeTrainingPlot(const std::string &path, const std::string &title,
                             const std::vector<PlotRun> &runs) {
  std::string context = "plot " + path;
  if (runs.empty())
    return Status::error(context + ": no runs to plot");
  for (size_t r = 0; r < runs.size(); ++r)
    AMPC_RETURN_IF_ERROR(checkRun(runs[r], r).withContext(context));
  std::string svg = render(title, runs);
  return rt::writeFileAtomically(path, svg.data(), svg.size());
}

} // namespace ampc::tools
