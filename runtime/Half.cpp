//===- Half.cpp - bulk f16/bf16 conversions -------------------------------===//
//
// F16C converts 8 values per instruction with the same rounding as the
// scalar reference in Half.h; bf16 uses the scalar code, which compilers
// vectorize.
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"

#if defined(__F16C__)
#include <immintrin.h>
#endif

namespace ampc::rt {

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
  for (size_t i = 0; i < n; ++i)
    out[i] = floatToBFloatBits(in[i]);
}

} // namespace ampc::rt
