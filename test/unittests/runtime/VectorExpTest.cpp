//===- VectorExpTest.cpp - the CPU kernels' exp against the exact value ---===//
//
// runtime/cpu/VectorExp against exp computed in double and rounded once:
// every 97th float pattern of the range whose exp is neither 0 nor inf
// (subnormal results included), the edges and the special values, and the
// eight-lane path against the scalar remainder's code.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/VectorExp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

using namespace ampc::rt::cpu;

namespace {

uint32_t bitsOf(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// Distance in representable floats between two positive finite values.
int64_t ulps(float a, float b) {
  return std::llabs(static_cast<int64_t>(bitsOf(a)) -
                    static_cast<int64_t>(bitsOf(b)));
}

float exact(float x) { return static_cast<float>(std::exp(double(x))); }

float viaArray(float x) {
  expInPlace(&x, 1);
  return x;
}

TEST(VectorExp, CorrectlyRoundedButForRareBoundaryCases) {
  // Walked by bit pattern, both signs, up to where exp overflows (88.73)
  // and down to where it rounds to 0 (-103.98); through the lanes.
  std::vector<float> xs;
  for (uint32_t b = 0; b < 0x42D00000u; b += 97) { // 0 .. 104
    float x;
    std::memcpy(&x, &b, sizeof x);
    if (x < 88.7f)
      xs.push_back(x);
    xs.push_back(-x);
  }
  std::vector<float> ys = xs;
  expInPlace(ys.data(), static_cast<int64_t>(ys.size()));
  int64_t worst = 0, off = 0;
  float worstAt = 0;
  for (size_t i = 0; i < xs.size(); ++i) {
    int64_t d = ulps(ys[i], exact(xs[i]));
    off += d != 0;
    if (d > worst) {
      worst = d;
      worstAt = xs[i];
    }
  }
  EXPECT_LE(worst, 1) << "at x = " << worstAt;
  // Measured: 8 of these 23M samples are off (glibc's expf: 1802, which
  // this bound refuses).
  EXPECT_LE(off * 100000, static_cast<int64_t>(xs.size())) << off << " off";
}

TEST(VectorExp, EdgesAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(expOne(0.0f), 1.0f);
  EXPECT_EQ(viaArray(0.0f), 1.0f);
  EXPECT_EQ(expOne(-inf), 0.0f);
  EXPECT_EQ(expOne(inf), inf);
  EXPECT_TRUE(std::isnan(expOne(std::nanf(""))));
  // Subnormal results are rounded, not flushed; beyond them 0; above the
  // largest float, inf.
  EXPECT_EQ(bitsOf(expOne(-88.0f)), bitsOf(exact(-88.0f)));
  EXPECT_GT(expOne(-100.0f), 0.0f);
  EXPECT_EQ(expOne(-104.0f), 0.0f);
  EXPECT_EQ(expOne(-1e30f), 0.0f);
  EXPECT_EQ(expOne(89.0f), inf);
  EXPECT_EQ(expOne(1e30f), inf);
  EXPECT_EQ(bitsOf(expOne(88.72f)), bitsOf(exact(88.72f)));
  // The same through eight lanes (a full block).
  std::vector<float> v = {0.0f,    -inf,  inf,    std::nanf(""),
                          -100.0f, 89.0f, 88.72f, -104.0f};
  std::vector<float> want;
  for (float x : v)
    want.push_back(expOne(x));
  expInPlace(v.data(), 8);
  for (size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(v[i])) << i;
    else
      EXPECT_EQ(bitsOf(v[i]), bitsOf(want[i])) << i;
  }
}

TEST(VectorExp, LanesAndRemainderAgreeBitForBit) {
  // A length that is not a multiple of 8: the lanes take the first 1000,
  // the scalar code the last 3; every element must match expOne.
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-110.0f, 90.0f);
  std::vector<float> xs(1003);
  for (float &x : xs)
    x = dist(rng);
  std::vector<float> ys = xs;
  expInPlace(ys.data(), static_cast<int64_t>(ys.size()));
  for (size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(bitsOf(ys[i]), bitsOf(expOne(xs[i]))) << "x = " << xs[i];
}

} // namespace
