//===- LossScalingTest.cpp - unscale_and_check and update_scale -----------===//
//
// unscale_and_check on values whose unscaled results are written out (the
// f16 maximum, round-to-nearest-even into f16 subnormals, inf, -inf and NaN
// in tensors of different dtypes, an f16 gradient that overflows only once
// unscaled), in place and out of place, with skip; update_scale against
// hand-written (scale, good_steps, bad_steps) sequences for the PyTorch,
// Paddle and MindSpore settings; check() errors.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

#include <cfloat>
#include <optional>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

Buf scaleBuf(float s) { return makeBuf(DType::F32, {}, {s}); }
Buf flagBuf(bool b) { return makeBuf(DType::I1, {}, {b ? 1.0 : 0.0}); }

Call unscaleCall(const std::vector<Buf *> &grads, Buf &scale,
                 const std::vector<Buf *> &outs, Buf &foundInf,
                 Buf *skip = nullptr) {
  Call c{"unscale_and_check", {}, grads, outs};
  c.ins.push_back(&scale);
  if (skip)
    c.ins.push_back(skip);
  c.outs.push_back(&foundInf);
  return c;
}

// Runs the call (found_inf first set to 7, so that writing it is seen) and
// returns found_inf, or -1 if the call failed.
int runFound(const Call &c, Buf &foundInf, cpu::ThreadPool *pool = nullptr) {
  foundInf.bytes()[0] = 7;
  Status s = c.run(pool);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (!s)
    return -1;
  return static_cast<unsigned char>(foundInf.bytes()[0]);
}

void expectValues(const Buf &got, const std::vector<double> &want,
                  const std::string &what) {
  ASSERT_EQ(got.size(), static_cast<int64_t>(want.size())) << what;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (std::isnan(want[i]))
      EXPECT_TRUE(std::isnan(got.get(i))) << what << " element " << i;
    else
      EXPECT_EQ(got.get(i), want[i]) << what << " element " << i;
  }
}

//===----------------------------------------------------------------------===//
// unscale_and_check
//===----------------------------------------------------------------------===//

TEST(UnscaleAndCheck, PowerOfTwoScaleRoundsIntoEachDType) {
  Buf scale = scaleBuf(65536), found(DType::I1, {});
  Buf g16 =
      makeBuf(DType::F16, {6}, {65504, 1, -2, 0x1p-8, 0x1p-9, 0.005859375});
  Buf gbf = makeBuf(DType::BF16, {4}, {1.5, -3, 0x1p-130, 0x1p127});
  Buf g32 = makeBuf(DType::F32, {4}, {1e-8f, 65504, FLT_MAX, -1e-30f});
  Buf u16(DType::F16, {6}), ubf(DType::BF16, {4}), u32(DType::F32, {4});
  Call c = unscaleCall({&g16, &gbf, &g32}, scale, {&u16, &ubf, &u32}, found);
  EXPECT_EQ(runFound(c, found), 0);
  // f16: 2^-24 is its smallest subnormal; 2^-25 ties to even (0) and
  // 1.5 * 2^-24 ties to even (2^-23).
  expectValues(u16,
               {0.99951171875, 1.52587890625e-05, -3.0517578125e-05,
                5.960464477539063e-08, 0, 1.1920928955078125e-07},
               "f16");
  // bf16: 2^-146 is below its smallest subnormal, 2^-133.
  expectValues(ubf, {2.288818359375e-05, -4.57763671875e-05, 0, 0x1p111},
               "bf16");
  expectValues(u32,
               {std::ldexp(1e-8f, -16), 0.99951171875, std::ldexp(FLT_MAX, -16),
                std::ldexp(-1e-30f, -16)},
               "f32");
}

TEST(UnscaleAndCheck, ProductIsFormedInFloatThenRounded) {
  // 1.0f / 3.0f = 11184811 * 2^-25; 3 times that is 1 + 2^-25, which f32
  // rounds to 1 and f64 keeps.
  Buf scale = scaleBuf(3), found(DType::I1, {});
  Buf g32 = makeBuf(DType::F32, {2}, {1, 3}),
      g16 = makeBuf(DType::F16, {1}, {1}),
      g64 = makeBuf(DType::F64, {2}, {1, 3});
  Buf u32(DType::F32, {2}), u16(DType::F16, {1}), u64(DType::F64, {2});
  Call c = unscaleCall({&g32, &g16, &g64}, scale, {&u32, &u16, &u64}, found);
  EXPECT_EQ(runFound(c, found), 0);
  expectValues(u32, {0.3333333432674408, 1.0}, "f32");
  expectValues(u16, {0.333251953125}, "f16");
  expectValues(u64, {0.3333333432674408, 1.0000000298023224}, "f64");
}

// Three gradients of 40000 elements (several chunks, on several threads):
// one non-finite element anywhere raises the flag, and every other element
// is still unscaled.
TEST(UnscaleAndCheck, AnyNonFiniteElementOfAnyDTypeIsFound) {
  const Shape s = {40000};
  struct Case {
    const char *what;
    int tensor;
    int64_t index;
    double value;
  };
  const Case cases[] = {{"none", -1, 0, 0},
                        {"inf in f32, last element", 0, 39999, kInf},
                        {"-inf in f16, middle", 1, 20001, -kInf},
                        {"NaN in bf16, first element", 2, 0, kNaN},
                        {"NaN in f32, chunk boundary", 0, 16384, kNaN}};
  for (const Case &k : cases) {
    SCOPED_TRACE(k.what);
    Buf g[3] = {randomBuf(DType::F32, s, 1, -1000, 1000),
                randomBuf(DType::F16, s, 2, -1000, 1000),
                randomBuf(DType::BF16, s, 3, -1000, 1000)};
    if (k.tensor >= 0)
      g[k.tensor].set(k.index, k.value);
    Buf u[3] = {Buf(DType::F32, s), Buf(DType::F16, s), Buf(DType::BF16, s)};
    Buf scale = scaleBuf(1024), found(DType::I1, {});
    Call c =
        unscaleCall({&g[0], &g[1], &g[2]}, scale, {&u[0], &u[1], &u[2]}, found);
    EXPECT_EQ(runFound(c, found, &testPool()), k.tensor >= 0 ? 1 : 0);
    for (int t = 0; t < 3; ++t) {
      // g / 1024 is exact in f32; storing it rounds once (into f16
      // subnormals for the smallest values).
      Buf want(g[t].dtype, s);
      for (int64_t i = 0; i < s[0]; ++i)
        want.set(i, g[t].get(i) / 1024);
      expectValues(u[t], want.values(), std::string(name(g[t].dtype)));
    }
  }
}

TEST(UnscaleAndCheck, InPlaceGivesTheSameBitsAsSeparateOutputs) {
  const Shape s = {50001};
  for (double bad : {0.0, kInf}) {
    for (float sc : {3.0f, 1024.0f, 0.25f}) {
      SCOPED_TRACE("scale " + std::to_string(sc) +
                   (bad != 0 ? " with inf" : ""));
      Buf g[3] = {randomBuf(DType::F32, s, 4, -100, 100),
                  randomBuf(DType::F16, s, 5, -100, 100),
                  randomBuf(DType::F64, s, 6, -100, 100)};
      if (bad != 0)
        g[1].set(777, bad);
      Buf u[3] = {Buf(DType::F32, s), Buf(DType::F16, s), Buf(DType::F64, s)};
      Buf scale = scaleBuf(sc), found(DType::I1, {});
      int separate = runFound(unscaleCall({&g[0], &g[1], &g[2]}, scale,
                                          {&u[0], &u[1], &u[2]}, found),
                              found, &testPool());
      int inPlace = runFound(unscaleCall({&g[0], &g[1], &g[2]}, scale,
                                         {&g[0], &g[1], &g[2]}, found),
                             found, &testPool());
      EXPECT_EQ(separate, bad != 0 ? 1 : 0);
      EXPECT_EQ(inPlace, separate);
      for (int t = 0; t < 3; ++t)
        EXPECT_TRUE(sameBits(g[t], u[t])) << name(g[t].dtype);
    }
  }
}

// With a scale below 1 (a static scale, or a dynamic one backed off that
// far), a finite gradient can overflow once unscaled: that is an overflow
// too, even where f32 still holds the product.
TEST(UnscaleAndCheck, FiniteGradientThatOverflowsWhenUnscaled) {
  Buf found(DType::I1, {});
  {
    Buf scale = scaleBuf(0.5), g = makeBuf(DType::F16, {2}, {60000, 1}),
        u(DType::F16, {2});
    EXPECT_EQ(runFound(unscaleCall({&g}, scale, {&u}, found), found), 1);
    expectValues(u, {kInf, 2}, "f16");
    g = makeBuf(DType::F16, {2}, {30000, 1});
    EXPECT_EQ(runFound(unscaleCall({&g}, scale, {&u}, found), found), 0);
    expectValues(u, {60000, 2}, "f16");
  }
  {
    // Half the bf16 maximum over 0.499: 3.396e38 in f32, inf in bf16.
    Buf scale = scaleBuf(0.499f),
        g = makeBuf(DType::BF16, {1}, {1.6947656946257677e38}),
        u(DType::BF16, {1});
    EXPECT_EQ(runFound(unscaleCall({&g}, scale, {&u}, found), found), 1);
    expectValues(u, {kInf}, "bf16");
  }
  {
    Buf scale = scaleBuf(0.5), g = makeBuf(DType::F32, {1}, {2e38}),
        u(DType::F32, {1});
    EXPECT_EQ(runFound(unscaleCall({&g}, scale, {&u}, found), found), 1);
  }
}

TEST(UnscaleAndCheck, SkipClearsTheFlagAndWritesNothing) {
  Buf scale = scaleBuf(2), found(DType::I1, {});
  Buf g1 = makeBuf(DType::F16, {3}, {1, kNaN, 4}),
      g2 = makeBuf(DType::F32, {2}, {8, kInf});
  Buf g1Before = g1, g2Before = g2;
  Buf u1 = makeBuf(DType::F16, {3}, {9, 9, 9}),
      u2 = makeBuf(DType::F32, {2}, {9, 9});
  Buf skip = flagBuf(true);
  // In place and out of place: the gradients stay as they were.
  EXPECT_EQ(
      runFound(unscaleCall({&g1, &g2}, scale, {&u1, &u2}, found, &skip), found),
      0);
  EXPECT_EQ(
      runFound(unscaleCall({&g1, &g2}, scale, {&g1, &g2}, found, &skip), found),
      0);
  EXPECT_TRUE(sameBits(g1, g1Before));
  EXPECT_TRUE(sameBits(g2, g2Before));
  // skip = 0 is the call without skip.
  Buf noSkip = flagBuf(false), w1(DType::F16, {3}), w2(DType::F32, {2});
  EXPECT_EQ(runFound(unscaleCall({&g1, &g2}, scale, {&u1, &u2}, found, &noSkip),
                     found),
            1);
  EXPECT_EQ(runFound(unscaleCall({&g1, &g2}, scale, {&w1, &w2}, found), found),
            1);
  EXPECT_TRUE(sameBits(u1, w1));
  EXPECT_TRUE(sameBits(u2, w2));
  expectValues(u1, {0.5, kNaN, 2}, "f16");
  expectValues(u2, {4, kInf}, "f32");
}

TEST(UnscaleAndCheck, EmptyGradients) {
  Buf scale = scaleBuf(2), found(DType::I1, {}), g(DType::F32, {0, 3}),
      u(DType::F32, {0, 3});
  EXPECT_EQ(runFound(unscaleCall({&g}, scale, {&u}, found), found), 0);
}

TEST(UnscaleAndCheck, CheckErrors) {
  Buf scale = scaleBuf(2), found(DType::I1, {}), skip = flagBuf(false);
  Buf g0(DType::F32, {4}), g1(DType::F16, {2, 3}), u0(DType::F32, {4}),
      u1(DType::F16, {2, 3});
  EXPECT_TRUE(unscaleCall({&g0, &g1}, scale, {&u0, &u1}, found).check());
  EXPECT_TRUE(unscaleCall({&g0, &g1}, scale, {&u0, &u1}, found, &skip).check());

  Buf u1f32(DType::F32, {2, 3});
  expectError(unscaleCall({&g0, &g1}, scale, {&u0, &u1f32}, found).check(),
              "op 'unscale_and_check': gradient 1 is f16 but its unscaled "
              "output is f32");
  Buf u1shape(DType::F16, {3, 2});
  expectError(unscaleCall({&g0, &g1}, scale, {&u0, &u1shape}, found).check(),
              "gradient 1 has shape [2, 3] but its unscaled output has [3, 2]");
  Buf gi(DType::I64, {4}), ui(DType::I64, {4});
  expectError(unscaleCall({&g0, &gi}, scale, {&u0, &ui}, found).check(),
              "gradient 1 must be f32, f16, bf16 or f64, got i64");
  Buf scale16 = makeBuf(DType::F16, {}, {2}), scaleVec(DType::F32, {1});
  expectError(unscaleCall({&g0}, scale16, {&u0}, found).check(),
              "scale (input 1) must be a scalar (rank 0) f32 tensor, got "
              "tensor<f16>");
  expectError(unscaleCall({&g0}, scaleVec, {&u0}, found).check(),
              "scale (input 1) must be a scalar (rank 0) f32 tensor, got "
              "tensor<1xf32>");
  Buf skipF32 = scaleBuf(0);
  expectError(unscaleCall({&g0}, scale, {&u0}, found, &skipF32).check(),
              "skip (input 2) must be a scalar (rank 0) i1 tensor, got "
              "tensor<f32>");
  Buf foundF32(DType::F32, {}), foundVec(DType::I1, {1});
  expectError(unscaleCall({&g0, &g1}, scale, {&u0, &u1}, foundF32).check(),
              "found_inf (output 2) must be a scalar (rank 0) i1 tensor, got "
              "tensor<f32>");
  expectError(unscaleCall({&g0}, scale, {&u0}, foundVec).check(),
              "found_inf (output 1) must be a scalar (rank 0) i1 tensor");
  // Counts: a gradient without its unscaled output...
  expectError(unscaleCall({&g0, &g1}, scale, {&u0}, found, &skip).check(),
              "has 1 unscaled outputs, so expects 2 inputs (the gradients, "
              "then scale) or 3 (then skip), got 4");
  // ... and found_inf alone has no gradient.
  Call none{"unscale_and_check", {}, {&scale}, {&found}};
  expectError(none.check(), "expects at least 2 outputs (the unscaled "
                            "gradients, then found_inf), got 1");
  Call absent = unscaleCall({&g0}, scale, {&u0}, found, &skip);
  absent.ins[2] = nullptr;
  expectError(absent.check(), "input 2 is required but marked absent");
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
