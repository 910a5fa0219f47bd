//===- MaxPoolTiles.h - max pooling whose windows tile the planes ---------===//
//
// When the windows are as large as the stride, undilated and unpadded, and
// cover every row and column (LeNet's and VGG's 2x2 of stride 2 on even
// planes), every input element lies in exactly one window, and the
// (image, channel) planes of an NCHW tensor are one tall plane: N*C*OH rows
// of windows, each KH input rows high. Forward pooling then needs only each
// window's maximum (no winner), and the gradient finds each window's winner
// and writes the whole window at once (the winner's gradient, zeros
// elsewhere), with no zeroed plane to scatter into and no per-plane
// set-up; on LeNet-5's small planes that set-up cost more than the maxima.
//
// The winner is ops::maxIndex's (the first maximum in row-major window
// order, the last NaN), found with selects as MaxPoolPlane.h does: which
// tap wins is data-dependent, and a branch per tap mispredicts.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_MAXPOOLTILES_H
#define AMPC_RUNTIME_CPU_MAXPOOLTILES_H

#include "runtime/cpu/MaxPoolPlane.h"
#include "runtime/cpu/Scratch.h"
#include "runtime/ops/WindowGeometry.h"

#include <cstdint>

namespace ampc::rt::cpu {

inline bool windowsTilePlanes(const ops::PoolPlan &p) {
  return p.dh == 1 && p.dw == 1 && p.kh == p.sh && p.kw == p.sw && p.pt == 0 &&
         p.pl == 0 && p.pb == 0 && p.pr == 0 && p.oh * p.sh == p.h &&
         p.ow * p.sw == p.w;
}

namespace detail {
// Whether `y`, after `x` in window order, takes the window from it: it is
// larger, or a NaN.
template <typename T> inline bool takes(T x, T y) { return (y > x) | (y != y); }

// Any window shape: over the windows [0, ow) of one row of windows, `x`
// its first input row (the next rows are w apart), fn(ox, value, offset of
// the winner from the window's first element).
template <typename T, typename Fn>
inline void forEachTile(const ops::PoolPlan &p, const T *x, Fn fn) {
  for (int64_t ox = 0; ox < p.ow; ++ox) {
    const T *t = x + ox * p.kw;
    T best = t[0];
    int32_t where = 0;
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j) {
        T v = t[i * p.w + j];
        bool take = takes(best, v);
        best = select(take, v, best);
        where = select(take, static_cast<int32_t>(i * p.w + j), where);
      }
    fn(ox, best, where);
  }
}

// 2x2 windows in two passes that vectorise over long runs: first the
// winner of each horizontal pair of the block's input rows (pair k is
// x[2k], x[2k+1], as w == 2 * ow), then of each window's upper and lower
// pair. The winner rule is associative when the earlier operand stays on
// the left, so this picks ops::maxIndex's element.
template <bool Side, typename T>
void pairWinners(const T *x, int64_t pairs, T *value, int32_t *second) {
  for (int64_t k = 0; k < pairs; ++k) {
    T a = x[2 * k], b = x[2 * k + 1];
    bool take = takes(a, b);
    value[k] = select(take, b, a);
    if constexpr (Side)
      second[k] = take;
  }
}
} // namespace detail

// Scratch of the 2x2 passes, per task.
template <typename T> struct TileScratch {
  Scratch<T> value, grad;
  Scratch<int32_t> second;
};

// `rows` rows of windows: `x` holds their rows * KH input rows, `y` gets
// rows * ow maxima. Requires windowsTilePlanes(p).
template <typename T>
void maxTileRows(const ops::PoolPlan &p, const T *x, int64_t rows, T *y,
                 TileScratch<T> &s) {
  if (p.kh != 2 || p.kw != 2) {
    for (int64_t r = 0; r < rows; ++r)
      detail::forEachTile(
          p, x + r * p.sh * p.w,
          [&](int64_t ox, T best, int32_t) { y[r * p.ow + ox] = best; });
    return;
  }
  T *h = s.value.resize(static_cast<size_t>(rows * p.w));
  detail::pairWinners<false>(x, rows * p.w, h, nullptr);
  for (int64_t r = 0; r < rows; ++r) {
    const T *up = h + 2 * r * p.ow, *down = up + p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox)
      y[r * p.ow + ox] =
          detail::select(detail::takes(up[ox], down[ox]), down[ox], up[ox]);
  }
}

// The gradient of maxTileRows: `dx` (as many elements as `x`) gets 0 + g
// at each window's winner (as a scatter into a zeroed plane would: a -0
// gradient lands as +0) and 0 everywhere else.
template <typename T>
void maxTileGradRows(const ops::PoolPlan &p, const T *x, const T *g,
                     int64_t rows, T *dx, TileScratch<T> &s) {
  if (p.kh != 2 || p.kw != 2) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * p.sh * p.w;
      detail::forEachTile(p, x + base, [&](int64_t ox, T, int32_t where) {
        T *d = dx + base + ox * p.kw;
        for (int64_t i = 0; i < p.kh; ++i)
          for (int64_t j = 0; j < p.kw; ++j)
            d[i * p.w + j] = T(0);
        d[where] = T(0) + g[r * p.ow + ox];
      });
    }
    return;
  }
  const int64_t pairs = rows * p.w;
  T *h = s.value.resize(static_cast<size_t>(pairs)),
    *pg = s.grad.resize(static_cast<size_t>(pairs));
  int32_t *second = s.second.resize(static_cast<size_t>(pairs));
  detail::pairWinners<true>(x, pairs, h, second);
  // Each pair's share: the window's gradient where the pair holds the
  // winner, else 0.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t up = 2 * r * p.ow, down = up + p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      bool low = detail::takes(h[up + ox], h[down + ox]);
      T gv = T(0) + g[r * p.ow + ox];
      pg[up + ox] = detail::select(low, T(0), gv);
      pg[down + ox] = detail::select(low, gv, T(0));
    }
  }
  for (int64_t k = 0; k < pairs; ++k) {
    bool b = second[k] != 0;
    dx[2 * k] = detail::select(b, T(0), pg[k]);
    dx[2 * k + 1] = detail::select(b, pg[k], T(0));
  }
}

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_MAXPOOLTILES_H
