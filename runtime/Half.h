//===- Half.h - exact f16 and bf16 conversions ----------------------------===//
//
// f32 <-> f16/bf16 with round-to-nearest-even, subnormals kept (no flush to
// zero), overflow to infinity, and NaN payloads kept in their top bits with
// the quiet bit set: the results GPUs (and x86 F16C) give. The scalar code is
// the reference; the bulk routines use F16C/AVX-512 BF16 where compiled in
// and must agree with it bit for bit (test/unittests/runtime/HalfTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_HALF_H
#define AMPC_RUNTIME_HALF_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace ampc::rt {

inline uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline uint16_t floatToHalfBits(float f) {
  uint32_t x = bitsOf(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t absx = x & 0x7FFFFFFFu;
  if (absx > 0x7F800000u) // NaN: keep the top payload bits, make it quiet
    return static_cast<uint16_t>(sign | 0x7E00u | ((absx >> 13) & 0x3FFu));
  if (absx >= 0x477FF000u) // >= 65520 rounds to infinity
    return static_cast<uint16_t>(sign | 0x7C00u);
  if (absx < 0x38800000u) { // below 2^-14: subnormal half (or zero)
    if (absx < 0x33000000u) // < 2^-25 rounds to zero (2^-25 itself: tie to 0)
      return static_cast<uint16_t>(sign);
    uint32_t exp = absx >> 23;
    uint32_t mant = (absx & 0x7FFFFFu) | 0x800000u;
    uint32_t shift = 126 - exp; // 14..24 (value = mant * 2^(exp-150))
    uint32_t h = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t half = 1u << (shift - 1);
    if (rem > half || (rem == half && (h & 1u)))
      ++h;
    return static_cast<uint16_t>(sign | h);
  }
  uint32_t h = absx - 0x38000000u; // rebias exponent 127 -> 15
  uint32_t rem = h & 0x1FFFu;
  h >>= 13;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1u)))
    ++h; // may carry into the exponent, up to infinity: that is correct
  return static_cast<uint16_t>(sign | h);
}

inline float halfBitsToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1Fu;
  uint32_t mant = h & 0x3FFu;
  if (exp == 0x1F) // inf, or NaN: payload kept, made quiet (as F16C does)
    return floatOf(sign | 0x7F800000u | (mant << 13) |
                   (mant ? 0x400000u : 0u));
  if (exp == 0) {
    if (mant == 0)
      return floatOf(sign);
    // Subnormal: value = mant * 2^-24, exact in f32.
    float v = static_cast<float>(mant) * floatOf(0x33800000u);
    return sign ? -v : v;
  }
  return floatOf(sign | ((exp + 112) << 23) | (mant << 13));
}

inline uint16_t floatToBFloatBits(float f) {
  uint32_t x = bitsOf(f);
  if ((x & 0x7FFFFFFFu) > 0x7F800000u) // NaN: quiet, top payload bits kept
    return static_cast<uint16_t>((x >> 16) | 0x40u);
  uint32_t lsb = (x >> 16) & 1u;
  return static_cast<uint16_t>((x + 0x7FFFu + lsb) >> 16);
}

inline float bfloatBitsToFloat(uint16_t b) {
  return floatOf(static_cast<uint32_t>(b) << 16);
}

// A double as a float rounded to odd: an inexact result is truncated toward
// zero with its last mantissa bit set. Rounding that again to a format at
// least two bits narrower (f16: 11 bits, bf16: 8, vs f32's 24) is then
// correctly rounded, which double -> float (RNE) -> half would not be.
inline float roundToOddFloat(double d) {
  float f = static_cast<float>(d); // NaN and inf stay; overflow -> inf
  if (d != d || static_cast<double>(f) == d)
    return f;
  if ((f < 0 ? -static_cast<double>(f) : static_cast<double>(f)) >
      (d < 0 ? -d : d)) {
    uint32_t b = bitsOf(f) - 1; // one step toward zero (inf -> max finite)
    f = floatOf(b);
  }
  return floatOf(bitsOf(f) | 1u);
}
inline uint16_t doubleToHalfBits(double d) {
  return floatToHalfBits(roundToOddFloat(d));
}
inline uint16_t doubleToBFloatBits(double d) {
  return floatToBFloatBits(roundToOddFloat(d));
}

// Bulk conversions (vectorized where the build allows).
void halfToFloat(const uint16_t *in, float *out, size_t n);
void floatToHalf(const float *in, uint16_t *out, size_t n);
void bfloatToFloat(const uint16_t *in, float *out, size_t n);
void floatToBFloat(const float *in, uint16_t *out, size_t n);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_HALF_H
