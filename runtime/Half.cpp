//===- Half.cpp - bulk f16/bf16 conversions -------------------------------===//
//
// F16C converts 8 values per instruction with the same rounding as the
// scalar reference in Half.h; f32 -> bf16 uses AVX512_BF16 where the CPU
// has it, else the scalar code, which compilers vectorize (as bf16 -> f32,
// a shift).
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"

#if defined(__F16C__) || (defined(__x86_64__) && defined(__GNUC__))
#include <immintrin.h>
#endif

namespace ampc::rt {

#if defined(__x86_64__) && defined(__GNUC__)
// AVX512_BF16 rounds 16 floats to bf16 in one instruction, to nearest even
// and with NaNs quieted as floatToBFloatBits does, but it treats subnormal
// inputs as zero: a block holding one goes through the scalar code. Chosen
// at run time, as the build targets x86-64-v3.
#define AMPC_BF16_AVX512 1
namespace {
__attribute__((target("avx512f,avx512bw,avx512bf16"))) void
floatToBFloatAvx512(const float *in, uint16_t *out, size_t n) {
  const __m512i exponent = _mm512_set1_epi32(0x7F800000);
  const __m512i magnitude = _mm512_set1_epi32(0x7FFFFFFF);
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    __m512i bits = _mm512_loadu_si512(in + i);
    __mmask16 subnormal = _mm512_testn_epi32_mask(bits, exponent) &
                          _mm512_test_epi32_mask(bits, magnitude);
    if (subnormal) {
      for (size_t j = i; j < i + 16; ++j)
        out[j] = floatToBFloatBits(in[j]);
      continue;
    }
    __m256bh r = _mm512_cvtneps_pbh(_mm512_castsi512_ps(bits));
    _mm256_storeu_si256(reinterpret_cast<__m256i *>(out + i), (__m256i)r);
  }
  for (; i < n; ++i)
    out[i] = floatToBFloatBits(in[i]);
}

bool hasAvx512Bf16() {
  static const bool has = __builtin_cpu_supports("avx512f") &&
                          __builtin_cpu_supports("avx512bw") &&
                          __builtin_cpu_supports("avx512bf16");
  return has;
}
} // namespace
#endif

void halfToFloat(const uint16_t *in, float *out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(
                                  reinterpret_cast<const __m128i *>(in + i))));
#endif
  for (; i < n; ++i)
    out[i] = halfBitsToFloat(in[i]);
}

void floatToHalf(const float *in, uint16_t *out, size_t n) {
  size_t i = 0;
#if defined(__F16C__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i *>(out + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(in + i),
                                     _MM_FROUND_TO_NEAREST_INT));
#endif
  for (; i < n; ++i)
    out[i] = floatToHalfBits(in[i]);
}

void bfloatToFloat(const uint16_t *in, float *out, size_t n) {
  for (size_t i = 0; i < n; ++i)
    out[i] = bfloatBitsToFloat(in[i]);
}

void floatToBFloat(const float *in, uint16_t *out, size_t n) {
#ifdef AMPC_BF16_AVX512
  if (hasAvx512Bf16())
    return floatToBFloatAvx512(in, out, n);
#endif
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToBFloatBits(in[i]);
}

} // namespace ampc::rt
