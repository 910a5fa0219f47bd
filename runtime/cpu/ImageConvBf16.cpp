//===- ImageConvBf16.cpp - bf16 image-input convolutions on AVX512_BF16 ---===//
//
// Each image is first copied into zero-padded bf16 planes whose rows leave
// room for a whole 32-word load at every tap, so the loops have no bounds
// to test. The functions that use AVX-512 are compiled for it alone
// (target attributes; the runtime is built for x86-64-v3) and called only
// where imageConvBf16Applies said the CPU has it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/ImageConvBf16.h"

#include "runtime/Half.h"
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/DnnlKernels.h"
#include "runtime/cpu/Scratch.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>
#include <type_traits>
#include <vector>

#define AMPC_AVX512_BF16                                                       \
  __attribute__((target("avx512f,avx512bw,avx512vl,avx512bf16")))

namespace ampc::rt::cpu {
namespace {

using ops::ConvPlan;

constexpr int64_t kPixels = 16; // f32 lanes of one register
constexpr int64_t kWords = 32;  // bf16 words of one register
constexpr int64_t kMaxColumns = 8;

// fn(std::integral_constant<int, N>()) for N = n, n in [First, Last] (the
// register-blocking loops below take their block sizes as template
// arguments, so that their accumulators stay in registers).
template <int First, int Last, typename Fn>
void withConstant(int64_t n, Fn &&fn) {
  if constexpr (First < Last)
    if (n != First)
      return withConstant<First + 1, Last>(n, fn);
  fn(std::integral_constant<int, First>());
}

// Padded planes: rows oh + kh - 1; columns padded column q holds input
// column q - pl, with room for a 32-word load at any output pixel and tap.
struct PaddedShape {
  int64_t rows, cols;
  explicit PaddedShape(const ConvPlan &p)
      : rows(p.oh + p.kh - 1),
        cols((p.ow + kWords - 1) / kWords * kWords + p.kw + kWords) {}
  int64_t plane() const { return rows * cols; }
};

void padImage(const ConvPlan &p, const PaddedShape &s, const uint16_t *x,
              uint16_t *out) {
  std::fill(out, out + p.c * s.plane(), uint16_t(0));
  const int64_t width = std::min(p.w, s.cols - p.pl);
  for (int64_t ci = 0; ci < p.c; ++ci)
    for (int64_t iy = 0; iy < p.h; ++iy) {
      int64_t r = iy + p.pt;
      if (r >= s.rows || width <= 0)
        continue;
      std::memcpy(out + ci * s.plane() + r * s.cols + p.pl,
                  x + (ci * p.h + iy) * p.w,
                  static_cast<size_t>(width) * sizeof(uint16_t));
    }
}

// Word 2l of a pair vector is input word l, word 2l + 1 input word l + 1:
// pixel l's two neighbouring taps.
alignas(64) constexpr uint16_t kPairIndex[kWords] = {
    0, 1, 1, 2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,
    8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16};

// The kernel as pairs of neighbouring taps of a kernel row, pair q of
// every output channel reading the padded image from offset[q] (plus the
// output pixel's): its weights as one 32-bit word per channel, and which
// words of the pair vector to keep (the tap past an odd row's end is made 0,
// not multiplied by a 0 weight, which would turn an infinity into NaN).
struct TapPairs {
  int64_t count = 0;
  std::vector<int64_t> offset;
  std::vector<__mmask32> keep;
  std::vector<uint32_t> weights; // [o][q]
  TapPairs(const ConvPlan &p, const PaddedShape &s, const uint16_t *w) {
    const int64_t half = (p.kw + 1) / 2;
    count = p.c * p.kh * half;
    for (int64_t ci = 0; ci < p.c; ++ci)
      for (int64_t i = 0; i < p.kh; ++i)
        for (int64_t t = 0; t < half; ++t) {
          offset.push_back(ci * s.plane() + i * s.cols + 2 * t);
          keep.push_back(2 * t + 1 < p.kw ? ~__mmask32(0) : 0x55555555u);
        }
    weights.resize(static_cast<size_t>(p.o * count));
    for (int64_t o = 0; o < p.o; ++o)
      for (int64_t ci = 0; ci < p.c; ++ci)
        for (int64_t i = 0; i < p.kh; ++i) {
          const uint16_t *row = w + ((o * p.c + ci) * p.kh + i) * p.kw;
          for (int64_t t = 0; t < half; ++t) {
            uint32_t hi = 2 * t + 1 < p.kw ? row[2 * t + 1] : 0;
            weights[o * count + (ci * p.kh + i) * half + t] =
                row[2 * t] | (hi << 16);
          }
        }
  }
};

// Output channels [o, o + OB), NB blocks of 16 pixels from ox0 of output
// row oy of one image (`row` its padded planes at row oy, column ox0; `y`
// its output). The loops over OB and NB are unrolled so that the
// accumulators stay in registers.
template <int OB, int NB>
AMPC_AVX512_BF16 void forwardBlock(const ConvPlan &p, const TapPairs &t,
                                   const uint16_t *row, const float *bias,
                                   int64_t o, int64_t oy, int64_t ox0,
                                   uint16_t *y) {
  const __m512i index = _mm512_load_si512(kPairIndex);
  __m512 acc[OB][NB];
#pragma GCC unroll 8
  for (int ob = 0; ob < OB; ++ob)
#pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb)
      acc[ob][nb] = _mm512_set1_ps(bias ? bias[o + ob] : 0.0f);
  const uint32_t *w = t.weights.data() + o * t.count;
  for (int64_t q = 0; q < t.count; ++q) {
    __m512i pv[NB];
#pragma GCC unroll 4
    for (int nb = 0; nb < NB; ++nb)
      pv[nb] = _mm512_maskz_permutexvar_epi16(
          t.keep[q], index,
          _mm512_loadu_si512(row + t.offset[q] + nb * kPixels));
#pragma GCC unroll 8
    for (int ob = 0; ob < OB; ++ob) {
      __m512i wv = _mm512_set1_epi32(static_cast<int>(w[ob * t.count + q]));
#pragma GCC unroll 4
      for (int nb = 0; nb < NB; ++nb)
        acc[ob][nb] =
            _mm512_dpbf16_ps(acc[ob][nb], (__m512bh)pv[nb], (__m512bh)wv);
    }
  }
  // Rounded once, to nearest even (vcvtneps2bf16, as Half.cpp's bulk
  // rounding); pixels past the row's end are not stored.
  const __m512i exponent = _mm512_set1_epi32(0x7F800000);
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
#pragma GCC unroll 4
  for (int nb = 0; nb < NB; ++nb) {
    const int64_t x = ox0 + nb * kPixels, n = std::min(kPixels, p.ow - x);
    const __mmask16 inRow =
        n >= kPixels ? __mmask16(0xFFFF) : __mmask16((1u << n) - 1);
#pragma GCC unroll 8
    for (int ob = 0; ob < OB; ++ob) {
      uint16_t *dst = y + ((o + ob) * p.oh + oy) * p.ow + x;
      __m512i bits = _mm512_castps_si512(acc[ob][nb]);
      // The instruction reads a subnormal as 0; floatToBFloatBits rounds
      // it.
      if (_mm512_testn_epi32_mask(bits, exponent) &
          _mm512_test_epi32_mask(bits, magnitude) & inRow) {
        alignas(64) float sums[kPixels];
        _mm512_store_ps(sums, acc[ob][nb]);
        for (int64_t l = 0; l < n; ++l)
          dst[l] = floatToBFloatBits(sums[l]);
        continue;
      }
      __m256bh r = _mm512_cvtneps_pbh(acc[ob][nb]);
      _mm256_mask_storeu_epi16(dst, inRow, (__m256i)r);
    }
  }
}

// Every row of output channels [o, o + OB) of one image, two blocks of 16
// pixels at a time.
template <int OB>
void forwardChannels(const ConvPlan &p, const PaddedShape &s, const TapPairs &t,
                     const uint16_t *xp, const float *bias, int64_t o,
                     uint16_t *y) {
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    const uint16_t *row = xp + oy * s.cols;
    int64_t ox0 = 0;
    for (; ox0 + kPixels < p.ow; ox0 += 2 * kPixels)
      forwardBlock<OB, 2>(p, t, row + ox0, bias, o, oy, ox0, y);
    if (ox0 < p.ow)
      forwardBlock<OB, 1>(p, t, row + ox0, bias, o, oy, ox0, y);
  }
}

// Output channels [o0, o0 + OB), input channel ci and kernel row i of the
// filter gradient, in f32, over the whole batch (`xpad` every image's
// padded planes). The loops over OB and KW are unrolled so that the
// OB * KW accumulators stay in registers.
template <int OB, int KW>
AMPC_AVX512_BF16 void filterGradTask(const ConvPlan &p, const PaddedShape &s,
                                     const uint16_t *dy, const uint16_t *xpad,
                                     int64_t ci, int64_t i, int64_t o0,
                                     float *dw) {
  __m512 acc[OB][KW];
#pragma GCC unroll 8
  for (int ob = 0; ob < OB; ++ob)
#pragma GCC unroll 8
    for (int j = 0; j < KW; ++j)
      acc[ob][j] = _mm512_setzero_ps();
  const int64_t gradPlane = p.oh * p.ow;
  for (int64_t x0 = 0; x0 < p.ow; x0 += kWords) {
    // Both operands are zero past the row's end (0 * inf is NaN).
    const int64_t left = p.ow - x0;
    const __mmask32 m =
        left >= kWords ? ~__mmask32(0) : (__mmask32(1) << left) - 1;
    for (int64_t n = 0; n < p.n; ++n) {
      const uint16_t *g0 = dy + (n * p.o + o0) * gradPlane + x0;
      const uint16_t *x0row =
          xpad + (n * p.c + ci) * s.plane() + i * s.cols + x0;
      for (int64_t oy = 0; oy < p.oh; ++oy) {
        const uint16_t *gr = g0 + oy * p.ow, *xr = x0row + oy * s.cols;
        __m512i g[OB];
#pragma GCC unroll 8
        for (int ob = 0; ob < OB; ++ob)
          g[ob] = _mm512_maskz_loadu_epi16(m, gr + ob * gradPlane);
#pragma GCC unroll 8
        for (int j = 0; j < KW; ++j) {
          __m512i xv = _mm512_maskz_loadu_epi16(m, xr + j);
#pragma GCC unroll 8
          for (int ob = 0; ob < OB; ++ob)
            acc[ob][j] =
                _mm512_dpbf16_ps(acc[ob][j], (__m512bh)g[ob], (__m512bh)xv);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int ob = 0; ob < OB; ++ob)
#pragma GCC unroll 8
    for (int j = 0; j < KW; ++j) {
      alignas(64) float lanes[kPixels];
      _mm512_store_ps(lanes, acc[ob][j]);
      float sum = 0.0f;
      for (float v : lanes)
        sum += v;
      dw[(((o0 + ob) * p.c + ci) * p.kh + i) * p.kw + j] = sum;
    }
}

} // namespace

bool imageConvBf16Applies(const ConvPlan &p, DType t) {
  return t == DType::BF16 && p.c < kh::kFewConvChannels && p.group == 1 &&
         p.sh == 1 && p.sw == 1 && p.dh == 1 && p.dw == 1 && p.kw >= 1 &&
         p.kw <= kMaxColumns && p.kh >= 1 && p.n > 0 && p.o > 0 && p.oh > 0 &&
         p.ow > 0 && nativeBf16Contractions();
}

bool imageConvBf16Takes(const ops::OpCall &call, const ConvPlan &p) {
  if (!imageConvBf16Applies(p, call.inputs[0].dtype))
    return false;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (ops::hasInput(call, i) && call.inputs[i].dtype != DType::BF16)
      return false;
  for (const TensorView &t : call.outputs)
    if (t.dtype != DType::BF16)
      return false;
  return true;
}

void imageConvBf16Forward(const ConvPlan &p, const uint16_t *x,
                          const uint16_t *w, const uint16_t *bias, uint16_t *y,
                          const CpuContext &ctx) {
  const PaddedShape s(p);
  const TapPairs t(p, s, w);
  Scratch<float> biasStore;
  float *b = nullptr;
  if (bias) {
    b = biasStore.resize(static_cast<size_t>(p.o));
    bfloatToFloat(bias, b, static_cast<size_t>(p.o));
  }
  parallelFor(ctx, p.n, 1, [&](int64_t n0, int64_t n1) {
    Scratch<uint16_t> pad;
    uint16_t *xp = pad.resize(static_cast<size_t>(p.c * s.plane()));
    for (int64_t n = n0; n < n1; ++n) {
      padImage(p, s, x + n * p.c * p.h * p.w, xp);
      uint16_t *yn = y + n * p.o * p.oh * p.ow;
      // Up to 8 output channels share each pair vector.
      for (int64_t o = 0; o < p.o; o += 8)
        withConstant<1, 8>(std::min<int64_t>(8, p.o - o), [&](auto ob) {
          forwardChannels<decltype(ob)::value>(p, s, t, xp, b, o, yn);
        });
    }
  });
}

void imageConvBf16FilterGrad(const ConvPlan &p, const uint16_t *dy,
                             const uint16_t *x, uint16_t *dw,
                             const CpuContext &ctx) {
  const PaddedShape s(p);
  Scratch<uint16_t> pad;
  uint16_t *xpad = pad.resize(static_cast<size_t>(p.n * p.c * s.plane()));
  parallelFor(ctx, p.n, 4, [&](int64_t n0, int64_t n1) {
    for (int64_t n = n0; n < n1; ++n)
      padImage(p, s, x + n * p.c * p.h * p.w, xpad + n * p.c * s.plane());
  });
  const int64_t filter = p.o * p.c * p.kh * p.kw, oBlocks = (p.o + 2) / 3;
  Scratch<float> sums;
  float *dwf = sums.resize(static_cast<size_t>(filter));
  // One task per (input channel, kernel row, block of 3 output channels),
  // each summing the whole batch in one order.
  parallelFor(ctx, p.c * p.kh * oBlocks, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      const int64_t ci = t / (p.kh * oBlocks), i = t / oBlocks % p.kh,
                    o0 = t % oBlocks * 3;
      withConstant<1, kMaxColumns>(p.kw, [&](auto kw) {
        withConstant<1, 3>(std::min<int64_t>(3, p.o - o0), [&](auto ob) {
          filterGradTask<decltype(ob)::value, decltype(kw)::value>(
              p, s, dy, xpad, ci, i, o0, dwf);
        });
      });
    }
  });
  floatToBFloat(dwf, dw, static_cast<size_t>(filter));
}

} // namespace ampc::rt::cpu
