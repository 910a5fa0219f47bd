//===- MaxPoolPlaneTest.cpp - the swept max-pooling plane vs maxIndex -----===//
//
// cpu::maxPoolPlane sweeps the inner windows with selects (2x2 windows of
// stride 2 and 3x3 of stride 1 and 2 in one pass) and sends the edge windows to
// ops::maxIndex; both must pick the element ops::maxIndex picks for every
// window, whatever the window, stride (1 and 2 have their own vectorised
// loops), dilation, padding and ceil mode, on values drawn from a small set so
// that ties, -inf and NaN are common.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/MaxPoolPlane.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <utility>
#include <vector>

namespace ampc::rt {
namespace {

ops::PoolPlan plan(int64_t h, int64_t w, int64_t kh, int64_t kw, int64_t s,
                   int64_t d, int64_t pad, bool ceil) {
  Attrs at;
  at.setInts("kernel_shape", {kh, kw});
  at.setInts("strides", {s, s});
  at.setInts("pads", {pad, pad, 0, pad});
  at.setInts("dilations", {d, d});
  at.setInt("ceil_mode", ceil ? 1 : 0);
  ops::PoolPlan p;
  Status st = ops::planPool(at, {1, 1, h, w}, /*isMax=*/true, p);
  EXPECT_TRUE(st.isOk()) << st.message();
  return p;
}

template <typename T> void expectSameWinners(uint32_t seed) {
  const T inf = std::numeric_limits<T>::infinity();
  const T pool[] = {-inf, -1, 0, 0,
                    1,    2,  2, std::numeric_limits<T>::quiet_NaN()};
  std::mt19937 rng(seed);
  int cases = 0;
  const std::pair<int64_t, int64_t> kernels[] = {
      {2, 2}, {2, 3}, {3, 2}, {3, 3}};
  for (auto [kh, kw] : kernels)
    for (int64_t s : {1, 2, 3})
      for (int64_t d : {1, 2})
        for (int64_t pad : {0, 1})
          for (bool ceil : {false, true})
            for (int64_t w : {5, 17, 40}) {
              int64_t h = 7;
              ops::PoolPlan p = plan(h, w, kh, kw, s, d, pad, ceil);
              ASSERT_TRUE(cpu::checkMaxPoolPlane(p).isOk());
              std::vector<T> x(static_cast<size_t>(h * w));
              for (T &v : x)
                v = pool[rng() % 8];
              std::vector<T> y(static_cast<size_t>(p.oh * p.ow));
              std::vector<int32_t> at(y.size());
              cpu::maxPoolPlane(p, x.data(), y.data(), at.data());
              for (int64_t oy = 0; oy < p.oh; ++oy)
                for (int64_t ox = 0; ox < p.ow; ++ox) {
                  size_t o = static_cast<size_t>(oy * p.ow + ox);
                  int64_t want = ops::maxIndex(p, x.data(), oy, ox);
                  ASSERT_EQ(at[o], want)
                      << "k=" << kh << "x" << kw << " s=" << s << " d=" << d
                      << " pad=" << pad << " ceil=" << ceil << " w=" << w
                      << " at (" << oy << ", " << ox << ")";
                  if (want < 0)
                    EXPECT_EQ(y[o], -inf);
                  else if (std::isnan(x[static_cast<size_t>(want)]))
                    EXPECT_TRUE(std::isnan(y[o]));
                  else
                    EXPECT_EQ(y[o], x[static_cast<size_t>(want)]);
                }
              ++cases;
            }
  EXPECT_EQ(cases, 288);
}

TEST(MaxPoolPlane, PicksWhatMaxIndexPicksF32) { expectSameWinners<float>(7); }
TEST(MaxPoolPlane, PicksWhatMaxIndexPicksF64) { expectSameWinners<double>(8); }

// ops::maxIndex itself against its rule written out: the first maximum in
// row-major window order, the last NaN. (A window of padding only is
// MaxPoolGrad.WindowOfPaddingOnlyTakesNoGradient's case.)
TEST(MaxPoolPlane, MaxIndexFollowsItsRule) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  ops::PoolPlan p = plan(2, 3, 2, 3, 1, 1, 0, false); // one 2x3 window
  ASSERT_EQ(p.oh, 1);
  ASSERT_EQ(p.ow, 1);
  std::vector<float> ties = {1, 3, 3, 0, 3, 2};
  EXPECT_EQ(ops::maxIndex(p, ties.data(), 0, 0), 1);
  std::vector<float> nans = {nan, 3, nan, 0, 9, 2};
  EXPECT_EQ(ops::maxIndex(p, nans.data(), 0, 0), 2);
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> allMinusInf(6, -inf);
  EXPECT_EQ(ops::maxIndex(p, allMinusInf.data(), 0, 0), 0);
}

} // namespace
} // namespace ampc::rt
