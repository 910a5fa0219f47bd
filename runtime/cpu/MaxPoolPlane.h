//===- MaxPoolPlane.h - the winner of every max-pooling window of a plane -===//
//
// Forward max pooling needs each window's maximum and its gradient needs
// where it is. Both come from here, so the two agree on ops::maxIndex's
// rule (the first maximum in row-major window order, the last NaN, -1 for a
// window of padding only) by construction.
//
// Windows that lie wholly inside the plane's columns are swept a tap at a
// time across a whole output row, with selects instead of branches: which
// element wins is data-dependent, and a mispredicted branch per tap cost
// more than the rest of the kernel (half of LeNet-5's training step). The
// few windows that touch the padding go through ops::maxIndex.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_MAXPOOLPLANE_H
#define AMPC_RUNTIME_CPU_MAXPOOLPLANE_H

#include "runtime/ops/WindowGeometry.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

namespace ampc::rt::cpu {

// maxPoolPlane indexes a plane with int32 offsets (half the width of the
// selects it vectorises); a larger plane is refused, not wrapped.
inline Status checkMaxPoolPlane(const ops::PoolPlan &p) {
  if (p.h * p.w > std::numeric_limits<int32_t>::max())
    return Status::error("a max-pooling plane of " + std::to_string(p.h) + "x" +
                         std::to_string(p.w) +
                         " elements exceeds the CPU kernel's 2^31-1");
  return Status::ok();
}

namespace detail {
// `take ? a : b` through a bit mask: the compiler turns a plain select on
// float compares back into a branch in the loops' scalar remainders, and
// which tap wins is data-dependent.
template <typename T> inline T select(bool take, T a, T b) {
  using Bits = std::conditional_t<sizeof(T) == 8, uint64_t, uint32_t>;
  static_assert(sizeof(T) == sizeof(Bits), "a 4- or 8-byte value");
  Bits mask = Bits(0) - Bits(take), x, y;
  std::memcpy(&x, &a, sizeof x);
  std::memcpy(&y, &b, sizeof y);
  Bits r = (x & mask) | (y & ~mask);
  T out;
  std::memcpy(&out, &r, sizeof out);
  return out;
}

// One tap (i, j) over outputs [lo, hi) of a row: `xrow` is the tap's input
// row and `first` the column of output lo's tap. Stride is a template
// argument where it is 1 or 2 so that the loop vectorises.
template <int64_t Stride, typename T>
void sweepTap(const T *xrow, int32_t rowOffset, int64_t first, int64_t sw,
              int64_t lo, int64_t hi, T *m, int32_t *at) {
  const int64_t s = Stride ? Stride : sw;
  for (int64_t ox = lo; ox < hi; ++ox) {
    int64_t col = first + (ox - lo) * s;
    T v = xrow[col];
    bool take = (at[ox] < 0) | (v > m[ox]) | (v != v);
    m[ox] = select(take, v, m[ox]);
    at[ox] = select(take, rowOffset + static_cast<int32_t>(col), at[ox]);
  }
}

// Better still for the common windows (2x2 of stride 2, LeNet's and most
// CNNs'; 3x3 of stride 1 or 2, ResNet's), undilated with every row inside:
// all taps of a window in one pass, in maxIndex's order. `x` points at the
// window row 0 of output lo's first tap, `offset` is its offset in the
// plane.
template <int64_t KH, int64_t KW, int64_t S, typename T>
void sweepWindow(const T *x, int64_t w, int32_t offset, int64_t lo, int64_t hi,
                 T *m, int32_t *at) {
  for (int64_t ox = lo; ox < hi; ++ox) {
    const int64_t col = (ox - lo) * S;
    T best = x[col];
    int32_t where = offset + static_cast<int32_t>(col);
    // Tap (0, 0) again changes nothing (a NaN takes its own place), and
    // loops of a fixed count unroll into the vectorised body.
#pragma GCC unroll 4
    for (int64_t i = 0; i < KH; ++i)
#pragma GCC unroll 4
      for (int64_t j = 0; j < KW; ++j) {
        const int64_t tap = i * w + col + j;
        T v = x[tap];
        bool take = (v > best) | (v != v);
        best = select(take, v, best);
        where = select(take, offset + static_cast<int32_t>(tap), where);
      }
    m[ox] = best;
    at[ox] = where;
  }
}

// sweepWindow for plan `p` when it has a specialisation; false otherwise.
template <typename T>
bool sweepWholeWindows(const ops::PoolPlan &p, const T *x, int64_t by,
                       int64_t lo, int64_t hi, T *m, int32_t *at) {
  if (p.dh != 1 || p.dw != 1)
    return false;
  if (lo >= hi)
    return true; // no inner window (and `first` could point before x)
  const T *first = x + by * p.w + lo * p.sw - p.pl;
  auto offset = static_cast<int32_t>(by * p.w + lo * p.sw - p.pl);
  if (p.kh == 2 && p.kw == 2 && p.sw == 2)
    sweepWindow<2, 2, 2>(first, p.w, offset, lo, hi, m, at);
  else if (p.kh == 3 && p.kw == 3 && p.sw == 2)
    sweepWindow<3, 3, 2>(first, p.w, offset, lo, hi, m, at);
  else if (p.kh == 3 && p.kw == 3 && p.sw == 1)
    sweepWindow<3, 3, 1>(first, p.w, offset, lo, hi, m, at);
  else
    return false;
  return true;
}
} // namespace detail

// For every window of the plane `x`: `y` gets its maximum (-inf for a
// window of padding only) and `at` the offset in `x` that ops::maxIndex
// picks (-1 for padding only). Requires checkMaxPoolPlane(p).
template <typename T>
void maxPoolPlane(const ops::PoolPlan &p, const T *x, T *y, int32_t *at) {
  // Outputs [lo, hi) of a row have every column tap inside [0, w).
  int64_t lo = (p.pl + p.sw - 1) / p.sw;
  int64_t lastTap = (p.kw - 1) * p.dw;
  int64_t hi = p.w - 1 - lastTap + p.pl < 0
                   ? 0
                   : std::min(p.ow, (p.w - 1 - lastTap + p.pl) / p.sw + 1);
  lo = std::min(lo, p.ow);
  hi = std::max(hi, lo);
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    T *m = y + oy * p.ow;
    int32_t *a = at + oy * p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      m[ox] = -std::numeric_limits<T>::infinity();
      a[ox] = -1;
    }
    int64_t by = oy * p.sh - p.pt, i0, i1;
    ops::tapRange(by, p.kh, p.dh, p.h, i0, i1);
    if (!(i0 == 0 && i1 == p.kh &&
          detail::sweepWholeWindows(p, x, by, lo, hi, m, a))) {
      for (int64_t i = i0; i < i1; ++i) {
        int64_t iy = by + i * p.dh;
        const T *xrow = x + iy * p.w;
        auto rowOffset = static_cast<int32_t>(iy * p.w);
        for (int64_t j = 0; j < p.kw; ++j) {
          int64_t first = lo * p.sw - p.pl + j * p.dw;
          if (p.sw == 1)
            detail::sweepTap<1>(xrow, rowOffset, first, 1, lo, hi, m, a);
          else if (p.sw == 2)
            detail::sweepTap<2>(xrow, rowOffset, first, 2, lo, hi, m, a);
          else
            detail::sweepTap<0>(xrow, rowOffset, first, p.sw, lo, hi, m, a);
        }
      }
    }
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      if (ox == lo)
        ox = hi;
      if (ox >= p.ow)
        break;
      int64_t best = ops::maxIndex(p, x, oy, ox);
      a[ox] = static_cast<int32_t>(best);
      m[ox] = best < 0 ? -std::numeric_limits<T>::infinity() : x[best];
    }
  }
}

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_MAXPOOLPLANE_H
