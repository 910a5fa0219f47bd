//===- NonFinite.cpp - inf and NaN in the data a run is fed ---------------===//

#include "runtime/tooling/NonFinite.h"

#include "runtime/TypedIO.h"
#include "runtime/tooling/Format.h"

#include <algorithm>
#include <cmath>

namespace ampc::tools {
namespace {

std::string what(double v) {
  if (std::isnan(v))
    return "NaN";
  return v > 0 ? "+inf" : "-inf";
}

// The largest finite value of a float dtype, as a message gives it.
const char *largestFinite(rt::DType d) {
  switch (d) {
  case rt::DType::F16:
    return "65504";
  case rt::DType::BF16:
    return "3.38953139e38";
  default:
    return "3.40282347e38";
  }
}

// "[1, 2]": the multi-index of flat index `i` in `dims`.
std::string indexIn(const rt::Shape &dims, int64_t i) {
  rt::Shape index(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    index[d] = dims[d] ? i % dims[d] : 0;
    i = dims[d] ? i / dims[d] : 0;
  }
  return rt::str(index);
}

} // namespace

rt::Status checkFinite(const rt::TensorView &t, bool samples,
                       const rt::TensorView *before) {
  if (!rt::isFloat(t.dtype))
    return rt::Status::ok();
  const int64_t n = t.numElements();
  const int64_t sampleCount = samples && !t.shape.empty() ? t.shape[0] : 1;
  const int64_t perSample = sampleCount ? n / sampleCount : 0;
  // Every float dtype widens to f64 exactly, so inf and NaN survive.
  constexpr int64_t kChunk = 4096;
  double buf[kChunk];
  int64_t first = -1, count = 0, badSamples = 0, lastBadSample = -1;
  double firstValue = 0;
  for (int64_t i = 0; i < n; i += kChunk) {
    int64_t m = std::min(kChunk, n - i);
    rt::loadF64(t, i, m, buf);
    for (int64_t j = 0; j < m; ++j) {
      if (std::isfinite(buf[j]))
        continue;
      if (first < 0) {
        first = i + j;
        firstValue = buf[j];
      }
      ++count;
      int64_t sample = perSample ? (i + j) / perSample : 0;
      if (sample != lastBadSample) {
        ++badSamples;
        lastBadSample = sample;
      }
    }
  }
  if (first < 0)
    return rt::Status::ok();

  std::string where;
  if (samples && !t.shape.empty()) {
    where = "sample " + std::to_string(first / perSample);
    rt::Shape inSample(t.shape.begin() + 1, t.shape.end());
    if (!inSample.empty())
      where += ", element " + indexIn(inSample, first % perSample);
  } else {
    where = "element " + indexIn(t.shape, first);
  }
  std::string is = "is " + what(firstValue);
  if (before && before->numElements() == n) {
    double original = rt::elementAsDouble(*before, first);
    if (std::isfinite(original))
      is = "is " + nineDigits(original) + ", which is beyond the range of " +
           std::string(rt::name(t.dtype)) + " (largest finite value " +
           largestFinite(t.dtype) + ") and rounds to " + what(firstValue);
  }
  std::string tally =
      samples ? std::to_string(count) + (count == 1 ? " value" : " values") +
                    " in " + std::to_string(badSamples) + " of the " +
                    std::to_string(sampleCount) + " samples " +
                    (count == 1 ? "is" : "are")
              : std::to_string(count) + " of the " + std::to_string(n) +
                    " values " + (count == 1 ? "is" : "are");
  return rt::Status::error(where + " " + is + " (" + tally + " NaN or inf)");
}

} // namespace ampc::tools
