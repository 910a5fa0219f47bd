//===- LossScalingTest.cpp - check_finite and update_scale ----------------===//
//
// check_finite finding one inf or NaN in any dtype at any position (block
// and chunk boundaries, one of many tensors), a finite gradient that
// overflows only once unscaled (formed in f32, in f64 for f64 gradients,
// by the f32 reciprocal), skip, empty gradients, and its inputs left bit
// for bit as they were; update_scale against hand-written (scale,
// good_steps, bad_steps) sequences for the PyTorch, Paddle and MindSpore
// settings; check() errors.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"
#include "runtime/ops/Check.h"

#include <cfloat>
#include <optional>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Buf scaleBuf(float s) { return makeBuf(DType::F32, {}, {s}); }
Buf flagBuf(bool b) { return makeBuf(DType::I1, {}, {b ? 1.0 : 0.0}); }

Call finiteCall(const std::vector<Buf *> &grads, Buf &scale, Buf &foundInf,
                Buf *skip = nullptr) {
  Call c{"check_finite", {}, grads, {&foundInf}};
  c.ins.push_back(&scale);
  if (skip)
    c.ins.push_back(skip);
  return c;
}

// Runs the call (found_inf first set to 7, so that writing it is seen) and
// returns found_inf, or -1 if the call failed. Every input must hold the
// same bits afterwards: check_finite writes found_inf alone.
int runFound(const Call &c, Buf &foundInf, cpu::ThreadPool *pool = nullptr) {
  std::vector<Buf> before;
  for (Buf *b : c.ins)
    before.push_back(b ? *b : Buf());
  foundInf.bytes()[0] = 7;
  Status s = c.run(pool);
  EXPECT_TRUE(s.isOk()) << s.message();
  for (size_t i = 0; i < c.ins.size(); ++i)
    if (c.ins[i]) {
      EXPECT_TRUE(sameBits(*c.ins[i], before[i])) << "input " << i;
    }
  if (!s)
    return -1;
  return static_cast<unsigned char>(foundInf.bytes()[0]);
}

//===----------------------------------------------------------------------===//
// check_finite
//===----------------------------------------------------------------------===//

// Four gradients of 40000 elements, one per float dtype (several 16384-
// element chunks on several threads, blocks of 256): one inf or NaN
// anywhere raises the flag; finite values up to 1000 times a scale of 1024
// do not.
TEST(CheckFinite, AnyNonFiniteElementOfAnyDTypeIsFound) {
  const Shape s = {40000};
  const DType dtypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};
  const int64_t positions[] = {0,     1,     255,   256,  16383,
                               16384, 20001, 32768, 39999};
  std::vector<Buf> clean;
  for (int t = 0; t < 4; ++t)
    clean.push_back(randomBuf(dtypes[t], s, 1 + t, -1000, 1000));
  Buf scale = scaleBuf(1024), found(DType::I1, {});
  {
    std::vector<Buf> g = clean;
    Call c = finiteCall({&g[0], &g[1], &g[2], &g[3]}, scale, found);
    EXPECT_EQ(runFound(c, found, &testPool()), 0);
    EXPECT_EQ(runFound(c, found), 0);
  }
  for (int t = 0; t < 4; ++t)
    for (int64_t at : positions)
      for (double bad : {kInf, -kInf, kNaN}) {
        SCOPED_TRACE(std::string(name(dtypes[t])) + " element " +
                     std::to_string(at) + " = " + std::to_string(bad));
        std::vector<Buf> g = clean;
        g[t].set(at, bad);
        Call c = finiteCall({&g[0], &g[1], &g[2], &g[3]}, scale, found);
        EXPECT_EQ(runFound(c, found, &testPool()), 1);
        EXPECT_EQ(runFound(c, found), 1);
      }
}

// 300 small gradients of mixed dtypes and sizes (many tensors per chunk
// list): a NaN in any one of them is found, and none is found without it.
TEST(CheckFinite, ManyTensors) {
  const DType dtypes[] = {DType::F16, DType::F32, DType::BF16, DType::F64};
  std::vector<Buf> g;
  for (int i = 0; i < 300; ++i)
    g.push_back(
        randomBuf(dtypes[i % 4], {1 + (i * 37) % 301}, 500 + i, -50, 50));
  std::vector<Buf *> ptrs;
  for (Buf &b : g)
    ptrs.push_back(&b);
  Buf scale = scaleBuf(128), found(DType::I1, {});
  EXPECT_EQ(runFound(finiteCall(ptrs, scale, found), found, &testPool()), 0);
  for (int which : {0, 1, 150, 298, 299}) {
    SCOPED_TRACE("NaN in gradient " + std::to_string(which));
    Buf keep = g[which];
    g[which].set(g[which].size() - 1, kNaN);
    EXPECT_EQ(runFound(finiteCall(ptrs, scale, found), found, &testPool()), 1);
    g[which] = keep;
  }
}

// With a scale below 1 (a static scale, or a dynamic one backed off that
// far), a finite gradient can overflow once unscaled. The product is the
// one the updates form as they read the gradient: g * (1.0f / scale) in
// f32 (f64 for f64 gradients), not rounded back to the gradient's dtype.
TEST(CheckFinite, FiniteGradientThatOverflowsWhenUnscaled) {
  Buf found(DType::I1, {});
  auto check = [&](DType t, double g, float scale) {
    Buf grad = makeBuf(t, {3}, {0.5, g, -1}), sc = scaleBuf(scale);
    return runFound(finiteCall({&grad}, sc, found), found);
  };
  // f16: 65504 * 1e35 leaves f32; 1e35 alone does not. 60000 / 0.5 is inf
  // in f16 but 120000 in f32, which is what an update reads: finite.
  EXPECT_EQ(check(DType::F16, 65504, 1e-35f), 1);
  EXPECT_EQ(check(DType::F16, 1, 1e-35f), 0);
  EXPECT_EQ(check(DType::F16, 60000, 0.5f), 0);
  // bf16 and f32: 1e38 / 0.25 leaves f32, 3e37 / 0.25 does not.
  EXPECT_EQ(check(DType::BF16, 1e38, 0.25f), 1);
  EXPECT_EQ(check(DType::BF16, 3e37, 0.25f), 0);
  EXPECT_EQ(check(DType::F32, 2e38, 0.5f), 1);
  EXPECT_EQ(check(DType::F32, FLT_MAX, 1), 0);
  // f64: 3e38 / 0.5 is finite in f64, 1e308 / 0.5 is not.
  EXPECT_EQ(check(DType::F64, 3e38, 0.5f), 0);
  EXPECT_EQ(check(DType::F64, 1e308, 0.5f), 1);
  // A scale whose reciprocal is not finite in f32: every nonzero finite
  // gradient overflows.
  EXPECT_EQ(check(DType::F32, 1, 0x1p-130f), 1);
}

// An f64 gradient is multiplied by the f32 reciprocal, widened: 1.0f /
// 0.75f rounds up to 1.33333337306976318, so g chosen between DBL_MAX /
// that and DBL_MAX / (4 / 3) overflows by the f32 reciprocal and would
// not by the exact one.
TEST(CheckFinite, F64GradientUsesTheF32Reciprocal) {
  const double invF = static_cast<double>(1.0f / 0.75f), invD = 4.0 / 3.0;
  ASSERT_GT(invF, invD);
  const double g = DBL_MAX / ((invF + invD) / 2);
  ASSERT_TRUE(std::isfinite(g * invD));
  ASSERT_FALSE(std::isfinite(g * invF));
  Buf grad = makeBuf(DType::F64, {2}, {1, g}), scale = scaleBuf(0.75f),
      found(DType::I1, {});
  EXPECT_EQ(runFound(finiteCall({&grad}, scale, found), found), 1);
  // The largest gradient whose product stays finite.
  Buf below =
      makeBuf(DType::F64, {2}, {1, std::nextafter(DBL_MAX / invF, 0.0)});
  EXPECT_EQ(runFound(finiteCall({&below}, scale, found), found), 0);
}

// With skip set, found_inf is 0 and nothing is read: gradients full of
// NaN and inf give 0, and so do gradients and a scale with no data at all
// (a read would fault).
TEST(CheckFinite, SkipGivesZeroAndReadsNothing) {
  Buf scale = scaleBuf(2), found(DType::I1, {}), skip = flagBuf(true);
  Buf g1(DType::F16, {3000}), g2(DType::F32, {40000}), g3(DType::BF16, {5});
  for (int64_t i = 0; i < g1.size(); ++i)
    g1.set(i, kNaN);
  for (int64_t i = 0; i < g2.size(); ++i)
    g2.set(i, i % 2 ? kInf : -kInf);
  for (int64_t i = 0; i < g3.size(); ++i)
    g3.set(i, kNaN);
  EXPECT_EQ(runFound(finiteCall({&g1, &g2, &g3}, scale, found, &skip), found,
                     &testPool()),
            0);
  {
    Call c = finiteCall({&g1, &g2}, scale, found, &skip);
    ops::OpCall call = c.make(true);
    call.inputs[0].data = nullptr;
    call.inputs[1].data = nullptr;
    call.inputs[2].data = nullptr;
    found.bytes()[0] = 7;
    ASSERT_TRUE(ops::checkKernel(call));
    cpu::CpuContext ctx{&testPool()};
    ASSERT_TRUE(cpu::runKernel(call, ctx));
    EXPECT_EQ(found.bytes()[0], 0);
  }
  // skip = 0 is the call without skip.
  Buf noSkip = flagBuf(false);
  EXPECT_EQ(runFound(finiteCall({&g1, &g2, &g3}, scale, found, &noSkip), found,
                     &testPool()),
            1);
  Buf clean = randomBuf(DType::F16, {3000}, 9);
  EXPECT_EQ(runFound(finiteCall({&clean}, scale, found, &noSkip), found), 0);
  EXPECT_EQ(runFound(finiteCall({&clean}, scale, found, &skip), found), 0);
}

TEST(CheckFinite, EmptyGradients) {
  Buf scale = scaleBuf(2), found(DType::I1, {}), e1(DType::F32, {0, 3}),
      e2(DType::F16, {0}), bad = makeBuf(DType::BF16, {2}, {1, kInf});
  EXPECT_EQ(runFound(finiteCall({&e1}, scale, found), found), 0);
  EXPECT_EQ(runFound(finiteCall({&e1, &e2}, scale, found), found), 0);
  EXPECT_EQ(runFound(finiteCall({&e1, &bad, &e2}, scale, found), found), 1);
}

TEST(CheckFinite, CheckErrors) {
  Buf scale = scaleBuf(2), found(DType::I1, {}), skip = flagBuf(false);
  Buf g0(DType::F32, {4}), g1(DType::F16, {2, 3}), g2(DType::F64, {1}),
      g3(DType::BF16, {});
  EXPECT_TRUE(finiteCall({&g0}, scale, found).check());
  EXPECT_TRUE(finiteCall({&g0, &g1, &g2, &g3}, scale, found).check());
  EXPECT_TRUE(finiteCall({&g0, &g1, &g2, &g3}, scale, found, &skip).check());

  // Outputs: found_inf alone, an i1 scalar.
  Call two = finiteCall({&g0}, scale, found);
  two.outs.push_back(&found);
  expectError(two.check(),
              "op 'check_finite': expects 1 output (found_inf), got 2");
  Call none = finiteCall({&g0}, scale, found);
  none.outs.clear();
  expectError(none.check(), "expects 1 output (found_inf), got 0");
  Buf foundF32(DType::F32, {}), foundVec(DType::I1, {1});
  expectError(finiteCall({&g0, &g1}, scale, foundF32).check(),
              "found_inf (output 0) must be a scalar (rank 0) i1 tensor, got "
              "tensor<f32>");
  expectError(finiteCall({&g0}, scale, foundVec, &skip).check(),
              "found_inf (output 0) must be a scalar (rank 0) i1 tensor, got "
              "tensor<1xi1>");

  // scale: the f32 scalar after the gradients.
  Buf scale16 = makeBuf(DType::F16, {}, {2}), scaleVec(DType::F32, {1}),
      scaleI64(DType::I64, {});
  expectError(finiteCall({&g0}, scale16, found).check(),
              "scale (input 1) must be a scalar (rank 0) f32 tensor, got "
              "tensor<f16>");
  expectError(finiteCall({&g0, &g1}, scaleVec, found, &skip).check(),
              "scale (input 2) must be a scalar (rank 0) f32 tensor, got "
              "tensor<1xf32>");
  expectError(finiteCall({&g0}, scaleI64, found).check(),
              "scale (input 1) must be a scalar (rank 0) f32 tensor, got "
              "tensor<i64>");
  // skip is told by its type (an i1 scalar); a malformed one is taken for
  // the scale, with the real scale as one more gradient.
  Buf skipVec(DType::I1, {1});
  expectError(finiteCall({&g0}, scale, found, &skipVec).check(),
              "scale (input 2) must be a scalar (rank 0) f32 tensor, got "
              "tensor<1xi1>");

  // Gradients: floats, at least one.
  Buf gi(DType::I64, {4}), gb(DType::I1, {4});
  expectError(finiteCall({&g0, &gi}, scale, found).check(),
              "gradient 1 must be f32, f16, bf16 or f64, got i64");
  expectError(finiteCall({&gb}, scale, found, &skip).check(),
              "gradient 0 must be f32, f16, bf16 or f64, got i1");
  expectError(finiteCall({}, scale, found, &skip).check(),
              "has no gradient to check");
  expectError(finiteCall({}, scale, found).check(),
              "expects the gradients, then scale, then an optional skip, got "
              "1 inputs");
  Call noInputs{"check_finite", {}, {}, {&found}};
  expectError(noInputs.check(), "got 0 inputs");

  // Absent inputs: none is optional by position (skip is left off, not
  // marked absent).
  Call absentSkip = finiteCall({&g0}, scale, found, &skip);
  absentSkip.ins[2] = nullptr;
  expectError(absentSkip.check(), "input 2 is required but marked absent");
  Call absentGrad = finiteCall({&g0, &g1}, scale, found);
  absentGrad.ins[1] = nullptr;
  expectError(absentGrad.check(), "input 1 is required but marked absent");
  Call absentScale = finiteCall({&g0}, scale, found, &skip);
  absentScale.ins[1] = nullptr;
  expectError(absentScale.check(), "input 1 is required but marked absent");
}

//===----------------------------------------------------------------------===//
// update_scale
//===----------------------------------------------------------------------===//

struct ScaleConfig {
  double growth, backoff;
  int64_t growthInterval, decrEveryN;
  double minScale, maxScale;
};

// PyTorch's GradScaler (torch/cuda/amp/grad_scaler.py): growth 2, backoff
// 0.5, every overflow backs off, no floor but f32's smallest normal.
ScaleConfig pytorch(int64_t interval) {
  return {2, 0.5, interval, 1, 1.17549435e-38, 3.4028235e38};
}
// Paddle's AMP decorator: incr_ratio 2, decr_ratio 0.5,
// decr_every_n_nan_or_inf 2, scale never below 1.
ScaleConfig paddle(int64_t incrEveryNSteps) {
  return {2, 0.5, incrEveryNSteps, 2, 1, 3.4028235e38};
}
// MindSpore's DynamicLossScaleManager: scale_factor 2, every overflow
// divides by it, scale never below 1.
ScaleConfig mindspore(int64_t scaleWindow) {
  return {2, 0.5, scaleWindow, 1, 1, 3.4028235e38};
}

Call updateCall(const ScaleConfig &cfg, Buf &scale, Buf &good, Buf &bad,
                Buf &found, Buf &newScale, Buf &newGood, Buf &newBad) {
  Call c{"update_scale",
         {},
         {&scale, &good, &bad, &found},
         {&newScale, &newGood, &newBad}};
  c.attrs.setFloat("growth", cfg.growth);
  c.attrs.setFloat("backoff", cfg.backoff);
  c.attrs.setInt("growth_interval", cfg.growthInterval);
  c.attrs.setInt("decr_every_n", cfg.decrEveryN);
  c.attrs.setFloat("min_scale", cfg.minScale);
  c.attrs.setFloat("max_scale", cfg.maxScale);
  return c;
}

struct ScaleState {
  float scale;
  int64_t good, bad;
};

// One step: the state after the step that saw `overflow`.
ScaleState step(const ScaleConfig &cfg, const ScaleState &s, bool overflow) {
  Buf scale = scaleBuf(s.scale), good = makeBuf(DType::I64, {}, {0}),
      bad = makeBuf(DType::I64, {}, {0}), found = flagBuf(overflow),
      newScale(DType::F32, {}), newGood(DType::I64, {}), newBad(DType::I64, {});
  std::memcpy(good.bytes(), &s.good, 8);
  std::memcpy(bad.bytes(), &s.bad, 8);
  Status st =
      updateCall(cfg, scale, good, bad, found, newScale, newGood, newBad).run();
  EXPECT_TRUE(st.isOk()) << st.message();
  ScaleState out;
  std::memcpy(&out.scale, newScale.bytes(), 4);
  std::memcpy(&out.good, newGood.bytes(), 8);
  std::memcpy(&out.bad, newBad.bytes(), 8);
  return out;
}

struct Expected {
  char step; // 'o': overflow (found_inf), '.': clean
  float scale;
  int64_t good, bad;
};

void expectSequence(const ScaleConfig &cfg, ScaleState s,
                    const std::vector<Expected> &want) {
  for (size_t i = 0; i < want.size(); ++i) {
    s = step(cfg, s, want[i].step == 'o');
    EXPECT_EQ(s.scale, want[i].scale) << "after step " << i + 1;
    EXPECT_EQ(s.good, want[i].good) << "after step " << i + 1;
    EXPECT_EQ(s.bad, want[i].bad) << "after step " << i + 1;
  }
}

ScaleState cleanSteps(const ScaleConfig &cfg, ScaleState s, int n) {
  for (int i = 0; i < n; ++i)
    s = step(cfg, s, false);
  return s;
}

TEST(UpdateScale, PyTorchGradScaler) {
  expectSequence(pytorch(3), {65536, 0, 0},
                 {{'.', 65536, 1, 0},
                  {'.', 65536, 2, 0},
                  {'.', 131072, 0, 0},
                  {'o', 65536, 0, 0},
                  {'.', 65536, 1, 0},
                  {'.', 65536, 2, 0},
                  {'o', 32768, 0, 0},
                  {'o', 16384, 0, 0},
                  {'.', 16384, 1, 0},
                  {'o', 8192, 0, 0},
                  {'.', 8192, 1, 0},
                  {'.', 8192, 2, 0},
                  {'.', 16384, 0, 0},
                  {'.', 16384, 1, 0}});
}

TEST(UpdateScale, PyTorchGradScalerTwoThousandStepInterval) {
  ScaleConfig cfg = pytorch(2000);
  ScaleState s{65536, 0, 0};
  s = cleanSteps(cfg, s, 1999);
  EXPECT_EQ(s.scale, 65536);
  EXPECT_EQ(s.good, 1999);
  s = step(cfg, s, false);
  EXPECT_EQ(s.scale, 131072);
  EXPECT_EQ(s.good, 0);
  // An overflow after 1500 clean steps restarts the count.
  s = cleanSteps(cfg, s, 1500);
  EXPECT_EQ(s.good, 1500);
  s = step(cfg, s, true);
  EXPECT_EQ(s.scale, 65536);
  EXPECT_EQ(s.good, 0);
  EXPECT_EQ(s.bad, 0);
  s = cleanSteps(cfg, s, 1999);
  EXPECT_EQ(s.scale, 65536);
  s = step(cfg, s, false);
  EXPECT_EQ(s.scale, 131072);
  EXPECT_EQ(s.good, 0);
}

TEST(UpdateScale, PaddleBacksOffAfterTwoOverflowsInARow) {
  expectSequence(paddle(4), {32768, 0, 0},
                 {{'o', 32768, 0, 1},
                  {'o', 16384, 0, 0},
                  {'.', 16384, 1, 0},
                  {'o', 16384, 0, 1},
                  {'.', 16384, 1, 0}, // a clean step clears bad_steps
                  {'o', 16384, 0, 1},
                  {'o', 8192, 0, 0},
                  {'o', 8192, 0, 1},
                  {'.', 8192, 1, 0},
                  {'.', 8192, 2, 0},
                  {'.', 8192, 3, 0},
                  {'.', 16384, 0, 0},
                  {'o', 16384, 0, 1},
                  {'o', 8192, 0, 0}});
}

TEST(UpdateScale, PaddleThousandStepInterval) {
  ScaleConfig cfg = paddle(1000);
  ScaleState s{32768, 0, 0};
  s = cleanSteps(cfg, s, 999);
  EXPECT_EQ(s.scale, 32768);
  EXPECT_EQ(s.good, 999);
  s = step(cfg, s, true); // one overflow: no backoff, but the count restarts
  EXPECT_EQ(s.scale, 32768);
  EXPECT_EQ(s.good, 0);
  EXPECT_EQ(s.bad, 1);
  s = cleanSteps(cfg, s, 1000);
  EXPECT_EQ(s.scale, 65536);
  EXPECT_EQ(s.good, 0);
  EXPECT_EQ(s.bad, 0);
}

TEST(UpdateScale, PaddleFloorsAtOne) {
  expectSequence(paddle(4), {4, 0, 0},
                 {{'o', 4, 0, 1},
                  {'o', 2, 0, 0},
                  {'o', 2, 0, 1},
                  {'o', 1, 0, 0},
                  {'o', 1, 0, 1},
                  {'o', 1, 0, 0},
                  {'.', 1, 1, 0}});
}

TEST(UpdateScale, MindSporeDynamicLossScaleManager) {
  expectSequence(mindspore(3), {16777216, 0, 0},
                 {{'.', 16777216, 1, 0},
                  {'.', 16777216, 2, 0},
                  {'o', 8388608, 0, 0},
                  {'.', 8388608, 1, 0},
                  {'.', 8388608, 2, 0},
                  {'.', 16777216, 0, 0},
                  {'.', 16777216, 1, 0},
                  {'.', 16777216, 2, 0},
                  {'.', 33554432, 0, 0},
                  {'o', 16777216, 0, 0},
                  {'o', 8388608, 0, 0}});
  // Never below 1.
  expectSequence(mindspore(3), {2, 0, 0},
                 {{'o', 1, 0, 0}, {'o', 1, 0, 0}, {'.', 1, 1, 0}});
}

TEST(UpdateScale, GrowthIsCappedByMaxScale) {
  ScaleConfig cfg = {2, 0.5, 1, 1, 1, 100000};
  expectSequence(cfg, {65536, 0, 0},
                 {{'.', 100000, 0, 0},
                  {'.', 100000, 0, 0},
                  {'o', 50000, 0, 0},
                  {'.', 100000, 0, 0}});
}

TEST(UpdateScale, GrowthThatOverflowsF32KeepsTheScale) {
  // 2^127 * 2 is inf in f32: the scale stays, the count restarts.
  expectSequence(pytorch(1), {0x1p127f, 0, 0},
                 {{'.', 0x1p127f, 0, 0}, {'o', 0x1p126f, 0, 0}});
  // FLT_MAX * (1 + 1e-7) is finite in double but rounds to inf in f32.
  ScaleConfig tiny = {1.0000001, 0.5, 1, 1, 1, 3.4028235e38};
  expectSequence(tiny, {FLT_MAX, 0, 0}, {{'.', FLT_MAX, 0, 0}});
}

TEST(UpdateScale, BackoffIsFlooredAtMinScale) {
  // PyTorch's floor is f32's smallest normal, 2^-126.
  expectSequence(
      pytorch(3), {0x1p-125f, 0, 0},
      {{'o', 0x1p-126f, 0, 0}, {'o', 0x1p-126f, 0, 0}, {'.', 0x1p-126f, 1, 0}});
  ScaleConfig cfg = {2, 0.25, 3, 1, 3, 1e6};
  expectSequence(cfg, {40, 0, 0},
                 {{'o', 10, 0, 0}, {'o', 3, 0, 0}, {'o', 3, 0, 0}});
}

TEST(UpdateScale, CheckErrors) {
  Buf scale = scaleBuf(1), good = makeBuf(DType::I64, {}, {0}),
      bad = makeBuf(DType::I64, {}, {0}), found = flagBuf(false),
      newScale(DType::F32, {}), newGood(DType::I64, {}), newBad(DType::I64, {});
  auto check = [&](ScaleConfig cfg) {
    return updateCall(cfg, scale, good, bad, found, newScale, newGood, newBad)
        .check();
  };
  EXPECT_TRUE(check(pytorch(2000)));
  EXPECT_TRUE(check({1, 1, 1, 1, 1, 1}));
  expectError(check({0.5, 0.5, 1, 1, 1, 2}),
              "op 'update_scale': attribute 'growth' must be >= 1, got 0.5");
  expectError(check({2, 0, 1, 1, 1, 2}),
              "attribute 'backoff' must be in (0, 1], got 0");
  expectError(check({2, 1.5, 1, 1, 1, 2}),
              "attribute 'backoff' must be in (0, 1], got 1.5");
  expectError(check({2, 0.5, 0, 1, 1, 2}),
              "attribute 'growth_interval' must be >= 1, got 0");
  expectError(check({2, 0.5, 1, -1, 1, 2}),
              "attribute 'decr_every_n' must be >= 1, got -1");
  expectError(check({2, 0.5, 1, 1, 0, 2}),
              "attribute 'min_scale' must be finite and > 0, got 0");
  expectError(check({2, 0.5, 1, 1, 4, 2}),
              "attribute 'max_scale' (2) must be >= min_scale (4)");
  expectError(check({kNaN, 0.5, 1, 1, 1, 2}),
              "attribute 'growth' must be >= 1, got nan");

  Call c = updateCall(pytorch(1), scale, good, bad, found, newScale, newGood,
                      newBad);
  Call missing{"update_scale", {}, c.ins, c.outs};
  expectError(missing.check(), "attribute 'growth' is missing");
  c.attrs.setInt("backoff", 1);
  expectError(c.check(), "attribute 'backoff' must be a float, got an "
                         "integer");

  auto withInput = [&](size_t i, Buf &b) {
    Call d = updateCall(pytorch(1), scale, good, bad, found, newScale, newGood,
                        newBad);
    d.ins[i] = &b;
    return d.check();
  };
  Buf f64(DType::F64, {}), i64Vec(DType::I64, {1}), f32(DType::F32, {}),
      i64(DType::I64, {});
  expectError(withInput(0, f64),
              "scale must be a scalar (rank 0) f32 tensor, got tensor<f64>");
  expectError(withInput(1, i64Vec), "good_steps must be a scalar (rank 0) "
                                    "i64 tensor, got tensor<1xi64>");
  expectError(withInput(2, f32),
              "bad_steps must be a scalar (rank 0) i64 tensor");
  expectError(withInput(3, i64),
              "found_inf must be a scalar (rank 0) i1 tensor, got "
              "tensor<i64>");
  Call out = updateCall(pytorch(1), scale, good, bad, found, newScale, newGood,
                        newBad);
  out.outs[2] = &f32;
  expectError(out.check(), "new_bad_steps must be a scalar (rank 0) i64");
  out.outs.pop_back();
  expectError(out.check(), "expects 3 outputs, got 2");
}

} // namespace
