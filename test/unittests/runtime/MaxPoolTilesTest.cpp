//===- MaxPoolTilesTest.cpp - tiled max pooling vs maxIndex, bit for bit --===//
//
// cpu::maxTileRows and maxTileGradRows (windows that tile the planes, rows
// of windows across planes; 2x2 in two vectorised passes, other shapes one
// window at a time) against ops::maxIndex on every window: the maximum's
// bits are the winner's, the gradient is 0 + g at the winner and +0
// elsewhere. Values come from a small set so that ties (+0 against -0
// too), -inf and NaNs are common; NaNs carry their position in their
// payload, so taking the wrong one shows. The bf16 passes, which move
// stored bits, against the f32 passes on the widened values rounded once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/MaxPoolTiles.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

namespace ampc::rt {
namespace {

ops::PoolPlan tiledPlan(int64_t planes, int64_t oh, int64_t ow, int64_t kh,
                        int64_t kw) {
  Attrs at;
  at.setInts("kernel_shape", {kh, kw});
  at.setInts("strides", {kh, kw});
  at.setInts("pads", {0, 0, 0, 0});
  at.setInts("dilations", {1, 1});
  at.setInt("ceil_mode", 0);
  ops::PoolPlan p;
  Status st = ops::planPool(at, {planes, 1, oh * kh, ow * kw}, true, p);
  EXPECT_TRUE(st.isOk()) << st.message();
  return p;
}

uint32_t bits(float v) {
  uint32_t b;
  std::memcpy(&b, &v, sizeof b);
  return b;
}

float nanWithPayload(uint32_t payload) {
  uint32_t b = 0x7fc00000u | (payload & 0x3fffffu);
  float v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

TEST(MaxPoolTiles, OnlyWindowsThatTileThePlanes) {
  EXPECT_TRUE(cpu::windowsTilePlanes(tiledPlan(2, 3, 4, 2, 2)));
  EXPECT_TRUE(cpu::windowsTilePlanes(tiledPlan(2, 3, 4, 3, 2)));
  Attrs at;
  at.setInts("kernel_shape", {2, 2});
  at.setInts("strides", {2, 2});
  at.setInts("pads", {0, 0, 0, 0});
  at.setInts("dilations", {1, 1});
  at.setInt("ceil_mode", 0);
  ops::PoolPlan p;
  ASSERT_TRUE(ops::planPool(at, {1, 1, 5, 4}, true, p).isOk());
  EXPECT_FALSE(cpu::windowsTilePlanes(p)) << "an odd row is left over";
  at.setInts("pads", {0, 1, 0, 1});
  ASSERT_TRUE(ops::planPool(at, {1, 1, 4, 4}, true, p).isOk());
  EXPECT_FALSE(cpu::windowsTilePlanes(p)) << "padding";
  at.setInts("pads", {0, 0, 0, 0});
  at.setInts("strides", {1, 1});
  ASSERT_TRUE(ops::planPool(at, {1, 1, 4, 4}, true, p).isOk());
  EXPECT_FALSE(cpu::windowsTilePlanes(p)) << "overlapping windows";
}

TEST(MaxPoolTiles, PicksWhatMaxIndexPicksBitForBit) {
  const float inf = std::numeric_limits<float>::infinity();
  std::mt19937 rng(11);
  const int64_t shapes[][2] = {{2, 2}, {3, 3}, {2, 3}, {1, 2}, {3, 1}};
  int cases = 0;
  for (auto [kh, kw] : shapes)
    for (int64_t ow : {1, 5, 14, 17})
      for (int64_t planes : {1, 3}) {
        const int64_t oh = 4;
        ops::PoolPlan p = tiledPlan(planes, oh, ow, kh, kw);
        ASSERT_TRUE(cpu::windowsTilePlanes(p));
        const int64_t inPlane = p.h * p.w, outPlane = p.oh * p.ow;
        std::vector<float> x(static_cast<size_t>(planes * inPlane));
        for (size_t i = 0; i < x.size(); ++i) {
          const float pool[] = {
              -inf, -1.0f, -0.0f, 0.0f,
              1.0f, 2.0f,  2.0f,  nanWithPayload(static_cast<uint32_t>(i))};
          x[i] = pool[rng() % 8];
        }
        std::vector<float> g(static_cast<size_t>(planes * outPlane));
        for (float &v : g)
          v = (rng() % 4 == 0) ? -0.0f : static_cast<float>(rng() % 9) - 4;
        const int64_t rows = planes * p.oh;
        std::vector<float> y(g.size()), dx(x.size(), 7.0f);
        cpu::TileScratch<cpu::FloatTile<float>> scratch;
        cpu::maxTileRows<cpu::FloatTile<float>>(p, x.data(), rows, y.data(),
                                                scratch);
        cpu::maxTileGradRows<cpu::FloatTile<float>>(p, x.data(), g.data(), rows,
                                                    dx.data(), scratch);
        std::vector<float> want(x.size(), 0.0f);
        for (int64_t pl = 0; pl < planes; ++pl)
          for (int64_t oy = 0; oy < p.oh; ++oy)
            for (int64_t ox = 0; ox < p.ow; ++ox) {
              const float *plane = x.data() + pl * inPlane;
              int64_t at = ops::maxIndex(p, plane, oy, ox);
              ASSERT_GE(at, 0);
              size_t o = static_cast<size_t>(pl * outPlane + oy * p.ow + ox);
              ASSERT_EQ(bits(y[o]), bits(plane[at]))
                  << kh << "x" << kw << " ow=" << ow << " planes=" << planes
                  << " window (" << pl << ", " << oy << ", " << ox << ")";
              want[static_cast<size_t>(pl * inPlane + at)] = 0.0f + g[o];
            }
        for (size_t i = 0; i < x.size(); ++i)
          ASSERT_EQ(bits(dx[i]), bits(want[i]))
              << kh << "x" << kw << " ow=" << ow << " planes=" << planes
              << " element " << i;
        ++cases;
      }
  EXPECT_EQ(cases, 40);
}

// The rows of a call need not start at a plane: a chunk of rows across a
// plane boundary gives what the whole tensor at once gives.
TEST(MaxPoolTiles, ChunksOfRowsAgreeWithTheWhole) {
  ops::PoolPlan p = tiledPlan(3, 5, 6, 2, 2);
  std::vector<float> x(static_cast<size_t>(3 * p.h * p.w));
  std::mt19937 rng(3);
  for (float &v : x)
    v = static_cast<float>(rng() % 5);
  std::vector<float> g(static_cast<size_t>(3 * p.oh * p.ow), 1.5f);
  const int64_t rows = 3 * p.oh, inRow = p.sh * p.w;
  std::vector<float> whole(x.size()), chunked(x.size());
  cpu::TileScratch<cpu::FloatTile<float>> s;
  cpu::maxTileGradRows<cpu::FloatTile<float>>(p, x.data(), g.data(), rows,
                                              whole.data(), s);
  for (int64_t r0 = 0; r0 < rows; r0 += 4) {
    int64_t n = std::min<int64_t>(4, rows - r0);
    cpu::maxTileGradRows<cpu::FloatTile<float>>(p, x.data() + r0 * inRow,
                                                g.data() + r0 * p.ow, n,
                                                chunked.data() + r0 * inRow, s);
  }
  EXPECT_EQ(whole, chunked);
}

// bf16 pooled as stored gives what widening, the f32 passes and one
// rounding give, bit for bit: signalling NaNs come out quiet with their
// payloads, -0 gradients as +0, subnormals and the largest finite values
// unchanged.
TEST(MaxPoolTiles, Bf16AsStoredIsTheF32PassRounded) {
  const uint16_t pool[] = {0xff80, 0xbf80, 0x8000, 0x0000, 0x3f80,
                           0x4000, 0x4000, 0x0001, 0x8001, 0x7f7f,
                           0x7f80, 0x7fc5, 0x7f81, 0xff83, 0xffc0};
  const size_t kinds = sizeof pool / sizeof pool[0];
  std::mt19937 rng(5);
  const int64_t shapes[][2] = {{2, 2}, {3, 3}, {2, 3}, {1, 2}};
  for (auto [kh, kw] : shapes)
    for (int64_t ow : {1, 6, 17}) {
      const int64_t planes = 3;
      ops::PoolPlan p = tiledPlan(planes, 4, ow, kh, kw);
      const int64_t rows = planes * p.oh;
      std::vector<uint16_t> x(static_cast<size_t>(planes * p.h * p.w)),
          g(static_cast<size_t>(rows * p.ow));
      for (uint16_t &v : x)
        v = pool[rng() % kinds];
      for (uint16_t &v : g)
        v = pool[rng() % kinds];
      std::vector<uint16_t> y(g.size()), dx(x.size(), 0x1234);
      cpu::TileScratch<cpu::Bf16Tile> s16;
      cpu::maxTileRows<cpu::Bf16Tile>(p, x.data(), rows, y.data(), s16);
      cpu::maxTileGradRows<cpu::Bf16Tile>(p, x.data(), g.data(), rows,
                                          dx.data(), s16);

      std::vector<float> xf(x.size()), gf(g.size()), yf(g.size()),
          dxf(x.size());
      for (size_t i = 0; i < x.size(); ++i)
        xf[i] = bfloatBitsToFloat(x[i]);
      for (size_t i = 0; i < g.size(); ++i)
        gf[i] = bfloatBitsToFloat(g[i]);
      cpu::TileScratch<cpu::FloatTile<float>> s32;
      cpu::maxTileRows<cpu::FloatTile<float>>(p, xf.data(), rows, yf.data(),
                                              s32);
      cpu::maxTileGradRows<cpu::FloatTile<float>>(p, xf.data(), gf.data(), rows,
                                                  dxf.data(), s32);
      for (size_t i = 0; i < y.size(); ++i)
        ASSERT_EQ(y[i], floatToBFloatBits(yf[i]))
            << kh << "x" << kw << " ow=" << ow << " window " << i;
      for (size_t i = 0; i < dx.size(); ++i)
        ASSERT_EQ(dx[i], floatToBFloatBits(dxf[i]))
            << kh << "x" << kw << " ow=" << ow << " element " << i;
    }
}

} // namespace
} // namespace ampc::rt
