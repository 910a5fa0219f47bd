//===- VectorExp.cpp - exp of many floats at once -------------------------===//
//
// Each float is widened to double and exp(x) = 2^k * exp(r) is evaluated
// there: k = round(x / ln 2), r = x - k ln 2 (one fused step: exact to far
// below a float ulp), exp(r) on |r| <= ln 2 / 2 by its Taylor series to
// r^9 / 9! (truncation below 2^-36 relative), 2^k in the exponent bits; the
// one rounding to float is the conversion. So the result is the correctly
// rounded exp but where the exact value lies within about 2^-36 of a
// rounding boundary (VectorExpTest's sweep: 8 of 23M samples off by one
// ulp, glibc's expf 1802), and
// subnormal and overflowing results come out of that conversion as IEEE
// rounds them. Lanes and remainder evaluate the same fused operations in
// the same order, so they give the same bits.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/VectorExp.h"

#include <cmath>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace ampc::rt::cpu {
namespace {

constexpr double kLog2e = 1.4426950408889634;
constexpr double kLn2 = 0.6931471805599453;
// 1/n! for n = 9 .. 2, Horner's order.
constexpr double kInvFact[] = {1.0 / 362880, 1.0 / 40320, 1.0 / 5040, 1.0 / 720,
                               1.0 / 120,    1.0 / 24,    1.0 / 6,    1.0 / 2};
// Outside [kMin, kMax] the float result is 0 or inf whatever k is; the
// clamp keeps 2^k a normal double.
constexpr double kMin = -160.0, kMax = 100.0;

/// 2^k for an integral k in [-231, 145], from its exponent bits.
double twoTo(double k) {
  int64_t bits = (static_cast<int64_t>(k) + 1023) << 52;
  double f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

} // namespace

float expOne(float xf) {
  if (std::isnan(xf))
    return xf;
  double x = std::fmin(std::fmax(static_cast<double>(xf), kMin), kMax);
  double k = std::nearbyint(x * kLog2e);
  double r = std::fma(-k, kLn2, x);
  double p = kInvFact[0];
  for (int i = 1; i < 8; ++i)
    p = std::fma(p, r, kInvFact[i]);
  p = std::fma(p, r, 1.0);
  p = std::fma(p, r, 1.0);
  return static_cast<float>(p * twoTo(k));
}

void expInPlace(float *x, int64_t n) {
  int64_t i = 0;
#if defined(__AVX2__) && defined(__FMA__)
  const __m256d log2e = _mm256_set1_pd(kLog2e), ln2 = _mm256_set1_pd(kLn2),
                one = _mm256_set1_pd(1.0), lo = _mm256_set1_pd(kMin),
                hi = _mm256_set1_pd(kMax);
  const __m256i bias = _mm256_set1_epi64x(1023);
  const __m256d magic = _mm256_set1_pd(6755399441055744.0);
  auto four = [&](__m128 xf) {
    __m256d v = _mm256_min_pd(_mm256_max_pd(_mm256_cvtps_pd(xf), lo), hi);
    __m256d k = _mm256_round_pd(_mm256_mul_pd(v, log2e),
                                _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256d r = _mm256_fnmadd_pd(k, ln2, v);
    __m256d p = _mm256_set1_pd(kInvFact[0]);
    for (int j = 1; j < 8; ++j)
      p = _mm256_fmadd_pd(p, r, _mm256_set1_pd(kInvFact[j]));
    p = _mm256_fmadd_pd(p, r, one);
    p = _mm256_fmadd_pd(p, r, one);
    // k is integral and small: adding 1.5 * 2^52 puts it, as an int64, in
    // the low mantissa bits (negative k too).
    __m256i ki = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(k, magic)),
                                  _mm256_castpd_si256(magic));
    __m256d scale =
        _mm256_castsi256_pd(_mm256_slli_epi64(_mm256_add_epi64(ki, bias), 52));
    __m128 out = _mm256_cvtpd_ps(_mm256_mul_pd(p, scale));
    // NaN in, NaN out (the clamp above replaced it).
    return _mm_blendv_ps(out, xf, _mm_cmpunord_ps(xf, xf));
  };
  for (; i + 8 <= n; i += 8) {
    __m128 a = four(_mm_loadu_ps(x + i));
    __m128 b = four(_mm_loadu_ps(x + i + 4));
    _mm_storeu_ps(x + i, a);
    _mm_storeu_ps(x + i + 4, b);
  }
#endif
  for (; i < n; ++i)
    x[i] = expOne(x[i]);
}

} // namespace ampc::rt::cpu
