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
// A maximum is one of its inputs, so bf16 tensors are pooled as stored
// (Bf16Tile): the bits move, compared through their f32 values, with no
// widened copy of the tensors and no rounding pass, and the same results
// bit for bit. f16 (emulated on the CPU) is still widened by the callers.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_MAXPOOLTILES_H
#define AMPC_RUNTIME_CPU_MAXPOOLTILES_H

#include "runtime/Half.h"
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/MaxPoolPlane.h"
#include "runtime/cpu/Scratch.h"
#include "runtime/ops/WindowGeometry.h"

#include <cstdint>
#include <cstring>
#include <type_traits>

namespace ampc::rt::cpu {

inline bool windowsTilePlanes(const ops::PoolPlan &p) {
  return p.dh == 1 && p.dw == 1 && p.kh == p.sh && p.kw == p.sw && p.pt == 0 &&
         p.pl == 0 && p.pb == 0 && p.pr == 0 && p.oh * p.sh == p.h &&
         p.ow * p.sw == p.w;
}

// How the tile passes see an element: stored as Stored, compared as Value.
// An f32 or f64 is its own value, and a winner's gradient is 0 + g (as a
// scatter into a zeroed plane would add it: a -0 gradient lands as +0).
template <typename T> struct FloatTile {
  using Stored = T;
  using Value = T;
  static T value(T v) { return v; }
  // A maximum or a gradient as the result stores it.
  static T stored(T v) { return v; }
  static T gradient(T g) { return T(0) + g; }
  // Pair k of a row of 2x2 windows' input: x[2k], x[2k+1].
  static void loadPair(const T *x, int64_t k, T &a, T &b) {
    a = x[2 * k];
    b = x[2 * k + 1];
  }
  // Pair k of the gradient: g at its second element when `second`, else
  // at its first, 0 at the other.
  static void storePair(T *dx, int64_t k, bool second, T g);
};

// A bf16 kept as its bits and compared through its f32 value. Both results
// are what widening to f32, the FloatTile<float> passes and one rounding
// (floatToBFloatBits) give: the maximum itself (exact: it is a widened
// bf16), a NaN quieted with its payload kept, and for the gradient -0 as
// +0. A pair of neighbours is one 32-bit word (x86 is little-endian: the
// first in its low half), so the 2x2 passes run on 32-bit lanes with no
// shuffles.
struct Bf16Tile {
  static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
                "loadPair and storePair read a pair as one word");
  using Stored = uint16_t;
  using Value = float;
  static float value(uint16_t b) { return bfloatBitsToFloat(b); }
  // Without a branch, so that the loops around it vectorise.
  static uint16_t stored(float v) {
    uint32_t b = bitsOf(v) >> 16;
    return static_cast<uint16_t>(b | uint32_t((b & 0x7fffu) > 0x7f80u) << 6);
  }
  static float gradient(uint16_t g) { return 0.0f + bfloatBitsToFloat(g); }
  static void loadPair(const uint16_t *x, int64_t k, float &a, float &b) {
    uint32_t w;
    std::memcpy(&w, x + 2 * k, sizeof w);
    a = floatOf(w << 16);
    b = floatOf(w & 0xffff0000u);
  }
  static void storePair(uint16_t *dx, int64_t k, bool second, float g);
};

namespace detail {
// Whether `y`, after `x` in window order, takes the window from it: it is
// larger, or a NaN.
template <typename T> inline bool takes(T x, T y) { return (y > x) | (y != y); }

// Any window shape: over the windows [0, ow) of one row of windows, `x`
// its first input row (the next rows are w apart), fn(ox, maximum as
// compared, offset of the winner from the window's first element).
template <typename E, typename Fn>
inline void forEachTile(const ops::PoolPlan &p, const typename E::Stored *x,
                        Fn fn) {
  using V = typename E::Value;
  for (int64_t ox = 0; ox < p.ow; ++ox) {
    const typename E::Stored *t = x + ox * p.kw;
    V best = E::value(t[0]);
    int32_t where = 0;
    for (int64_t i = 0; i < p.kh; ++i)
      for (int64_t j = 0; j < p.kw; ++j) {
        V v = E::value(t[i * p.w + j]);
        bool take = takes(best, v);
        best = select(take, v, best);
        where = select(take, static_cast<int32_t>(i * p.w + j), where);
      }
    fn(ox, best, where);
  }
}

// 2x2 windows in two passes that vectorise over long runs: first the
// winner of each horizontal pair of the block's input rows (as w == 2 *
// ow), then of each window's upper and lower pair. The winner rule is
// associative when the earlier operand stays on the left, so this picks
// ops::maxIndex's element.
template <typename E, bool Side>
void pairWinners(const typename E::Stored *x, int64_t pairs,
                 typename E::Value *value, int32_t *second) {
  for (int64_t k = 0; k < pairs; ++k) {
    typename E::Value a, b;
    E::loadPair(x, k, a, b);
    bool take = takes(a, b);
    value[k] = select(take, b, a);
    if constexpr (Side)
      second[k] = take;
  }
}
} // namespace detail

template <typename T>
inline void FloatTile<T>::storePair(T *dx, int64_t k, bool second, T g) {
  dx[2 * k] = detail::select(second, T(0), g);
  dx[2 * k + 1] = detail::select(second, g, T(0));
}

inline void Bf16Tile::storePair(uint16_t *dx, int64_t k, bool second, float g) {
  uint32_t b = stored(g);
  uint32_t w = detail::select(second, b << 16, b);
  std::memcpy(dx + 2 * k, &w, sizeof w);
}

// A run [off, off + n) of a tensor as the tile passes read and write it:
// a bf16 one as stored; others in their compute type, through
// kh::computeRun / computeRunOut / storeRun (in place when stored so, else
// converted through `storage`).
template <typename E>
const typename E::Stored *tileRunIn(const TensorView &t, int64_t off, int64_t n,
                                    Scratch<typename E::Stored> &storage) {
  if constexpr (std::is_same_v<E, Bf16Tile>)
    return static_cast<const uint16_t *>(t.data) + off;
  else
    return kh::computeRun(t, off, n, storage);
}
template <typename E>
typename E::Stored *tileRunOut(const TensorView &t, int64_t off, int64_t n,
                               Scratch<typename E::Stored> &storage) {
  if constexpr (std::is_same_v<E, Bf16Tile>)
    return static_cast<uint16_t *>(t.data) + off;
  else
    return kh::computeRunOut(t, off, n, storage);
}
template <typename E>
void tileRunStore(const typename E::Stored *buf, const TensorView &t,
                  int64_t off, int64_t n) {
  if constexpr (!std::is_same_v<E, Bf16Tile>)
    kh::storeRun(buf, t, off, n);
}

// Scratch of the 2x2 passes, per task.
template <typename E> struct TileScratch {
  Scratch<typename E::Value> value, grad, gradIn;
  Scratch<int32_t> second;
};

// `rows` rows of windows: `x` holds their rows * KH input rows, `y` gets
// rows * ow maxima. Requires windowsTilePlanes(p).
template <typename E, typename T = typename E::Stored>
void maxTileRows(const ops::PoolPlan &p, const T *x, int64_t rows, T *y,
                 TileScratch<E> &s) {
  using V = typename E::Value;
  if (p.kh != 2 || p.kw != 2) {
    for (int64_t r = 0; r < rows; ++r)
      detail::forEachTile<E>(p, x + r * p.sh * p.w,
                             [&](int64_t ox, V best, int32_t) {
                               y[r * p.ow + ox] = E::stored(best);
                             });
    return;
  }
  V *h = s.value.resize(static_cast<size_t>(rows * p.w));
  detail::pairWinners<E, false>(x, rows * p.w, h, nullptr);
  // The maxima as compared, then stored in one long loop: rows of windows
  // are short (LeNet's 14), and a loop that also narrows spends its time
  // in their remainders.
  V *m;
  if constexpr (std::is_same_v<V, T>)
    m = y;
  else
    m = s.grad.resize(static_cast<size_t>(rows * p.ow));
  for (int64_t r = 0; r < rows; ++r) {
    const V *up = h + 2 * r * p.ow, *down = up + p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox)
      m[r * p.ow + ox] =
          detail::select(detail::takes(up[ox], down[ox]), down[ox], up[ox]);
  }
  if constexpr (!std::is_same_v<V, T>)
    for (int64_t i = 0; i < rows * p.ow; ++i)
      y[i] = E::stored(m[i]);
}

// The gradient of maxTileRows: `dx` (as many elements as `x`) gets
// E::gradient(g), stored, at each window's winner and 0 everywhere else.
template <typename E, typename T = typename E::Stored>
void maxTileGradRows(const ops::PoolPlan &p, const T *x, const T *g,
                     int64_t rows, T *dx, TileScratch<E> &s) {
  using V = typename E::Value;
  if (p.kh != 2 || p.kw != 2) {
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t base = r * p.sh * p.w;
      detail::forEachTile<E>(p, x + base, [&](int64_t ox, V, int32_t where) {
        T *d = dx + base + ox * p.kw;
        for (int64_t i = 0; i < p.kh; ++i)
          for (int64_t j = 0; j < p.kw; ++j)
            d[i * p.w + j] = T(0);
        d[where] = E::stored(E::gradient(g[r * p.ow + ox]));
      });
    }
    return;
  }
  const int64_t pairs = rows * p.w;
  V *h = s.value.resize(static_cast<size_t>(pairs)),
    *pg = s.grad.resize(static_cast<size_t>(pairs));
  int32_t *second = s.second.resize(static_cast<size_t>(pairs));
  detail::pairWinners<E, true>(x, pairs, h, second);
  // The windows' gradients as computed; when stored narrower, widened
  // first in one long loop (as maxTileRows stores its maxima).
  V *wide = nullptr;
  if constexpr (!std::is_same_v<V, T>) {
    wide = s.gradIn.resize(static_cast<size_t>(rows * p.ow));
    for (int64_t i = 0; i < rows * p.ow; ++i)
      wide[i] = E::gradient(g[i]);
  }
  auto gradientAt = [&](int64_t i) {
    if constexpr (std::is_same_v<V, T>)
      return E::gradient(g[i]);
    else
      return wide[i];
  };
  // Each pair's share: the window's gradient where the pair holds the
  // winner, else 0.
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t up = 2 * r * p.ow, down = up + p.ow;
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      bool low = detail::takes(h[up + ox], h[down + ox]);
      V gv = gradientAt(r * p.ow + ox);
      pg[up + ox] = detail::select(low, V(0), gv);
      pg[down + ox] = detail::select(low, gv, V(0));
    }
  }
  for (int64_t k = 0; k < pairs; ++k)
    E::storePair(dx, k, second[k] != 0, pg[k]);
}

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_MAXPOOLTILES_H
