//===- ScanKernelsTest.cpp - arg_max, cumsum and top_k on the CPU ---------===//
//
// Every numeric dtype and axis of a 3-D tensor against naive double loops
// (which walk [outer, len, inner] by index arithmetic of their own): the
// running sum with every exclusive/reverse combination, the first and the
// last maximum with ties and NaN, the k largest and smallest with ties in
// index order; f16 accumulation in f32; integer wrap-around; every check()
// error.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kNumeric[] = {DType::F32, DType::F16, DType::BF16,
                          DType::F64, DType::I64, DType::I32};

// The flat index of (o, r, j) in a shape split at `axis`.
struct Split {
  int64_t outer = 1, len = 1, inner = 1;
  Split(const Shape &s, int64_t axis) {
    for (int64_t i = 0; i < (int64_t)s.size(); ++i)
      (i < axis ? outer : i == axis ? len : inner) *= s[i];
  }
  int64_t at(int64_t o, int64_t r, int64_t j, int64_t n) const {
    return (o * n + r) * inner + j;
  }
};

// NaN above every number.
bool greater(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::isnan(a) && !std::isnan(b);
  return a > b;
}

Call scanCall(const std::string &op, Buf *x, std::vector<Buf *> outs,
              int64_t axis) {
  Call c{op, {}, {x}, std::move(outs)};
  c.attrs.setInt("axis", axis);
  return c;
}

class ScanTest : public ::testing::TestWithParam<DType> {};

TEST_P(ScanTest, CumSumEveryAxisAndDirection) {
  DType t = GetParam();
  Shape shape{3, 5, 4};
  uint32_t seed = 7;
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool exclusive : {false, true})
      for (bool reverse : {false, true}) {
        Buf x = randomBuf(t, shape, seed++);
        Buf out(t, shape);
        Call c = scanCall("cumsum", &x, {&out}, axis);
        c.attrs.setInt("exclusive", exclusive);
        c.attrs.setInt("reverse", reverse);
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        Split s(shape, axis);
        std::vector<double> ref(x.size());
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t j = 0; j < s.inner; ++j)
            for (int64_t r = 0; r < s.len; ++r) {
              double sum = 0;
              for (int64_t q = 0; q < s.len; ++q) {
                bool in = reverse ? q > r || (!exclusive && q == r)
                                  : q < r || (!exclusive && q == r);
                if (in)
                  sum += x.get(s.at(o, q, j, s.len));
              }
              ref[s.at(o, r, j, s.len)] = sum;
            }
        std::string what = "axis " + std::to_string(axis) +
                           (exclusive ? " exclusive" : "") +
                           (reverse ? " reverse" : "");
        if (isInt(t))
          EXPECT_EQ(out.values(), ref) << what;
        else
          expectNear(out, ref, relTol(t) * 4, relTol(t), what);
      }
}

TEST_P(ScanTest, ArgMaxFirstAndLastOfTies) {
  DType t = GetParam();
  Shape shape{4, 6, 3};
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool last : {false, true})
      for (bool keep : {true, false}) {
        // Few distinct values, so ties are common.
        Buf x(t, shape);
        std::mt19937 rng(static_cast<uint32_t>(axis * 4 + last * 2 + keep));
        for (int64_t i = 0; i < x.size(); ++i)
          x.set(i, static_cast<double>(rng() % 4) - 1);
        Split s(shape, axis);
        Shape os = shape;
        if (keep)
          os[axis] = 1;
        else
          os.erase(os.begin() + axis);
        Buf out(DType::I64, os);
        Call c = scanCall("arg_max", &x, {&out}, axis);
        c.attrs.setInt("keepdims", keep);
        c.attrs.setInt("select_last_index", last);
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        std::vector<double> ref;
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t j = 0; j < s.inner; ++j) {
            int64_t best = 0;
            for (int64_t r = 1; r < s.len; ++r) {
              double a = x.get(s.at(o, r, j, s.len)),
                     b = x.get(s.at(o, best, j, s.len));
              if (last ? !greater(b, a) : greater(a, b))
                best = r;
            }
            ref.push_back(static_cast<double>(best));
          }
        EXPECT_EQ(out.values(), ref)
            << "axis " << axis << (last ? " last" : " first");
      }
}

TEST_P(ScanTest, TopKLargestAndSmallest) {
  DType t = GetParam();
  Shape shape{3, 7, 2};
  for (int64_t axis = 0; axis < 3; ++axis)
    for (bool largest : {true, false}) {
      Buf x(t, shape);
      std::mt19937 rng(static_cast<uint32_t>(axis * 2 + largest));
      for (int64_t i = 0; i < x.size(); ++i)
        x.set(i, static_cast<double>(rng() % 5) - 2);
      Split s(shape, axis);
      for (int64_t k : {int64_t(0), int64_t(1), s.len / 2, s.len}) {
        Shape os = shape;
        os[axis] = k;
        Buf values(t, os), indices(DType::I64, os);
        Call c = scanCall("top_k", &x, {&values, &indices}, axis);
        c.attrs.setInt("k", k);
        c.attrs.setInt("largest", largest);
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        std::vector<double> refV(values.size()), refI(values.size());
        for (int64_t o = 0; o < s.outer; ++o)
          for (int64_t j = 0; j < s.inner; ++j) {
            std::vector<int64_t> order(s.len);
            std::iota(order.begin(), order.end(), 0);
            std::stable_sort(
                order.begin(), order.end(), [&](int64_t a, int64_t b) {
                  double va = x.get(s.at(o, a, j, s.len)),
                         vb = x.get(s.at(o, b, j, s.len));
                  return largest ? greater(va, vb) : greater(vb, va);
                });
            for (int64_t r = 0; r < k; ++r) {
              refI[s.at(o, r, j, k)] = static_cast<double>(order[r]);
              refV[s.at(o, r, j, k)] = x.get(s.at(o, order[r], j, s.len));
            }
          }
        std::string what = "axis " + std::to_string(axis) + " k " +
                           std::to_string(k) +
                           (largest ? " largest" : " smallest");
        EXPECT_EQ(values.values(), refV) << what;
        EXPECT_EQ(indices.values(), refI) << what;
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Numeric, ScanTest, ::testing::ValuesIn(kNumeric),
                         dtypeName);

TEST(Scan, NaNIsTheMaximum) {
  Buf x = makeBuf(DType::F32, {5}, {1, NAN, 3, NAN, 2});
  Buf first(DType::I64, {1}), last(DType::I64, {1});
  for (auto [out, sel] : {std::pair{&first, 0}, std::pair{&last, 1}}) {
    Call c = scanCall("arg_max", &x, {out}, 0);
    c.attrs.setInt("keepdims", 1);
    c.attrs.setInt("select_last_index", sel);
    ASSERT_TRUE(c.run().isOk());
  }
  EXPECT_EQ(first.get(0), 1);
  EXPECT_EQ(last.get(0), 3);
  Buf values(DType::F32, {3}), indices(DType::I64, {3});
  Call c = scanCall("top_k", &x, {&values, &indices}, 0);
  c.attrs.setInt("k", 3);
  c.attrs.setInt("largest", 1);
  ASSERT_TRUE(c.run().isOk());
  EXPECT_TRUE(std::isnan(values.get(0)) && std::isnan(values.get(1)));
  EXPECT_EQ(values.get(2), 3);
  EXPECT_EQ(indices.values(), (std::vector<double>{1, 3, 2}));
}

TEST(Scan, CumSumAccumulatesWideAndWraps) {
  // f16 steps would stay at 2048; f32 accumulation reaches 2050, then
  // rounds each output once.
  Buf h = makeBuf(DType::F16, {3}, {2048, 1, 1});
  Buf ho(DType::F16, {3});
  Call c = scanCall("cumsum", &h, {&ho}, 0);
  c.attrs.setInt("exclusive", 0);
  c.attrs.setInt("reverse", 0);
  ASSERT_TRUE(c.run().isOk());
  EXPECT_EQ(ho.values(), (std::vector<double>{2048, 2048, 2050}));
  // int64 wraps as two's complement, as the CPU's integer sums do.
  Buf i = makeBuf(DType::I64, {2}, {9.2e18, 9.2e18});
  Buf io(DType::I64, {2});
  Call ci = scanCall("cumsum", &i, {&io}, 0);
  ci.attrs.setInt("exclusive", 0);
  ci.attrs.setInt("reverse", 0);
  ASSERT_TRUE(ci.run().isOk());
  int64_t a = static_cast<int64_t>(9.2e18);
  int64_t wrapped =
      static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(a));
  EXPECT_EQ(static_cast<int64_t>(io.get(1)), wrapped);
}

TEST(Scan, ChecksNameWhatIsWrong) {
  Buf x(DType::F32, {2, 3});
  Buf wrong(DType::F32, {2, 3}), idx(DType::I64, {2, 2}),
      vals(DType::F32, {2, 2});
  Call am = scanCall("arg_max", &x, {&wrong}, 1);
  am.attrs.setInt("keepdims", 1);
  am.attrs.setInt("select_last_index", 0);
  EXPECT_NE(am.check().message().find("output"), std::string::npos)
      << am.check().message();
  Call axis = scanCall("cumsum", &x, {&wrong}, 2);
  axis.attrs.setInt("exclusive", 0);
  axis.attrs.setInt("reverse", 0);
  EXPECT_NE(axis.check().message().find("'axis' 2 is out of range"),
            std::string::npos)
      << axis.check().message();
  Call big = scanCall("top_k", &x, {&vals, &idx}, 1);
  big.attrs.setInt("k", 4);
  big.attrs.setInt("largest", 1);
  EXPECT_EQ(big.check().message(),
            "op 'top_k': k = 4 is not in [0, 3], the size of axis 1");
  Buf empty(DType::F32, {2, 0}), eo(DType::I64, {2, 1});
  Call none = scanCall("arg_max", &empty, {&eo}, 1);
  none.attrs.setInt("keepdims", 1);
  none.attrs.setInt("select_last_index", 0);
  EXPECT_NE(none.check().message().find("is empty"), std::string::npos)
      << none.check().message();
}

} // namespace
