//===- HalfTest.cpp - exact f16/bf16 conversions --------------------------===//
//
// The scalar conversions of Half.h against an independent reference that
// finds the nearest representable value by exact comparisons in double, and
// the bulk (F16C) routines against the scalar ones.
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

using namespace ampc::rt;

namespace {

// The values of the non-negative finite patterns 0 .. maxPattern of a
// format, followed by the value the next pattern would have if the exponent
// went on (the rounding boundary to infinity).
struct Format {
  std::vector<double> values;
  uint16_t infPattern;
  int quietBit;     // mantissa bit that marks a quiet NaN
  int payloadShift; // f32 mantissa bits dropped
};

double halfValue(uint32_t p) { // independent decoding, p < 0x7C00 + 1
  uint32_t e = p >> 10, m = p & 0x3FF;
  if (e == 0)
    return std::ldexp(m, -24);
  return std::ldexp(1024 + m, static_cast<int>(e) - 25);
}
double bfloatValue(uint32_t p) { // p < 0x7F80 + 1
  uint32_t e = p >> 7, m = p & 0x7F;
  if (e == 0)
    return std::ldexp(m, -133);
  return std::ldexp(128 + m, static_cast<int>(e) - 134);
}

const Format &halfFormat() {
  static Format f = [] {
    Format f;
    for (uint32_t p = 0; p <= 0x7C00; ++p)
      f.values.push_back(halfValue(p));
    f.infPattern = 0x7C00;
    return f;
  }();
  return f;
}
const Format &bfloatFormat() {
  static Format f = [] {
    Format f;
    for (uint32_t p = 0; p <= 0x7F80; ++p)
      f.values.push_back(bfloatValue(p));
    f.infPattern = 0x7F80;
    return f;
  }();
  return f;
}

// Round to nearest, ties to even, by exact comparison with the midpoint
// (midpoints of 11- or 8-bit values are exact in double).
uint16_t referenceRound(const Format &fmt, float x) {
  uint32_t b = bitsOf(x);
  uint16_t sign = static_cast<uint16_t>((b >> 31) << 15);
  double a = std::fabs(static_cast<double>(x));
  if (std::isinf(a))
    return sign | fmt.infPattern;
  const std::vector<double> &v = fmt.values;
  // Largest k with v[k] <= a (v is increasing).
  size_t k = std::upper_bound(v.begin(), v.end(), a) - v.begin() - 1;
  if (k + 1 >= v.size() || v[k] == a)
    return sign | static_cast<uint16_t>(std::min<size_t>(k, fmt.infPattern));
  double mid = (v[k] + v[k + 1]) / 2;
  size_t r = a < mid ? k : a > mid ? k + 1 : (k % 2 == 0 ? k : k + 1);
  return sign | static_cast<uint16_t>(r);
}

uint16_t refHalf(float x) { return referenceRound(halfFormat(), x); }
uint16_t refBFloat(float x) { return referenceRound(bfloatFormat(), x); }

// Expected NaN results: sign kept, quiet bit set, top payload bits kept.
uint16_t nanHalf(uint32_t b) {
  return static_cast<uint16_t>(((b >> 16) & 0x8000) | 0x7E00 |
                               ((b >> 13) & 0x3FF));
}
uint16_t nanBFloat(uint32_t b) {
  return static_cast<uint16_t>((b >> 16) | 0x40);
}

TEST(Half, NamedValues) {
  EXPECT_EQ(floatToHalfBits(65504.0f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65519.996f), 0x7BFF);
  EXPECT_EQ(floatToHalfBits(65520.0f), 0x7C00);
  EXPECT_EQ(floatToHalfBits(-65520.0f), 0xFC00);
  EXPECT_EQ(floatToHalfBits(1e10f), 0x7C00);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -24)), 0x0001); // min subnormal
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -25)), 0x0000); // tie to even 0
  EXPECT_EQ(floatToHalfBits(std::nextafter(std::ldexp(1.0f, -25), 1.0f)),
            0x0001);
  EXPECT_EQ(floatToHalfBits(3 * std::ldexp(1.0f, -26)), 0x0001);
  EXPECT_EQ(floatToHalfBits(1.5f * std::ldexp(1.0f, -24)), 0x0002); // tie up
  EXPECT_EQ(floatToHalfBits(2.5f * std::ldexp(1.0f, -24)), 0x0002); // tie down
  EXPECT_EQ(floatToHalfBits(3.5f * std::ldexp(1.0f, -24)), 0x0004);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14)), 0x0400); // min normal
  // Largest subnormal 1023 * 2^-24; the tie with 2^-14 goes to 0x400 (even).
  EXPECT_EQ(floatToHalfBits(1023 * std::ldexp(1.0f, -24)), 0x03FF);
  EXPECT_EQ(floatToHalfBits(std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25)),
            0x0400);
  EXPECT_EQ(floatToHalfBits(std::nextafter(
                std::ldexp(1.0f, -14) - std::ldexp(1.0f, -25), 0.0f)),
            0x03FF);
  EXPECT_EQ(floatToHalfBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToHalfBits(0.0f), 0x0000);
  EXPECT_EQ(floatToHalfBits(INFINITY), 0x7C00);
  EXPECT_EQ(floatToHalfBits(-INFINITY), 0xFC00);
  EXPECT_EQ(floatToHalfBits(1.0f + std::ldexp(1.0f, -11)), 0x3C00); // tie
  EXPECT_EQ(floatToHalfBits(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3C02);
  // NaN: quiet bit set, payload top bits and sign kept.
  EXPECT_EQ(floatToHalfBits(floatOf(0x7F800001)), 0x7E00); // sNaN -> quiet
  EXPECT_EQ(floatToHalfBits(floatOf(0xFFC00000)), 0xFE00);
  EXPECT_EQ(floatToHalfBits(floatOf(0x7FA02000)), 0x7F01);
  EXPECT_EQ(floatToHalfBits(floatOf(0x7F9FE000)), 0x7EFF);

  EXPECT_EQ(halfBitsToFloat(0x7BFF), 65504.0f);
  EXPECT_EQ(halfBitsToFloat(0x0001), std::ldexp(1.0f, -24));
  EXPECT_EQ(bitsOf(halfBitsToFloat(0x8000)), 0x80000000u);
  EXPECT_EQ(bitsOf(halfBitsToFloat(0x7D01)), 0x7FE02000u); // made quiet
  EXPECT_EQ(bitsOf(halfBitsToFloat(0xFF01)), 0xFFE02000u); // payload kept
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  std::vector<uint16_t> all(65536);
  std::vector<float> viaBulk(65536);
  for (uint32_t p = 0; p < 65536; ++p)
    all[p] = static_cast<uint16_t>(p);
  halfToFloat(all.data(), viaBulk.data(), all.size());
  std::vector<uint16_t> back(65536);
  floatToHalf(viaBulk.data(), back.data(), back.size());
  for (uint32_t p = 0; p < 65536; ++p) {
    uint16_t h = static_cast<uint16_t>(p);
    float f = halfBitsToFloat(h);
    ASSERT_EQ(bitsOf(f), bitsOf(viaBulk[p])) << std::hex << p;
    bool isNaN = (p & 0x7C00) == 0x7C00 && (p & 0x3FF);
    if (isNaN) {
      ASSERT_TRUE(std::isnan(f)) << std::hex << p;
    } else {
      double v = halfValue(p & 0x7FFF);
      if ((p & 0x7FFF) == 0x7C00)
        v = INFINITY;
      ASSERT_EQ(static_cast<double>(f), (p & 0x8000) ? -v : v) << std::hex << p;
    }
    uint16_t want = isNaN ? static_cast<uint16_t>(h | 0x200) : h;
    ASSERT_EQ(floatToHalfBits(f), want) << std::hex << p;
    ASSERT_EQ(back[p], want) << std::hex << p;
  }
}

// Every 4099th f32 pattern, plus every pattern within 4096 of each
// boundary, through the scalar and the bulk conversion.
std::vector<uint32_t> samplePatterns(std::vector<uint32_t> boundaries) {
  std::vector<uint32_t> s;
  for (uint64_t b = 0; b <= 0xFFFFFFFFull; b += 4099)
    s.push_back(static_cast<uint32_t>(b));
  for (uint32_t c : boundaries)
    for (uint32_t sign : {0u, 0x80000000u})
      for (int64_t d = -4096; d <= 4096; ++d) {
        int64_t p = static_cast<int64_t>(c) + d;
        if (p >= 0 && p <= 0x7FFFFFFF)
          s.push_back(static_cast<uint32_t>(p) | sign);
      }
  return s;
}

TEST(Half, FloatToHalfMatchesReferenceOnSampledPatterns) {
  std::vector<uint32_t> pats = samplePatterns({
      0x477FE000, // 65504
      0x477FF000, // 65520: overflow boundary
      0x38800000, // 2^-14
      0x387FC000, // largest subnormal
      0x33000000, // 2^-25
      0x33800000, // 2^-24
      0x3F800000, // 1.0
      0x7F800000, // inf / NaN
      0x00000000,
  });
  std::vector<float> in(pats.size());
  for (size_t i = 0; i < pats.size(); ++i)
    in[i] = floatOf(pats[i]);
  std::vector<uint16_t> bulk(pats.size());
  floatToHalf(in.data(), bulk.data(), in.size());
  for (size_t i = 0; i < pats.size(); ++i) {
    uint32_t b = pats[i];
    bool isNaN = (b & 0x7FFFFFFF) > 0x7F800000;
    uint16_t want = isNaN ? nanHalf(b) : refHalf(in[i]);
    ASSERT_EQ(floatToHalfBits(in[i]), want) << std::hex << b;
    ASSERT_EQ(bulk[i], want) << std::hex << b;
  }
}

TEST(BFloat, NamedValues) {
  EXPECT_EQ(floatToBFloatBits(1.0f), 0x3F80);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x3F808000)), 0x3F80); // tie to even
  EXPECT_EQ(floatToBFloatBits(floatOf(0x3F818000)), 0x3F82); // tie up
  EXPECT_EQ(floatToBFloatBits(floatOf(0x3F808001)), 0x3F81);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7F7F0000)), 0x7F7F); // max
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7F7F7FFF)), 0x7F7F);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7F7F8000)), 0x7F80); // -> inf
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7F7FFFFF)), 0x7F80);
  EXPECT_EQ(floatToBFloatBits(floatOf(0xFF7F8000)), 0xFF80);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x00008000)), 0x0000); // subnormal tie
  EXPECT_EQ(floatToBFloatBits(floatOf(0x00018000)), 0x0002);
  EXPECT_EQ(floatToBFloatBits(-0.0f), 0x8000);
  EXPECT_EQ(floatToBFloatBits(INFINITY), 0x7F80);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7F800001)), 0x7FC0); // sNaN -> quiet
  EXPECT_EQ(floatToBFloatBits(floatOf(0xFFFFFFFF)), 0xFFFF);
  EXPECT_EQ(floatToBFloatBits(floatOf(0x7FA10000)), 0x7FE1);
  EXPECT_EQ(bfloatBitsToFloat(0x7F7F), floatOf(0x7F7F0000));
}

TEST(BFloat, EveryBFloatRoundTripsThroughFloat) {
  std::vector<uint16_t> all(65536);
  for (uint32_t p = 0; p < 65536; ++p)
    all[p] = static_cast<uint16_t>(p);
  std::vector<float> bulk(65536);
  bfloatToFloat(all.data(), bulk.data(), 65536);
  std::vector<uint16_t> back(65536);
  floatToBFloat(bulk.data(), back.data(), 65536);
  for (uint32_t p = 0; p < 65536; ++p) {
    float f = bfloatBitsToFloat(static_cast<uint16_t>(p));
    ASSERT_EQ(bitsOf(f), p << 16);
    ASSERT_EQ(bitsOf(bulk[p]), p << 16);
    bool isNaN = (p & 0x7F80) == 0x7F80 && (p & 0x7F);
    if (!isNaN && (p & 0x7FFF) < 0x7F80)
      ASSERT_EQ(std::fabs(static_cast<double>(f)), bfloatValue(p & 0x7FFF));
    uint16_t want = static_cast<uint16_t>(isNaN ? (p | 0x40) : p);
    ASSERT_EQ(floatToBFloatBits(f), want) << std::hex << p;
    ASSERT_EQ(back[p], want) << std::hex << p;
  }
}

TEST(BFloat, FloatToBFloatMatchesReferenceOnSampledPatterns) {
  std::vector<uint32_t> pats = samplePatterns({
      0x7F7F0000,
      0x7F7F8000,
      0x7F800000,
      0x00800000,
      0x00008000,
      0x3F808000,
      0x00000000,
  });
  std::vector<float> in(pats.size());
  for (size_t i = 0; i < pats.size(); ++i)
    in[i] = floatOf(pats[i]);
  std::vector<uint16_t> bulk(pats.size());
  floatToBFloat(in.data(), bulk.data(), in.size());
  for (size_t i = 0; i < pats.size(); ++i) {
    uint32_t b = pats[i];
    bool isNaN = (b & 0x7FFFFFFF) > 0x7F800000;
    uint16_t want = isNaN ? nanBFloat(b) : refBFloat(in[i]);
    ASSERT_EQ(floatToBFloatBits(in[i]), want) << std::hex << b;
    ASSERT_EQ(bulk[i], want) << std::hex << b;
  }
}

} // namespace
