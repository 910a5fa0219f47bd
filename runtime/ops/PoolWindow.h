//===- PoolWindow.h - the window walks both pooling backends compile ------===//
//
// Which input elements a pooling window covers, which one max pooling takes
// and what average pooling divides by: one definition, compiled by the CPU
// kernels (over ops::PoolPlan) and by the CUDA kernels (over PoolArgs, the
// same fields), so the two backends pick the same element and divide by the
// same count.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_POOLWINDOW_H
#define AMPC_RUNTIME_OPS_POOLWINDOW_H

#include "runtime/ops/HostDevice.h"

#include <stdint.h>

namespace ampc::rt::ops {

// The taps t in [lo, hi) of a window that starts at `base` and has `k` taps
// `d` apart which land inside [0, size); lo >= hi when none does.
AMPC_HOST_DEVICE void tapRange(int64_t base, int64_t k, int64_t d, int64_t size,
                               int64_t &lo, int64_t &hi) {
  lo = base >= 0 ? 0 : (-base + d - 1) / d;
  const int64_t last = (size - 1 - base) / d + 1;
  hi = base >= size ? 0 : (k < last ? k : last);
}

// Offset in the plane of the element max pooling takes for window
// (oy, ox), reading element i as load(i): the first maximum in row-major
// window order, or the last NaN (NaN propagates). Padding never wins; -1
// for a window of padding only (possible only with dilation), whose
// maximum is -inf. `Plan` has PoolPlan's fields.
template <typename Plan, typename Load>
AMPC_HOST_DEVICE int64_t maxIndexOf(const Plan &p, Load load, int64_t oy,
                                    int64_t ox) {
  int64_t by = oy * p.sh - p.pt, bx = ox * p.sw - p.pl, i0, i1, j0, j1;
  tapRange(by, p.kh, p.dh, p.h, i0, i1);
  tapRange(bx, p.kw, p.dw, p.w, j0, j1);
  if (i0 >= i1 || j0 >= j1)
    return -1;
  int64_t best = (by + i0 * p.dh) * p.w + bx + j0 * p.dw;
  auto m = load(best);
  // Once m is NaN only another NaN passes, so NaN sticks.
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t row = (by + i * p.dh) * p.w + bx;
    for (int64_t j = j0; j < j1; ++j) {
      int64_t at = row + j * p.dw;
      auto v = load(at);
      bool take = (v > m) | (v != v);
      m = take ? v : m;
      best = take ? at : best;
    }
  }
  return best;
}

// The input rows [y0, y1) and columns [x0, x1) an average-pooling window
// covers, and its divisor: with count_include_pad the padding counts, but a
// ceil-mode window running past the end padding counts only up to it.
struct AvgWindow {
  int64_t y0, y1, x0, x1, count;
};
template <typename Plan>
AMPC_HOST_DEVICE AvgWindow avgWindow(const Plan &p, int64_t oy, int64_t ox) {
  int64_t wy0 = oy * p.sh - p.pt, wy1 = wy0 + p.kh;
  int64_t wx0 = ox * p.sw - p.pl, wx1 = wx0 + p.kw;
  AvgWindow a;
  a.y0 = wy0 > 0 ? wy0 : 0;
  a.y1 = wy1 < p.h ? wy1 : p.h;
  a.x0 = wx0 > 0 ? wx0 : 0;
  a.x1 = wx1 < p.w ? wx1 : p.w;
  if (p.countIncludePad) {
    int64_t ey = p.h + p.pb, ex = p.w + p.pr;
    a.count = ((wy1 < ey ? wy1 : ey) - wy0) * ((wx1 < ex ? wx1 : ex) - wx0);
  } else {
    a.count = (a.y1 - a.y0) * (a.x1 - a.x0);
  }
  return a;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_POOLWINDOW_H
