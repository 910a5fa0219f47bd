//===- NormLossGradKernelsTest.cpp - softmax, loss, max and norm gradients ===//
//
// softmax_grad, log_softmax_grad, softmax_cross_entropy_grad, nll_loss_grad,
// reduce_max_grad, batch_norm_grad and layer_norm_grad: in f64 against
// central finite differences of the forward kernels; in f32, f16 and bf16
// against the f64 kernel on the same stored values; hand-checked ties and
// ignored labels; thread-count independence; and the check() errors.
//
//===----------------------------------------------------------------------===//
#include "GradCheckUtil.h"

#include <algorithm>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

void runOk(const Call &c, cpu::ThreadPool *pool = nullptr) {
  Status s = c.run(pool);
  ASSERT_TRUE(s.isOk()) << c.op << ": " << s.message();
}

//===----------------------------------------------------------------------===//
// softmax_grad / log_softmax_grad
//===----------------------------------------------------------------------===//

TEST(SoftmaxGradKernels, MatchFiniteDifferencesOfTheForwardInF64) {
  uint32_t seed = 1;
  for (bool log : {false, true}) {
    const std::string fwdOp = log ? "log_softmax" : "softmax";
    for (Shape s : {Shape{6}, Shape{3, 5, 4}}) {
      for (int64_t axis = 0; axis < static_cast<int64_t>(s.size()); ++axis) {
        SCOPED_TRACE(fwdOp + " " + str(s) + " axis " + std::to_string(axis));
        Buf x = randomBuf(DType::F64, s, seed++, -3, 3);
        Buf dy = randomBuf(DType::F64, s, seed++, -2, 2);
        Buf y(DType::F64, s), dx(DType::F64, s);
        Call fwd{fwdOp, {}, {&x}, {&y}};
        fwd.attrs.setInt("axis", axis);
        runOk(fwd);
        Call grad{fwdOp + "_grad", {}, {&dy, &y}, {&dx}};
        grad.attrs.setInt("axis", axis);
        runOk(grad);
        expectMatchesNumeric(dx, numericGrad(fwd, x, dy), fwdOp);
      }
    }
  }
}

TEST(SoftmaxGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 50;
  for (DType t : kLowFloats)
    for (bool log : {false, true})
      for (int64_t axis : {1, 2}) {
        const std::string fwdOp = log ? "log_softmax" : "softmax";
        SCOPED_TRACE(fwdOp + " " + std::string(name(t)) + " axis " +
                     std::to_string(axis));
        Shape s{4, 33, 300}; // inner 300: more than one column chunk
        Buf x = randomBuf(t, s, seed++, -4, 4);
        Buf dy = randomBuf(t, s, seed++, -2, 2);
        Buf y(t, s), dx(t, s);
        Call fwd{fwdOp, {}, {&x}, {&y}};
        fwd.attrs.setInt("axis", axis);
        runOk(fwd);
        Call grad{fwdOp + "_grad", {}, {&dy, &y}, {&dx}};
        grad.attrs.setInt("axis", axis);
        runOk(grad, &testPool());
        Buf dy64 = asF64(dy), y64 = asF64(y), ref(DType::F64, s);
        Call grad64{fwdOp + "_grad", grad.attrs, {&dy64, &y64}, {&ref}};
        runOk(grad64);
        expectCloseToF64(dx, ref, fwdOp);
      }
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_grad / nll_loss_grad
//===----------------------------------------------------------------------===//

struct LossCase {
  Shape shape; // [N, C, d...]
  std::string reduction;
  bool weights;
  std::optional<int64_t> ignoreIndex;
};

std::vector<LossCase> lossCases() {
  std::vector<LossCase> v;
  for (const char *r : {"none", "sum", "mean"})
    for (bool w : {false, true})
      for (std::optional<int64_t> ig :
           {std::optional<int64_t>(), std::optional<int64_t>(2)})
        for (Shape s : {Shape{5, 4}, Shape{3, 4, 3}})
          v.push_back({s, r, w, ig});
  return v;
}

std::string label(const LossCase &c) {
  return str(c.shape) + " " + c.reduction + (c.weights ? " weighted" : "") +
         (c.ignoreIndex ? " ignore " + std::to_string(*c.ignoreIndex) : "");
}

Shape perSample(const Shape &s) {
  Shape p{s[0]};
  p.insert(p.end(), s.begin() + 2, s.end());
  return p;
}

// Labels in [0, C), with the class that is ignored (2) among them.
Buf makeLabels(const Shape &s, uint32_t seed) {
  Buf l(DType::I64, perSample(s));
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(0, static_cast<int>(s[1]) - 1);
  for (int64_t i = 0; i < l.size(); ++i)
    l.set(i, i == 1 ? 2 : u(rng));
  return l;
}

void setLossAttrs(Attrs &a, const LossCase &c) {
  a.setString("reduction", c.reduction);
  if (c.ignoreIndex)
    a.setInt("ignore_index", *c.ignoreIndex);
}

TEST(LossGradKernels, SoftmaxCrossEntropyMatchesFiniteDifferencesInF64) {
  uint32_t seed = 100;
  for (const LossCase &c : lossCases()) {
    SCOPED_TRACE(label(c));
    Buf scores = randomBuf(DType::F64, c.shape, seed++, -3, 3);
    Buf labels = makeLabels(c.shape, seed++);
    Buf w = randomBuf(DType::F64, {c.shape[1]}, seed++, 0.5, 2);
    Shape lossShape = c.reduction == "none" ? perSample(c.shape) : Shape{};
    Buf loss(DType::F64, lossShape), logProb(DType::F64, c.shape);
    Call fwd{"softmax_cross_entropy",
             lossAttrs(),
             {&scores, &labels, c.weights ? &w : nullptr},
             {&loss, &logProb}};
    setLossAttrs(fwd.attrs, c);
    runOk(fwd);
    Buf dy = randomBuf(DType::F64, lossShape, seed++, 0.5, 2);
    Buf dx(DType::F64, c.shape);
    Call grad{"softmax_cross_entropy_grad",
              fwd.attrs,
              {&dy, &logProb, &labels, c.weights ? &w : nullptr},
              {&dx}};
    runOk(grad);
    expectMatchesNumeric(dx, numericGrad(fwd, scores, dy), "d scores");
  }
}

TEST(LossGradKernels, NllLossMatchesFiniteDifferencesInF64) {
  uint32_t seed = 200;
  for (const LossCase &c : lossCases()) {
    SCOPED_TRACE(label(c));
    Buf x = randomBuf(DType::F64, c.shape, seed++, -3, 0);
    Buf target = makeLabels(c.shape, seed++);
    Buf w = randomBuf(DType::F64, {c.shape[1]}, seed++, 0.5, 2);
    Shape lossShape = c.reduction == "none" ? perSample(c.shape) : Shape{};
    Buf loss(DType::F64, lossShape);
    Call fwd{"nll_loss",
             lossAttrs(),
             {&x, &target, c.weights ? &w : nullptr},
             {&loss}};
    setLossAttrs(fwd.attrs, c);
    Buf dy = randomBuf(DType::F64, lossShape, seed++, 0.5, 2);
    Buf dx(DType::F64, c.shape);
    Call grad{"nll_loss_grad",
              fwd.attrs,
              {&dy, &target, c.weights ? &w : nullptr},
              {&dx}};
    runOk(grad);
    expectMatchesNumeric(dx, numericGrad(fwd, x, dy), "d input");
  }
}

// Mean over no sample: the forward's loss is 0/0 = NaN (as ONNX's
// reference); its gradient has no sample to flow to, so it is 0, not NaN.
TEST(LossGradKernels, MeanWithEverySampleIgnoredHasZeroGradient) {
  Shape s{3, 4, 2};
  Buf scores = randomBuf(DType::F32, s, 1, -2, 2);
  Buf labels = makeBuf(DType::I64, perSample(s), std::vector<double>(6, -100));
  Buf loss(DType::F32, {}), logProb(DType::F32, s);
  Call fwd{"softmax_cross_entropy",
           lossAttrs(),
           {&scores, &labels},
           {&loss, &logProb}};
  fwd.attrs.setInt("ignore_index", -100);
  runOk(fwd);
  EXPECT_TRUE(std::isnan(loss.get(0)));
  Buf dy = makeBuf(DType::F32, {}, {1.0});
  Buf dSce(DType::F32, s), dNll(DType::F32, s);
  runOk(Call{"softmax_cross_entropy_grad",
             fwd.attrs,
             {&dy, &logProb, &labels},
             {&dSce}});
  runOk(Call{"nll_loss_grad", fwd.attrs, {&dy, &labels}, {&dNll}});
  for (int64_t i = 0; i < dSce.size(); ++i) {
    EXPECT_EQ(dSce.get(i), 0.0) << i;
    EXPECT_EQ(dNll.get(i), 0.0) << i;
  }
}

// By hand: [2, 3] scores, labels {2, ignored}, weights {1, 2, 4}, mean
// (D = 4): row 0 is (p - onehot(2)) * 4 * g / 4; row 1 is 0.
TEST(LossGradKernels, HandCheckedWeightedMean) {
  Buf logProb = makeBuf(DType::F64, {2, 3},
                        {std::log(0.2), std::log(0.3), std::log(0.5),
                         std::log(0.1), std::log(0.1), std::log(0.8)});
  Buf labels = makeBuf(DType::I64, {2}, {2, 0});
  Buf w = makeBuf(DType::F64, {3}, {1, 2, 4});
  Buf g = makeBuf(DType::F64, {}, {3});
  Buf d(DType::F64, {2, 3}), dn(DType::F64, {2, 3});
  Call c{"softmax_cross_entropy_grad",
         lossAttrs(),
         {&g, &logProb, &labels, &w},
         {&d}};
  c.attrs.setString("reduction", "mean");
  c.attrs.setInt("ignore_index", 0);
  runOk(c);
  expectNear(d, {0.2 * 3, 0.3 * 3, -0.5 * 3, 0, 0, 0}, 1e-12, 1e-12, "sce");
  runOk(Call{"nll_loss_grad", c.attrs, {&g, &labels, &w}, {&dn}});
  expectNear(dn, {0, 0, -3, 0, 0, 0}, 0, 0, "nll");
}

TEST(LossGradKernels, OutOfRangeLabelIsARunTimeError) {
  Shape s{2, 5};
  Buf logProb = randomBuf(DType::F32, s, 3, -3, 0);
  Buf labels = makeBuf(DType::I64, {2}, {1, 7});
  Buf g = makeBuf(DType::F32, {}, {1});
  Buf d(DType::F32, s);
  Call c{
      "softmax_cross_entropy_grad", lossAttrs(), {&g, &logProb, &labels}, {&d}};
  c.attrs.setInt("ignore_index", -1);
  expectError(c.run(), "label 7 at index 1 is out of range for 5 classes [0, "
                       "5) and is not ignore_index -1");
  Call n{"nll_loss_grad", lossAttrs(), {&g, &labels}, {&d}};
  expectError(n.run(), "label 7 at index 1 is out of range for 5 classes");
}

TEST(LossGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 300;
  for (DType t : kLowFloats)
    for (const char *r : {"none", "mean"}) {
      SCOPED_TRACE(std::string(name(t)) + " " + r);
      LossCase c{{3, 10, 700}, r, true, 2}; // d 700: two column chunks
      Shape lossShape = c.reduction == "none" ? perSample(c.shape) : Shape{};
      Buf scores = randomBuf(t, c.shape, seed++, -3, 3);
      Buf labels = makeLabels(c.shape, seed++);
      Buf w = randomBuf(t, {c.shape[1]}, seed++, 0.5, 2);
      Buf loss(t, lossShape), logProb(t, c.shape);
      Call fwd{"softmax_cross_entropy",
               lossAttrs(),
               {&scores, &labels, &w},
               {&loss, &logProb}};
      setLossAttrs(fwd.attrs, c);
      runOk(fwd);
      Buf dy = randomBuf(t, lossShape, seed++, 0.5, 2);
      Buf dx(t, c.shape), dn(t, c.shape);
      runOk(Call{"softmax_cross_entropy_grad",
                 fwd.attrs,
                 {&dy, &logProb, &labels, &w},
                 {&dx}},
            &testPool());
      runOk(Call{"nll_loss_grad", fwd.attrs, {&dy, &labels, &w}, {&dn}},
            &testPool());
      Buf dy64 = asF64(dy), lp64 = asF64(logProb), w64 = asF64(w);
      Buf ref(DType::F64, c.shape), refN(DType::F64, c.shape);
      runOk(Call{"softmax_cross_entropy_grad",
                 fwd.attrs,
                 {&dy64, &lp64, &labels, &w64},
                 {&ref}});
      runOk(Call{"nll_loss_grad", fwd.attrs, {&dy64, &labels, &w64}, {&refN}});
      expectCloseToF64(dx, ref, "softmax_cross_entropy_grad");
      expectCloseToF64(dn, refN, "nll_loss_grad");
    }
}

//===----------------------------------------------------------------------===//
// reduce_max_grad
//===----------------------------------------------------------------------===//

Shape reducedShape(const Shape &s, const std::vector<int64_t> &axes,
                   bool keep) {
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) ==
        axes.end())
      out.push_back(s[i]);
    else if (keep)
      out.push_back(1);
  return out;
}

struct MaxCase {
  Shape shape;
  std::vector<int64_t> axes;
  bool keepdims;
};

TEST(ReduceMaxGradKernels, MatchFiniteDifferencesOfTheForwardInF64) {
  std::vector<MaxCase> cases = {
      {{4, 5}, {1}, true},           {{4, 5}, {0}, false},
      {{3, 4, 5}, {0, 2}, true},     {{3, 4, 5}, {1}, false},
      {{3, 4, 5}, {0, 1, 2}, false}, {{2, 1, 3, 4}, {1, 3}, true},
      {{2, 3, 1}, {2}, false}};
  uint32_t seed = 400;
  for (const MaxCase &c : cases) {
    SCOPED_TRACE(str(c.shape) + " axes " + str(c.axes) +
                 (c.keepdims ? " keepdims" : ""));
    Shape r = reducedShape(c.shape, c.axes, c.keepdims);
    // Centred on 0, so each maximum is unique and x +- h keeps it so.
    Buf x = distinctBuf(DType::F64, c.shape, seed++,
                        -static_cast<double>(numElements(c.shape)) / 2);
    Buf y(DType::F64, r), dx(DType::F64, c.shape);
    Buf dy = randomBuf(DType::F64, r, seed++, -2, 2);
    Call fwd{"reduce_max", reduceAttrs(), {&x}, {&y}};
    fwd.attrs.setInts("axes", c.axes);
    fwd.attrs.setInt("keepdims", c.keepdims);
    runOk(fwd);
    runOk(Call{"reduce_max_grad", fwd.attrs, {&dy, &x, &y}, {&dx}});
    expectMatchesNumeric(dx, numericGrad(fwd, x, dy), "reduce_max");
  }
}

// Ties share the gradient evenly, with the last dim reduced (rows) and kept
// (columns).
TEST(ReduceMaxGradKernels, TiesShareEvenly) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(name(t)));
    Buf x = makeBuf(t, {2, 3}, {1, 3, 3, 2, 2, 2});
    Buf g = makeBuf(t, {2, 1}, {6, -3});
    Buf m = makeBuf(t, {2, 1}, {3, 2});
    Buf d(t, {2, 3});
    Call rows{"reduce_max_grad", reduceAttrs(), {&g, &x, &m}, {&d}};
    rows.attrs.setInts("axes", {1});
    runOk(rows);
    expectNear(d, {0, 3, 3, -1, -1, -1}, 0, 0, "rows");

    Buf gc = makeBuf(t, {3}, {4, 5, 6});
    Buf mc = makeBuf(t, {3}, {2, 3, 3});
    Call cols{"reduce_max_grad", reduceAttrs(), {&gc, &x, &mc}, {&d}};
    cols.attrs.setInts("axes", {0});
    cols.attrs.setInt("keepdims", 0);
    runOk(cols);
    expectNear(d, {0, 5, 6, 4, 0, 0}, 0, 0, "columns");
  }
}

TEST(ReduceMaxGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 500;
  std::vector<MaxCase> cases = {{{6, 70, 300}, {1}, true},
                                {{6, 70, 3000}, {0, 1}, false},
                                {{6, 70, 300}, {2}, false}};
  for (DType t : kLowFloats)
    for (const MaxCase &c : cases) {
      SCOPED_TRACE(std::string(name(t)) + " axes " + str(c.axes));
      Shape r = reducedShape(c.shape, c.axes, c.keepdims);
      // Random values: rounding to f16/bf16 makes ties, which both runs see.
      Buf x = randomBuf(t, c.shape, seed++, -2, 2);
      Buf y(t, r), dx(t, c.shape);
      Buf dy = randomBuf(t, r, seed++, -2, 2);
      Call fwd{"reduce_max", reduceAttrs(), {&x}, {&y}};
      fwd.attrs.setInts("axes", c.axes);
      fwd.attrs.setInt("keepdims", c.keepdims);
      runOk(fwd);
      runOk(Call{"reduce_max_grad", fwd.attrs, {&dy, &x, &y}, {&dx}},
            &testPool());
      Buf x64 = asF64(x), y64 = asF64(y), dy64 = asF64(dy);
      Buf ref(DType::F64, c.shape);
      runOk(Call{"reduce_max_grad", fwd.attrs, {&dy64, &x64, &y64}, {&ref}});
      expectCloseToF64(dx, ref, "reduce_max_grad");
    }
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

struct BN {
  Buf x, scale, bias, runMean, runVar;
  Buf y, newMean, newVar, mean, invStd;
  Call fwd;
};

// batch_norm_training on `x`; the statistics have the scale's dtype.
void makeBN(BN &b, DType t, DType statT, Shape s, uint32_t seed) {
  int64_t c = s[1];
  b.x = randomBuf(t, s, seed, -2, 3);
  b.scale = randomBuf(statT, {c}, seed + 1, 0.5, 1.5);
  b.bias = randomBuf(statT, {c}, seed + 2);
  b.runMean = randomBuf(statT, {c}, seed + 3);
  b.runVar = randomBuf(statT, {c}, seed + 4, 0.5, 2);
  b.y = Buf(t, s);
  for (Buf *o : {&b.newMean, &b.newVar, &b.mean, &b.invStd})
    *o = Buf(statT, {c});
  b.fwd = Call{"batch_norm_training",
               {},
               {&b.x, &b.scale, &b.bias, &b.runMean, &b.runVar},
               {&b.y, &b.newMean, &b.newVar, &b.mean, &b.invStd}};
  b.fwd.attrs.setFloat("epsilon", 1e-3);
  b.fwd.attrs.setFloat("momentum", 0.9);
}

Call bnGrad(BN &b, Buf *dy, Buf *dx, Buf *dScale, Buf *dBias) {
  return Call{"batch_norm_grad",
              {},
              {dy, &b.x, &b.scale, &b.mean, &b.invStd},
              {dx, dScale, dBias}};
}

TEST(BatchNormGradKernels, MatchFiniteDifferencesOfTheForwardInF64) {
  uint32_t seed = 600;
  for (Shape s : {Shape{4, 3}, Shape{3, 2, 2, 3}, Shape{1, 2, 5}}) {
    SCOPED_TRACE(str(s));
    BN b;
    makeBN(b, DType::F64, DType::F64, s, seed);
    seed += 10;
    runOk(b.fwd);
    Buf dy = randomBuf(DType::F64, s, seed++, -2, 2);
    Buf dx(DType::F64, s), dScale(DType::F64, {s[1]}),
        dBias(DType::F64, {s[1]});
    runOk(bnGrad(b, &dy, &dx, &dScale, &dBias));
    expectMatchesNumeric(dx, numericGrad(b.fwd, b.x, dy), "d input");
    expectMatchesNumeric(dScale, numericGrad(b.fwd, b.scale, dy), "d scale");
    expectMatchesNumeric(dBias, numericGrad(b.fwd, b.bias, dy), "d bias");
  }
}

TEST(BatchNormGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 700;
  // f16/bf16 data with f32 statistics (AMP keeps batch norm parameters in
  // f32) and with statistics in the data's own dtype.
  struct Types {
    DType data, stat;
  };
  for (Types ty :
       {Types{DType::F32, DType::F32}, Types{DType::F16, DType::F32},
        Types{DType::BF16, DType::F32}, Types{DType::F16, DType::F16},
        Types{DType::BF16, DType::BF16}}) {
    SCOPED_TRACE(std::string(name(ty.data)) + " / " +
                 std::string(name(ty.stat)));
    Shape s{8, 5, 7, 9};
    BN b;
    makeBN(b, ty.data, ty.stat, s, seed);
    seed += 10;
    runOk(b.fwd);
    Buf dy = randomBuf(ty.data, s, seed++, -2, 2);
    Buf dx(ty.data, s), dScale(ty.stat, {5}), dBias(ty.stat, {5});
    runOk(bnGrad(b, &dy, &dx, &dScale, &dBias), &testPool());
    BN r;
    r.x = asF64(b.x);
    r.scale = asF64(b.scale);
    r.mean = asF64(b.mean);
    r.invStd = asF64(b.invStd);
    Buf dy64 = asF64(dy), rx(DType::F64, s), rs(DType::F64, {5}),
        rb(DType::F64, {5});
    runOk(bnGrad(r, &dy64, &rx, &rs, &rb));
    expectCloseToF64(dx, rx, "d input");
    expectCloseToF64(dScale, rs, "d scale");
    expectCloseToF64(dBias, rb, "d bias");
  }
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

struct LN {
  Buf x, scale, bias, y, mean, invStd;
  Call fwd;
};

// layer_norm with a bias of the scale's shape (layer_norm_grad's bias_grad
// has the scale's shape).
void makeLN(LN &l, DType t, DType scaleT, Shape s, int64_t axis,
            Shape scaleShape, uint32_t seed) {
  l.x = randomBuf(t, s, seed, -2, 3);
  l.scale = randomBuf(scaleT, scaleShape, seed + 1, 0.5, 1.5);
  l.bias = randomBuf(scaleT, scaleShape, seed + 2);
  Shape stat = s;
  std::fill(stat.begin() + axis, stat.end(), 1);
  DType statT = t == DType::F64 ? DType::F64 : DType::F32;
  l.y = Buf(t, s);
  l.mean = Buf(statT, stat);
  l.invStd = Buf(statT, stat);
  l.fwd = Call{
      "layer_norm", {}, {&l.x, &l.scale, &l.bias}, {&l.y, &l.mean, &l.invStd}};
  l.fwd.attrs.setInt("axis", axis);
  l.fwd.attrs.setFloat("epsilon", 1e-3);
}

Call lnGrad(LN &l, int64_t axis, Buf *dy, Buf *dx, Buf *dScale, Buf *dBias) {
  Call c{"layer_norm_grad",
         {},
         {dy, &l.x, &l.scale, &l.mean, &l.invStd},
         {dx, dScale, dBias}};
  c.attrs.setInt("axis", axis);
  return c;
}

struct LNCase {
  Shape shape;
  int64_t axis;
  Shape scale;
};

TEST(LayerNormGradKernels, MatchFiniteDifferencesOfTheForwardInF64) {
  std::vector<LNCase> cases = {{{4, 6}, 1, {6}},       {{3, 4, 5}, 1, {4, 5}},
                               {{3, 4, 5}, 1, {5}},    // broadcast over 4
                               {{3, 4, 5}, 1, {4, 1}}, // broadcast over 5
                               {{2, 3, 4}, 0, {1, 4}}, {{2, 3, 4}, 2, {1}}};
  uint32_t seed = 800;
  for (const LNCase &c : cases) {
    SCOPED_TRACE(str(c.shape) + " axis " + std::to_string(c.axis) + " scale " +
                 str(c.scale));
    LN l;
    makeLN(l, DType::F64, DType::F64, c.shape, c.axis, c.scale, seed);
    seed += 10;
    runOk(l.fwd);
    Buf dy = randomBuf(DType::F64, c.shape, seed++, -2, 2);
    Buf dx(DType::F64, c.shape), dScale(DType::F64, c.scale),
        dBias(DType::F64, c.scale);
    runOk(lnGrad(l, c.axis, &dy, &dx, &dScale, &dBias));
    expectMatchesNumeric(dx, numericGrad(l.fwd, l.x, dy), "d input");
    expectMatchesNumeric(dScale, numericGrad(l.fwd, l.scale, dy), "d scale");
    expectMatchesNumeric(dBias, numericGrad(l.fwd, l.bias, dy), "d bias");
  }
}

TEST(LayerNormGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 900;
  for (DType t : kLowFloats)
    for (DType scaleT : {t, DType::F32}) {
      SCOPED_TRACE(std::string(name(t)) + " scale " +
                   std::string(name(scaleT)));
      Shape s{40, 6, 129};
      LN l;
      makeLN(l, t, scaleT, s, 1, {129}, seed);
      seed += 10;
      runOk(l.fwd);
      Buf dy = randomBuf(t, s, seed++, -2, 2);
      Buf dx(t, s), dScale(scaleT, {129}), dBias(scaleT, {129});
      runOk(lnGrad(l, 1, &dy, &dx, &dScale, &dBias), &testPool());
      LN r;
      r.x = asF64(l.x);
      r.scale = asF64(l.scale);
      r.mean = asF64(l.mean);
      r.invStd = asF64(l.invStd);
      Buf dy64 = asF64(dy), rx(DType::F64, s), rs(DType::F64, {129}),
          rb(DType::F64, {129});
      runOk(lnGrad(r, 1, &dy64, &rx, &rs, &rb));
      expectCloseToF64(dx, rx, "d input");
      expectCloseToF64(dScale, rs, "d scale");
      expectCloseToF64(dBias, rb, "d bias");
    }
}

// Partial sums are split by the data, not by the threads.
TEST(NormGradKernels, ResultsDoNotDependOnTheThreadCount) {
  Shape s{33, 4, 50};
  BN b;
  makeBN(b, DType::F32, DType::F32, s, 11);
  runOk(b.fwd);
  Buf dy = randomBuf(DType::F32, s, 12, -2, 2);
  Buf dx1(DType::F32, s), ds1(DType::F32, {4}), db1(DType::F32, {4});
  Buf dx2(DType::F32, s), ds2(DType::F32, {4}), db2(DType::F32, {4});
  runOk(bnGrad(b, &dy, &dx1, &ds1, &db1));
  runOk(bnGrad(b, &dy, &dx2, &ds2, &db2), &testPool());
  EXPECT_TRUE(sameBits(dx1, dx2) && sameBits(ds1, ds2) && sameBits(db1, db2));

  LN l;
  makeLN(l, DType::F32, DType::F32, s, 1, {4, 50}, 13);
  runOk(l.fwd);
  Buf lx1(DType::F32, s), ls1(DType::F32, {4, 50}), lb1(DType::F32, {4, 50});
  Buf lx2(DType::F32, s), ls2(DType::F32, {4, 50}), lb2(DType::F32, {4, 50});
  runOk(lnGrad(l, 1, &dy, &lx1, &ls1, &lb1));
  runOk(lnGrad(l, 1, &dy, &lx2, &ls2, &lb2), &testPool());
  EXPECT_TRUE(sameBits(lx1, lx2) && sameBits(ls1, ls2) && sameBits(lb1, lb2));
}

//===----------------------------------------------------------------------===//
// check() errors
//===----------------------------------------------------------------------===//

TEST(NormLossGradKernels, CheckErrors) {
  Buf g(DType::F32, {2, 3}), y(DType::F32, {2, 3}), y16(DType::F16, {2, 3});
  Buf out(DType::F32, {2, 3});
  {
    Call c{"softmax_grad", {}, {&g, &y}, {&out}};
    c.attrs.setInt("axis", 2);
    expectError(c.check(), "op 'softmax_grad': attribute 'axis' 2 is out of "
                           "range [0, 2)");
    Call d{"log_softmax_grad", {}, {&g, &y16}, {&out}};
    d.attrs.setInt("axis", 1);
    expectError(d.check(), "output has element type f16 but grad has f32");
  }
  {
    Buf lp(DType::F32, {2, 3}), labels(DType::I64, {2}), gNone(DType::F32, {3});
    Call c{"softmax_cross_entropy_grad",
           lossAttrs(),
           {&gNone, &lp, &labels},
           {&out}};
    c.attrs.setString("reduction", "none");
    expectError(c.check(), "grad has shape [3] but the loss (reduction "
                           "\"none\") has [2]");
    Buf w(DType::F32, {4}), g0(DType::F32, {});
    Call d{"nll_loss_grad", lossAttrs(), {&g0, &labels, &w}, {&out}};
    expectError(d.check(), "weight must have shape [3], got [4]");
    Call e{"nll_loss_grad", lossAttrs(), {&g0, &labels}, {&out}};
    e.attrs.setString("reduction", "avg");
    expectError(e.check(), "attribute 'reduction' must be \"none\", \"sum\" "
                           "or \"mean\", got \"avg\"");
  }
  {
    Buf x(DType::F32, {2, 3}), gr(DType::F32, {3}), m(DType::F32, {2});
    Call c{"reduce_max_grad", reduceAttrs(), {&gr, &x, &m}, {&out}};
    c.attrs.setInts("axes", {1});
    c.attrs.setInt("keepdims", 0);
    expectError(c.check(),
                "grad has shape [3] but reduce_max of the input gives [2]");
  }
  {
    Buf x(DType::F32, {4, 3, 2}), dy(DType::F32, {4, 3, 2});
    Buf sc(DType::F32, {3}), mean(DType::F32, {3}), bad(DType::F32, {4});
    Buf dx(DType::F32, {4, 3, 2}), ds(DType::F32, {3}), db(DType::F32, {3});
    Call c{"batch_norm_grad", {}, {&dy, &x, &sc, &mean, &bad}, {&dx, &ds, &db}};
    expectError(c.check(), "batch_inv_std must have shape [3], got [4]");
    Buf ds16(DType::F16, {3});
    Call d{
        "batch_norm_grad", {}, {&dy, &x, &sc, &mean, &mean}, {&dx, &ds16, &db}};
    expectError(d.check(), "scale_grad has element type f16 but the op "
                           "computes f32");
  }
  {
    Buf x(DType::F32, {4, 3, 2}), dy(DType::F32, {4, 3, 2});
    Buf sc(DType::F32, {3}), stat(DType::F32, {4, 1, 1});
    Buf dx(DType::F32, {4, 3, 2}), ds(DType::F32, {3}), db(DType::F32, {3});
    Call c{
        "layer_norm_grad", {}, {&dy, &x, &sc, &stat, &stat}, {&dx, &ds, &db}};
    c.attrs.setInt("axis", 1);
    expectError(c.check(), "scale [3] does not broadcast to the normalized "
                           "shape [3, 2]");
    Buf sc2(DType::F32, {2}), wrongStat(DType::F32, {4, 3, 1});
    Buf ds2(DType::F32, {2}), db2(DType::F32, {2});
    Call d{"layer_norm_grad",
           {},
           {&dy, &x, &sc2, &wrongStat, &stat},
           {&dx, &ds2, &db2}};
    d.attrs.setInt("axis", 1);
    expectError(d.check(), "mean must have shape [4, 1, 1], got [4, 3, 1]");
  }
}

} // namespace
