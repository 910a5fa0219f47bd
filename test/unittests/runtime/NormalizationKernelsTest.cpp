//===- NormalizationKernelsTest.cpp - batch norm and layer norm -----------===//
//
// Against naive double loops over the stored values: batch norm inference
// and training (running statistics with the biased variance, as ONNX), layer norm
// with and without bias and with broadcast scales, in every float dtype and
// with f32 statistics beside low-precision data, plus the check() errors.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

Call bnCall(const std::string &op, std::vector<Buf *> ins,
            std::vector<Buf *> outs, double eps, double momentum) {
  Call c{op, {}, std::move(ins), std::move(outs)};
  c.attrs.setFloat("epsilon", eps);
  if (op == "batch_norm_training")
    c.attrs.setFloat("momentum", momentum);
  return c;
}

struct BNData {
  Buf x, scale, bias, mean, var;
};

BNData makeBN(DType t, DType statT, Shape s, uint32_t seed) {
  int64_t c = s[1];
  BNData d;
  d.x = randomBuf(t, s, seed, -2, 3);
  d.scale = randomBuf(statT, {c}, seed + 1, 0.5, 1.5);
  d.bias = randomBuf(statT, {c}, seed + 2);
  d.mean = randomBuf(statT, {c}, seed + 3);
  d.var = randomBuf(statT, {c}, seed + 4, 0.5, 2);
  return d;
}

// Per channel mean and biased variance of x over every axis but 1.
void channelStats(const Buf &x, std::vector<double> &mean,
                  std::vector<double> &var) {
  int64_t n = x.shape[0], c = x.shape[1], inner = x.size() / (n * c);
  mean.assign(c, 0);
  var.assign(c, 0);
  for (int64_t ch = 0; ch < c; ++ch) {
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k)
        mean[ch] += x.get((i * c + ch) * inner + k);
    mean[ch] /= n * inner;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t k = 0; k < inner; ++k) {
        double dv = x.get((i * c + ch) * inner + k) - mean[ch];
        var[ch] += dv * dv;
      }
    var[ch] /= n * inner;
  }
}

std::vector<double> refBN(const BNData &d, const std::vector<double> &mean,
                          const std::vector<double> &var, double eps) {
  int64_t n = d.x.shape[0], c = d.x.shape[1], inner = d.x.size() / (n * c);
  std::vector<double> y(d.x.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t k = 0; k < inner; ++k) {
        int64_t idx = (i * c + ch) * inner + k;
        y[idx] = d.scale.get(ch) * (d.x.get(idx) - mean[ch]) /
                     std::sqrt(var[ch] + eps) +
                 d.bias.get(ch);
      }
  return y;
}

class BatchNormTest : public ::testing::TestWithParam<DType> {};

TEST_P(BatchNormTest, Inference) {
  DType t = GetParam();
  for (DType statT : {t, DType::F32})
    for (Shape s : {Shape{2, 3}, Shape{2, 3, 5}, Shape{3, 4, 5, 6}}) {
      BNData d = makeBN(t, statT, s, 3);
      Buf y(t, s);
      Call c =
          bnCall("batch_norm_inference",
                 {&d.x, &d.scale, &d.bias, &d.mean, &d.var}, {&y}, 1e-3, 0);
      ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
      expectNear(y, refBN(d, d.mean.values(), d.var.values(), 1e-3),
                 relTol(t) * 4, relTol(t), "bn inference " + str(s));
    }
}

TEST_P(BatchNormTest, TrainingOutputsAndRunningStats) {
  DType t = GetParam();
  const double eps = 1e-5, momentum = 0.9;
  for (DType statT : {t, DType::F32})
    for (Shape s : {Shape{4, 3}, Shape{2, 3, 5}, Shape{3, 5, 7, 6}}) {
      BNData d = makeBN(t, statT, s, 17);
      int64_t c = s[1];
      Buf y(t, s), rm(statT, {c}), rv(statT, {c}), bm(statT, {c}),
          bis(statT, {c});
      Call call = bnCall("batch_norm_training",
                         {&d.x, &d.scale, &d.bias, &d.mean, &d.var},
                         {&y, &rm, &rv, &bm, &bis}, eps, momentum);
      ASSERT_TRUE(call.run(&testPool()).isOk()) << call.run().message();
      std::vector<double> mean, var;
      channelStats(d.x, mean, var);
      std::vector<double> refRm, refRv, refIs;
      for (int64_t ch = 0; ch < c; ++ch) {
        refRm.push_back(d.mean.get(ch) * momentum + mean[ch] * (1 - momentum));
        refRv.push_back(d.var.get(ch) * momentum +
                        var[ch] * (1 - momentum));
        refIs.push_back(1 / std::sqrt(var[ch] + eps));
      }
      double st = relTol(statT);
      expectNear(y, refBN(d, mean, var, eps), relTol(t) * 4, relTol(t),
                 "bn training output " + str(s));
      expectNear(rm, refRm, st, st, "new_running_mean");
      expectNear(rv, refRv, st, st, "new_running_var");
      expectNear(bm, mean, st, st, "batch_mean");
      expectNear(bis, refIs, st, st, "batch_inv_std");
    }
}

INSTANTIATE_TEST_SUITE_P(Floats, BatchNormTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(BatchNorm, TrainingHandComputed) {
  // One channel, values 1, 2, 3, 4: mean 2.5, biased var 1.25 (ONNX updates
  // the running variance with it); momentum 0.5, running mean 0 and var 1.
  Buf x = makeBuf(DType::F32, {4, 1}, {1, 2, 3, 4});
  Buf one = makeBuf(DType::F32, {1}, {1}), zero = makeBuf(DType::F32, {1}, {0});
  Buf y(DType::F32, {4, 1}), rm(DType::F32, {1}), rv(DType::F32, {1}),
      bm(DType::F32, {1}), bis(DType::F32, {1});
  Call c = bnCall("batch_norm_training", {&x, &one, &zero, &zero, &one},
                  {&y, &rm, &rv, &bm, &bis}, 0.0, 0.5);
  ASSERT_TRUE(c.run().isOk()) << c.run().message();
  EXPECT_FLOAT_EQ(rm.get(0), 1.25f);
  EXPECT_FLOAT_EQ(rv.get(0), 0.5f + 1.25f / 2.0f);
  EXPECT_FLOAT_EQ(bm.get(0), 2.5f);
  EXPECT_FLOAT_EQ(bis.get(0), 1.0f / std::sqrt(1.25f));
  EXPECT_NEAR(y.get(0), -1.5 / std::sqrt(1.25), 1e-6);
  EXPECT_NEAR(y.get(3), 1.5 / std::sqrt(1.25), 1e-6);
}

TEST(BatchNorm, CheckErrors) {
  Buf x(DType::F32, {2, 3, 4}), v3(DType::F32, {3}), v4(DType::F32, {4}),
      v3h(DType::F16, {3}), y(DType::F32, {2, 3, 4}), x1(DType::F32, {3}),
      yBad(DType::F32, {2, 3, 5}), xi(DType::I64, {2, 3, 4});
  auto inf = [&](std::vector<Buf *> ins, Buf *out) {
    return bnCall("batch_norm_inference", std::move(ins), {out}, 1e-5, 0);
  };
  expectError(inf({&x, &v3, &v4, &v3, &v3}, &y).check(),
              "bias must have shape [3], got [4]");
  expectError(inf({&x, &v3, &v3, &v3h, &v3}, &y).check(),
              "mean has element type f16 but scale has f32");
  expectError(inf({&x1, &v3, &v3, &v3, &v3}, &y).check(), "rank >= 2");
  expectError(inf({&xi, &v3, &v3, &v3, &v3}, &y).check(),
              "input must be f32, f16, bf16 or f64");
  expectError(inf({&x, &v3, &v3, &v3, &v3}, &yBad).check(),
              "output has shape [2, 3, 5]");
  expectError(inf({&x, &v3, &v3, &v3}, &y).check(), "expects 5 inputs");
  Call negEps = inf({&x, &v3, &v3, &v3, &v3}, &y);
  negEps.attrs.setFloat("epsilon", -1);
  expectError(negEps.check(), "attribute 'epsilon' must be >= 0");
  Call noEps{"batch_norm_inference", {}, {&x, &v3, &v3, &v3, &v3}, {&y}};
  expectError(noEps.check(), "attribute 'epsilon' is missing");
  EXPECT_TRUE(inf({&x, &v3h, &v3h, &v3h, &v3h}, &y).check().isOk());

  Buf s1(DType::F32, {3}), s2(DType::F32, {3}), s3(DType::F32, {3}),
      s4(DType::F32, {3}), s4h(DType::F16, {3}), s4w(DType::F32, {4});
  auto train = [&](Buf *last, double momentum) {
    return bnCall("batch_norm_training", {&x, &v3, &v3, &v3, &v3},
                  {&y, &s1, &s2, &s3, last}, 1e-5, momentum);
  };
  EXPECT_TRUE(train(&s4, 0.9).check().isOk());
  expectError(train(&s4, 1.5).check(),
              "attribute 'momentum' must be in [0, 1]");
  expectError(train(&s4h, 0.9).check(),
              "batch_inv_std has element type f16 but the op computes f32");
  expectError(train(&s4w, 0.9).check(), "batch_inv_std has shape [4]");
  Call noMom{"batch_norm_training",
             {},
             {&x, &v3, &v3, &v3, &v3},
             {&y, &s1, &s2, &s3, &s4}};
  noMom.attrs.setFloat("epsilon", 1e-5);
  expectError(noMom.check(), "attribute 'momentum' is missing");
  Buf xNone(DType::F32, {0, 3}), yNone(DType::F32, {0, 3});
  expectError(bnCall("batch_norm_training", {&xNone, &v3, &v3, &v3, &v3},
                     {&yNone, &s1, &s2, &s3, &s4}, 1e-5, 0.9)
                  .check(),
              "has no values per channel");
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

Call lnCall(std::vector<Buf *> ins, std::vector<Buf *> outs, int64_t axis,
            double eps) {
  Call c{"layer_norm", {}, std::move(ins), std::move(outs)};
  c.attrs.setInt("axis", axis);
  c.attrs.setFloat("epsilon", eps);
  return c;
}

// Flat index into a tensor of shape `from` broadcast to `to`.
int64_t bcastIndex(const Shape &from, const Shape &to, int64_t flat) {
  int64_t idx = 0, stride = 1;
  for (size_t i = to.size(); i-- > 0;) {
    int64_t coord = flat % to[i];
    flat /= to[i];
    size_t off = to.size() - from.size();
    if (i >= off) {
      int64_t d = from[i - off];
      if (d != 1)
        idx += coord * stride;
      stride *= d;
    }
  }
  return idx;
}

class LayerNormTest : public ::testing::TestWithParam<DType> {};

TEST_P(LayerNormTest, MatchesNaive) {
  DType t = GetParam();
  struct LC {
    Shape x;
    int64_t axis;
    Shape scale;
    bool bias;
  };
  std::vector<LC> cases = {
      {{4, 8}, 1, {8}, true},          {{2, 3, 16}, 2, {16}, false},
      {{2, 3, 4, 5}, 2, {4, 5}, true}, {{2, 3, 4, 5}, 1, {4, 1}, true},
      {{3, 7}, 0, {7}, true},          {{5, 33, 65}, 1, {33, 65}, true},
  };
  const double eps = 1e-5;
  uint32_t seed = 5;
  for (DType scaleT : {t, DType::F32})
    for (const LC &lc : cases) {
      Buf x = randomBuf(t, lc.x, seed++, -3, 5);
      Buf scale = randomBuf(scaleT, lc.scale, seed++, 0.5, 1.5);
      Buf bias = randomBuf(scaleT, lc.scale, seed++);
      Shape stat = lc.x;
      std::fill(stat.begin() + lc.axis, stat.end(), 1);
      DType statT = t == DType::F64 ? DType::F64 : DType::F32;
      Buf y(t, lc.x), mean(statT, stat), inv(statT, stat);
      Call c = lnCall({&x, &scale, lc.bias ? &bias : nullptr},
                      {&y, &mean, &inv}, lc.axis, eps);
      ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
      Shape norm(lc.x.begin() + lc.axis, lc.x.end());
      int64_t d = numElements(norm), rows = x.size() / d;
      std::vector<double> ry, rm, ri;
      for (int64_t r = 0; r < rows; ++r) {
        double m = 0, v = 0;
        for (int64_t k = 0; k < d; ++k)
          m += x.get(r * d + k);
        m /= d;
        for (int64_t k = 0; k < d; ++k)
          v += (x.get(r * d + k) - m) * (x.get(r * d + k) - m);
        v /= d;
        double is = 1 / std::sqrt(v + eps);
        rm.push_back(m);
        ri.push_back(is);
        for (int64_t k = 0; k < d; ++k)
          ry.push_back((x.get(r * d + k) - m) * is *
                           scale.get(bcastIndex(lc.scale, norm, k)) +
                       (lc.bias ? bias.get(bcastIndex(lc.scale, norm, k)) : 0));
      }
      std::string what =
          "layer_norm " + str(lc.x) + " axis " + std::to_string(lc.axis);
      expectNear(y, ry, relTol(t) * 8, relTol(t), what + " output");
      expectNear(mean, rm, relTol(statT), relTol(statT), what + " mean");
      expectNear(inv, ri, relTol(statT), relTol(statT), what + " inv_std");
    }
}

INSTANTIATE_TEST_SUITE_P(Floats, LayerNormTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(LayerNorm, LargeOffsetKeepsVariance) {
  // A mean of 1e4 and spread of 1: a one-pass sum of squares in f32 would
  // lose the variance entirely.
  std::vector<double> v;
  for (int i = 0; i < 64; ++i)
    v.push_back(10000 + (i % 2 ? 1 : -1));
  Buf x = makeBuf(DType::F32, {1, 64}, v);
  Buf scale = makeBuf(DType::F32, {64}, std::vector<double>(64, 1.0));
  Buf y(DType::F32, {1, 64}), m(DType::F32, {1, 1}), is(DType::F32, {1, 1});
  ASSERT_TRUE(lnCall({&x, &scale}, {&y, &m, &is}, 1, 0.0).run().isOk());
  EXPECT_FLOAT_EQ(m.get(0), 10000.0f);
  EXPECT_FLOAT_EQ(is.get(0), 1.0f);
  EXPECT_FLOAT_EQ(y.get(0), -1.0f);
  EXPECT_FLOAT_EQ(y.get(1), 1.0f);
}

TEST(LayerNorm, CheckErrors) {
  Buf x(DType::F32, {2, 3, 4}), s4(DType::F32, {4}), s3(DType::F32, {3}),
      b4h(DType::F16, {4}), y(DType::F32, {2, 3, 4}), st(DType::F32, {2, 3, 1}),
      stH(DType::F16, {2, 3, 1}), stBad(DType::F32, {2, 1, 1});
  expectError(lnCall({&x, &s4}, {&y, &st, &st}, 3, 1e-5).check(),
              "attribute 'axis' 3 is out of range [0, 3)");
  expectError(lnCall({&x, &s4}, {&y, &st, &st}, -1, 1e-5).check(),
              "attribute 'axis' -1 is out of range");
  expectError(lnCall({&x, &s3}, {&y, &st, &st}, 2, 1e-5).check(),
              "scale [3] does not broadcast to the normalized shape [4]");
  expectError(lnCall({&x, &s4, &s3}, {&y, &st, &st}, 2, 1e-5).check(),
              "bias [3] does not broadcast");
  expectError(lnCall({&x, &s4, &b4h}, {&y, &st, &st}, 2, 1e-5).check(),
              "bias has element type f16 but scale has f32");
  expectError(lnCall({&x, &s4}, {&y, &stH, &st}, 2, 1e-5).check(),
              "mean has element type f16 but the op computes f32");
  expectError(lnCall({&x, &s4}, {&y, &st, &stBad}, 2, 1e-5).check(),
              "inv_std_dev has shape [2, 1, 1] but the op computes [2, 3, 1]");
  expectError(lnCall({&x, &s4}, {&y, &st}, 2, 1e-5).check(),
              "expects 3 outputs");
  expectError(lnCall({&x, &s4}, {&y, &st, &st}, 2, -1).check(),
              "attribute 'epsilon' must be >= 0");
  Call noAxis{"layer_norm", {}, {&x, &s4}, {&y, &st, &st}};
  noAxis.attrs.setFloat("epsilon", 1e-5);
  expectError(noAxis.check(), "attribute 'axis' is missing");
  noAxis.attrs.setFloat("axis", 2);
  expectError(noAxis.check(),
              "attribute 'axis' must be an integer, got a float");
  EXPECT_TRUE(lnCall({&x, &s4, &s4}, {&y, &st, &st}, 2, 1e-5).check().isOk());
}

} // namespace
