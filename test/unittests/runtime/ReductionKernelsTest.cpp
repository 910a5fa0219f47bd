//===- ReductionKernelsTest.cpp - reductions, softmax and losses ----------===//
//
// reduce_sum/mean/max over every axis pattern in float and integer dtypes,
// softmax/log_softmax on inputs large enough to overflow a naive exp, and
// softmax_cross_entropy / nll_loss against ONNX's definitions (weights,
// ignore_index, every reduction), all against naive double loops; plus the
// out-of-range label error and every check() error.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kNumeric[] = {DType::F32, DType::F16, DType::BF16,
                          DType::F64, DType::I64, DType::I32};
const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

// Naive reduction: visits every input element once.
std::vector<double> refReduce(const Buf &x, const std::vector<int64_t> &axes,
                              const std::string &op, Shape &outShape,
                              bool keep) {
  const Shape &s = x.shape;
  outShape.clear();
  Shape full; // the output shape with reduced dims kept as 1
  for (size_t i = 0; i < s.size(); ++i) {
    bool red = std::find(axes.begin(), axes.end(), (int64_t)i) != axes.end();
    full.push_back(red ? 1 : s[i]);
    if (!red || keep)
      outShape.push_back(red ? 1 : s[i]);
  }
  int64_t outN = numElements(full),
          count = x.size() / std::max<int64_t>(outN, 1);
  bool isMax = op == "reduce_max";
  std::vector<double> acc(outN, isMax ? -std::numeric_limits<double>::infinity()
                                      : 0.0);
  std::vector<bool> nan(outN, false);
  for (int64_t flat = 0; flat < x.size(); ++flat) {
    int64_t rem = flat, o = 0, stride = 1;
    for (size_t i = s.size(); i-- > 0;) {
      int64_t c = rem % s[i];
      rem /= s[i];
      o += (full[i] == 1 ? 0 : c) * stride;
      stride *= full[i];
    }
    double v = x.get(flat);
    if (isMax) {
      nan[o] = nan[o] || std::isnan(v);
      acc[o] = std::max(acc[o], v);
    } else {
      acc[o] += v;
    }
  }
  for (int64_t o = 0; o < outN; ++o) {
    if (nan[o])
      acc[o] = NAN;
    if (op == "reduce_mean")
      acc[o] = isInt(x.dtype) ? std::trunc(acc[o] / count) : acc[o] / count;
  }
  return acc;
}

Call reduceCall(const std::string &op, Buf *x, Buf *out,
                std::vector<int64_t> axes, std::optional<bool> keep) {
  Call c{op, {}, {x}, {out}};
  c.attrs.setInts("axes", axes);
  if (keep)
    c.attrs.setInt("keepdims", *keep);
  return c;
}

class ReduceTest : public ::testing::TestWithParam<DType> {};

TEST_P(ReduceTest, EveryAxisPattern) {
  DType t = GetParam();
  Shape shape{3, 4, 5, 6};
  std::vector<std::vector<int64_t>> axesList = {
      {3},    {0},    {1},       {0, 1},       {2, 3},
      {0, 2}, {1, 3}, {0, 2, 3}, {0, 1, 2, 3}, {1, 2}};
  uint32_t seed = 1;
  for (const std::string op : {"reduce_sum", "reduce_mean", "reduce_max"})
    for (const auto &axes : axesList)
      for (bool keep : {true, false}) {
        Buf x = randomBuf(t, shape, seed++);
        Shape os;
        std::vector<double> ref = refReduce(x, axes, op, os, keep);
        Buf out(t, os);
        Call c = reduceCall(op, &x, &out, axes, keep);
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        std::string what = op + " axes " + str(axes);
        if (isInt(t))
          EXPECT_EQ(out.values(), ref) << what;
        else
          expectNear(out, ref, relTol(t) * 8, relTol(t), what);
      }
}

INSTANTIATE_TEST_SUITE_P(Numeric, ReduceTest, ::testing::ValuesIn(kNumeric),
                         dtypeName);

TEST(Reduce, LargeShapesAndThreads) {
  // Row case with long rows, vector case with many columns, size-1 dims.
  struct RC {
    Shape s;
    std::vector<int64_t> axes;
  };
  for (RC rc : {RC{{64, 3000}, {1}}, RC{{300, 5000}, {0}},
                RC{{7, 1, 2050, 3}, {0, 3}}, RC{{2, 1, 3}, {1}}})
    for (DType t : {DType::F32, DType::F16}) {
      Buf x = randomBuf(t, rc.s, 99);
      Shape os;
      std::vector<double> ref = refReduce(x, rc.axes, "reduce_sum", os, false);
      Buf out(t, os);
      ASSERT_TRUE(reduceCall("reduce_sum", &x, &out, rc.axes, false)
                      .run(&testPool())
                      .isOk());
      int64_t count = x.size() / out.size();
      expectNear(out, ref, 1e-5 * std::sqrt((double)count) + relTol(t),
                 relTol(t), "sum " + str(rc.s));
    }
}

TEST(Reduce, F16SumAccumulatesInF32) {
  // 2048 + 1 + 1 is 2050 with f32 accumulation (f16 steps would stay 2048).
  Buf x = makeBuf(DType::F16, {3}, {2048, 1, 1});
  Buf out(DType::F16, {});
  ASSERT_TRUE(reduceCall("reduce_sum", &x, &out, {0}, false).run().isOk());
  EXPECT_EQ(out.get(0), 2050.0);
  // A sum beyond f16's range becomes inf only when stored.
  Buf y = makeBuf(DType::F16, {2, 2}, {60000, 60000, 60000, -60000});
  Buf o2(DType::F16, {2, 1});
  ASSERT_TRUE(reduceCall("reduce_mean", &y, &o2, {1}, true).run().isOk());
  EXPECT_EQ(o2.get(0), 60000.0);
  EXPECT_EQ(o2.get(1), 0.0);
}

TEST(Reduce, MaxPropagatesNaNAndNeedsKeepdims) {
  std::vector<double> v(40, 1.0);
  v[37] = NAN;
  v[5] = 7;
  Buf x = makeBuf(DType::F32, {2, 20}, v);
  Buf out(DType::F32, {2, 1});
  expectError(reduceCall("reduce_max", &x, &out, {1}, std::nullopt).check(),
              "attribute 'keepdims' is missing");
  ASSERT_TRUE(reduceCall("reduce_max", &x, &out, {1}, true).run().isOk());
  EXPECT_EQ(out.get(0), 7.0);
  EXPECT_TRUE(std::isnan(out.get(1)));
  Buf o0(DType::F32, {20});
  ASSERT_TRUE(reduceCall("reduce_max", &x, &o0, {0}, false).run().isOk());
  EXPECT_TRUE(std::isnan(o0.get(17)));
  EXPECT_EQ(o0.get(5), 7.0);
}

TEST(Reduce, EmptyReductionGivesIdentity) {
  Buf x(DType::F32, {3, 0}), out(DType::F32, {3});
  ASSERT_TRUE(reduceCall("reduce_sum", &x, &out, {1}, false).run().isOk());
  EXPECT_EQ(out.values(), (std::vector<double>{0, 0, 0}));
  ASSERT_TRUE(reduceCall("reduce_max", &x, &out, {1}, false).run().isOk());
  EXPECT_TRUE(std::isinf(out.get(0)) && out.get(0) < 0);
}

TEST(Reduce, CheckErrors) {
  Buf x(DType::F32, {2, 3}), o(DType::F32, {2, 1}), o2(DType::F32, {2}),
      oH(DType::F16, {2, 1}), xb(DType::I1, {2, 3}), ob(DType::I1, {2, 1});
  expectError(reduceCall("reduce_sum", &x, &o, {2}, true).check(),
              "reduction axis 2 is out of range for rank 2");
  expectError(reduceCall("reduce_sum", &x, &o, {-1}, true).check(),
              "reduction axis -1 is out of range");
  expectError(reduceCall("reduce_sum", &x, &o, {1, 1}, true).check(),
              "reduction axis 1 is repeated");
  expectError(reduceCall("reduce_mean", &x, &o, {}, true).check(),
              "attribute 'axes' is empty");
  expectError(reduceCall("reduce_max", &x, &o2, {1}, true).check(),
              "output has shape [2] but the op computes [2, 1]");
  expectError(reduceCall("reduce_max", &x, &oH, {1}, true).check(),
              "output has element type f16 but the op computes f32");
  expectError(reduceCall("reduce_sum", &xb, &ob, {1}, true).check(),
              "input must be a float or i64/i32 tensor");
  Call noAxes{"reduce_sum", reduceAttrs(), {&x}, {&o}};
  expectError(noAxes.check(), "attribute 'axes' is missing");
  Call badKeep = reduceCall("reduce_sum", &x, &o, {1}, true);
  badKeep.attrs.setString("keepdims", "yes");
  expectError(badKeep.check(), "attribute 'keepdims' must be an integer");
  EXPECT_TRUE(reduceCall("reduce_sum", &x, &o2, {1}, false).check().isOk());
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax
//===----------------------------------------------------------------------===//

std::vector<double> refSoftmax(const Buf &x, int64_t axis, bool log) {
  int64_t outer = 1, inner = 1, len = x.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= x.shape[i];
  for (size_t i = axis + 1; i < x.shape.size(); ++i)
    inner *= x.shape[i];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      double m = -INFINITY, s = 0;
      for (int64_t a = 0; a < len; ++a)
        m = std::max(m, x.get((o * len + a) * inner + j));
      for (int64_t a = 0; a < len; ++a)
        s += std::exp(x.get((o * len + a) * inner + j) - m);
      for (int64_t a = 0; a < len; ++a) {
        double d = x.get((o * len + a) * inner + j) - m;
        y[(o * len + a) * inner + j] = log ? d - std::log(s) : std::exp(d) / s;
      }
    }
  return y;
}

class SoftmaxTest : public ::testing::TestWithParam<DType> {};

TEST_P(SoftmaxTest, EveryAxisAndLargeMagnitudes) {
  DType t = GetParam();
  Shape s{3, 5, 300};
  uint32_t seed = 3;
  for (bool log : {false, true})
    for (int64_t axis = 0; axis < 3; ++axis)
      for (double scale : {1.0, 1e4}) {
        // Scores up to +-1e4 (f16 up to its range) overflow a naive exp.
        Buf x = randomBuf(t, s, seed++, -scale, scale);
        Buf y(t, s);
        Call c{log ? "log_softmax" : "softmax", {}, {&x}, {&y}};
        c.attrs.setInt("axis", axis);
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        std::vector<double> ref = refSoftmax(x, axis, log);
        for (int64_t i = 0; i < y.size(); ++i)
          ASSERT_TRUE(std::isfinite(y.get(i)) || std::isinf(ref[i]))
              << "element " << i << " is " << y.get(i);
        // log_softmax values reach -2e4: the relative tolerance covers them.
        expectNear(y, ref, relTol(t) * 2, relTol(t) * 2,
                   std::string(log ? "log_softmax" : "softmax") + " axis " +
                       std::to_string(axis) + " scale " +
                       std::to_string(scale));
      }
}

INSTANTIATE_TEST_SUITE_P(Floats, SoftmaxTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(Softmax, HandComputedStability) {
  Buf x = makeBuf(DType::F32, {1, 3}, {1000, 1000, -1000});
  Buf y(DType::F32, {1, 3});
  Call c{"softmax", {}, {&x}, {&y}};
  c.attrs.setInt("axis", 1);
  ASSERT_TRUE(c.run().isOk());
  EXPECT_EQ(y.values(), (std::vector<double>{0.5, 0.5, 0}));
  Call l{"log_softmax", {}, {&x}, {&y}};
  l.attrs.setInt("axis", 1);
  ASSERT_TRUE(l.run().isOk());
  EXPECT_FLOAT_EQ(y.get(0), -std::log(2.0f));
  EXPECT_FLOAT_EQ(y.get(2), -2000 - std::log(2.0f));
}

TEST(Softmax, CheckErrors) {
  Buf x(DType::F32, {2, 3}), y(DType::F32, {2, 3}), yH(DType::F16, {2, 3}),
      xi(DType::I64, {2, 3});
  Call c{"softmax", {}, {&x}, {&y}};
  expectError(c.check(), "attribute 'axis' is missing");
  c.attrs.setInt("axis", 2);
  expectError(c.check(), "attribute 'axis' 2 is out of range [0, 2)");
  c.attrs.setInt("axis", -1);
  expectError(c.check(), "attribute 'axis' -1 is out of range");
  Call h{"log_softmax", {}, {&x}, {&yH}};
  h.attrs.setInt("axis", 1);
  expectError(h.check(), "output has element type f16 but the op computes f32");
  Call i{"softmax", {}, {&xi}, {&xi}};
  i.attrs.setInt("axis", 1);
  expectError(i.check(), "input must be f32, f16, bf16 or f64");
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy / nll_loss
//===----------------------------------------------------------------------===//

struct LossRef {
  std::vector<double> perElement; // [N, d...]
  double reduced = 0;
};

// ONNX NegativeLogLikelihoodLoss on log-probabilities `lp` [N, C, D].
LossRef refNll(const std::vector<double> &lp, const Buf &labels, int64_t n,
               int64_t c, int64_t d, const Buf *w,
               std::optional<int64_t> ignore, const std::string &reduction) {
  LossRef r;
  double sum = 0, wsum = 0;
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < d; ++j) {
      int64_t l = static_cast<int64_t>(labels.get(i * d + j));
      if (ignore && l == *ignore) {
        r.perElement.push_back(0);
        continue;
      }
      double wt = w ? w->get(l) : 1.0;
      double v = -lp[(i * c + l) * d + j] * wt;
      r.perElement.push_back(v);
      sum += v;
      wsum += wt;
    }
  r.reduced = reduction == "sum" ? sum : sum / wsum;
  return r;
}

Call lossCall(const std::string &op, std::vector<Buf *> ins,
              std::vector<Buf *> outs, const std::string &reduction,
              std::optional<int64_t> ignore) {
  Call c{op, {}, std::move(ins), std::move(outs)};
  c.attrs.setString("reduction", reduction);
  if (ignore)
    c.attrs.setInt("ignore_index", *ignore);
  return c;
}

class LossTest : public ::testing::TestWithParam<DType> {};

TEST_P(LossTest, SoftmaxCrossEntropyAndNll) {
  DType t = GetParam();
  const int64_t n = 3, c = 5;
  uint32_t seed = 50;
  for (Shape extra : {Shape{}, Shape{4}, Shape{2, 700}})
    for (DType labelT : {DType::I64, DType::I32})
      for (std::optional<int64_t> ignore :
           {std::optional<int64_t>(), std::optional<int64_t>(2),
            std::optional<int64_t>(-100)})
        for (bool weighted : {false, true})
          for (std::string reduction : {"none", "sum", "mean"}) {
            Shape xs{n, c}, ls{n};
            xs.insert(xs.end(), extra.begin(), extra.end());
            ls.insert(ls.end(), extra.begin(), extra.end());
            int64_t d = numElements(extra);
            Buf scores = randomBuf(t, xs, seed++, -4, 4);
            Buf labels(labelT, ls);
            std::mt19937 rng(seed++);
            for (int64_t i = 0; i < labels.size(); ++i) {
              int64_t l = rng() % c;
              if (ignore && *ignore < 0 && rng() % 4 == 0)
                l = *ignore; // an ignore_index outside [0, C) is fine
              labels.set(i, l);
            }
            Buf weights = randomBuf(t, {c}, seed++, 0.5, 2);
            Buf *w = weighted ? &weights : nullptr;
            Buf loss(t, reduction == "none" ? ls : Shape{}), logProb(t, xs);
            Call sce = lossCall("softmax_cross_entropy", {&scores, &labels, w},
                                {&loss, &logProb}, reduction, ignore);
            ASSERT_TRUE(sce.run(&testPool()).isOk()) << sce.run().message();
            std::vector<double> lp = refSoftmax(scores, 1, true);
            LossRef ref = refNll(lp, labels, n, c, d, w, ignore, reduction);
            std::string what =
                "sce " + str(xs) + " " + reduction +
                (weighted ? " weighted" : "") +
                (ignore ? " ignore " + std::to_string(*ignore) : "");
            expectNear(logProb, lp, relTol(t) * 8, relTol(t),
                       what + " log_prob");
            if (reduction == "none")
              expectNear(loss, ref.perElement, relTol(t) * 8, relTol(t), what);
            else
              expectNear(loss, {ref.reduced}, relTol(t) * 8, relTol(t) * 2,
                         what);

            // nll_loss on the log-probabilities just computed.
            Buf nllLoss(t, reduction == "none" ? ls : Shape{});
            Call nll = lossCall("nll_loss", {&logProb, &labels, w}, {&nllLoss},
                                reduction, ignore);
            ASSERT_TRUE(nll.run(&testPool()).isOk()) << nll.run().message();
            LossRef nref =
                refNll(logProb.values(), labels, n, c, d, w, ignore, reduction);
            if (reduction == "none")
              expectNear(nllLoss, nref.perElement, relTol(t) * 8, relTol(t),
                         "nll " + what);
            else
              expectNear(nllLoss, {nref.reduced}, relTol(t) * 8, relTol(t) * 2,
                         "nll " + what);
          }
}

INSTANTIATE_TEST_SUITE_P(Floats, LossTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(SoftmaxCrossEntropy, HandComputedWeightedMean) {
  // Two samples, two classes, equal scores: every log_prob is -log 2.
  // Labels 0 and 1, weights 1 and 3: mean = (1 + 3) log 2 / (1 + 3).
  Buf scores = makeBuf(DType::F32, {2, 2}, {0, 0, 5, 5});
  Buf labels = makeBuf(DType::I64, {2}, {0, 1});
  Buf w = makeBuf(DType::F32, {2}, {1, 3});
  Buf loss(DType::F32, {}), lp(DType::F32, {2, 2});
  ASSERT_TRUE(lossCall("softmax_cross_entropy", {&scores, &labels, &w},
                       {&loss, &lp}, "mean", std::nullopt)
                  .run()
                  .isOk());
  EXPECT_FLOAT_EQ(loss.get(0), std::log(2.0f));
  ASSERT_TRUE(lossCall("softmax_cross_entropy", {&scores, &labels, &w},
                       {&loss, &lp}, "sum", std::nullopt)
                  .run()
                  .isOk());
  EXPECT_FLOAT_EQ(loss.get(0), 4 * std::log(2.0f));
  // Ignoring label 1: only sample 0 counts, weight 1.
  ASSERT_TRUE(lossCall("softmax_cross_entropy", {&scores, &labels, &w},
                       {&loss, &lp}, "mean", 1)
                  .run()
                  .isOk());
  EXPECT_FLOAT_EQ(loss.get(0), std::log(2.0f));
  // Every label ignored: mean is 0 / 0.
  Buf ign = makeBuf(DType::I64, {2}, {1, 1});
  ASSERT_TRUE(lossCall("softmax_cross_entropy", {&scores, &ign, &w},
                       {&loss, &lp}, "mean", 1)
                  .run()
                  .isOk());
  EXPECT_TRUE(std::isnan(loss.get(0)));
  // The runtime has no default reduction: the compiler writes ONNX's mean.
  Call absent{
      "softmax_cross_entropy", {}, {&scores, &labels, nullptr}, {&loss, &lp}};
  expectError(absent.check(), "attribute 'reduction' is missing");
}

TEST(SoftmaxCrossEntropy, LabelOutOfRangeIsAnError) {
  Buf scores = randomBuf(DType::F32, {2, 3, 2}, 1);
  Buf labels = makeBuf(DType::I32, {2, 2}, {0, 2, 7, 1});
  Buf loss(DType::F32, {}), lp(DType::F32, {2, 3, 2});
  Status s = lossCall("softmax_cross_entropy", {&scores, &labels}, {&loss, &lp},
                      "mean", std::nullopt)
                 .run();
  expectError(s, "label 7 at index 2 is out of range for 3 classes");
  EXPECT_NE(s.message().find("op 'softmax_cross_entropy'"), std::string::npos);
  Buf neg = makeBuf(DType::I64, {2, 2}, {0, -1, 1, 1});
  expectError(lossCall("nll_loss", {&lp, &neg}, {&loss}, "sum", -100).run(),
              "label -1 at index 1 is out of range for 3 classes [0, 3) and "
              "is not ignore_index -100");
  // Label == C is out of range too.
  Buf eq = makeBuf(DType::I64, {2, 2}, {3, 0, 0, 0});
  expectError(
      lossCall("nll_loss", {&lp, &eq}, {&loss}, "sum", std::nullopt).run(),
      "label 3 at index 0");
}

TEST(Losses, CheckErrors) {
  Buf x(DType::F32, {4, 3, 2}), lab(DType::I64, {4, 2}), w(DType::F32, {3}),
      lp(DType::F32, {4, 3, 2}), scalar(DType::F32, {}),
      none(DType::F32, {4, 2}), labF(DType::F32, {4, 2}),
      labBad(DType::I64, {4, 3}), wH(DType::F16, {3}), w4(DType::F32, {4}),
      x1(DType::F32, {4});
  auto sce = [&](std::vector<Buf *> ins, std::vector<Buf *> outs,
                 const std::string &red) {
    return lossCall("softmax_cross_entropy", std::move(ins), std::move(outs),
                    red, std::nullopt);
  };
  EXPECT_TRUE(sce({&x, &lab, &w}, {&scalar, &lp}, "mean").check().isOk());
  EXPECT_TRUE(sce({&x, &lab, &w}, {&none, &lp}, "none").check().isOk());
  expectError(sce({&x, &lab}, {&scalar, &lp}, "avg").check(),
              "attribute 'reduction' must be \"none\", \"sum\" or \"mean\"");
  expectError(sce({&x, &lab}, {&none, &lp}, "sum").check(),
              "loss has shape [4, 2] but the op computes []");
  expectError(sce({&x, &lab}, {&scalar, &lp}, "none").check(),
              "loss has shape [] but the op computes [4, 2]");
  expectError(sce({&x, &labF}, {&scalar, &lp}, "sum").check(),
              "labels must be i64 or i32");
  expectError(sce({&x, &labBad}, {&scalar, &lp}, "sum").check(),
              "labels [4, 3] must have shape [4, 2]");
  expectError(sce({&x, &lab, &wH}, {&scalar, &lp}, "sum").check(),
              "weights has element type f16 but scores has f32");
  expectError(sce({&x, &lab, &w4}, {&scalar, &lp}, "sum").check(),
              "weights must have shape [3], got [4]");
  expectError(sce({&x1, &lab}, {&scalar, &lp}, "sum").check(), "rank >= 2");
  expectError(sce({&x, &lab}, {&scalar}, "sum").check(), "expects 2 outputs");
  expectError(sce({&x, &lab}, {&scalar, &none}, "sum").check(),
              "log_prob has shape [4, 2]");
  Call badIgnore = sce({&x, &lab}, {&scalar, &lp}, "sum");
  badIgnore.attrs.setFloat("ignore_index", 1.0);
  expectError(badIgnore.check(), "attribute 'ignore_index' must be an integer");
  expectError(
      lossCall("nll_loss", {&x, &labBad}, {&scalar}, "sum", std::nullopt)
          .check(),
      "target [4, 3] must have shape [4, 2] for input [4, 3, 2]");
  expectError(
      lossCall("nll_loss", {&x, &lab, &w4}, {&scalar}, "sum", std::nullopt)
          .check(),
      "weight must have shape [3]");
  expectError(
      lossCall("nll_loss", {&x, &lab}, {&scalar, &lp}, "sum", 0).check(),
      "expects 1 outputs");
}

} // namespace
