//===- ActivationGradKernelsTest.cpp - elementwise activation gradients ---===//
//
// relu_grad, abs_grad, leaky_relu_grad, gelu_grad (both forms), clip_grad,
// hard_sigmoid_grad and hard_swish_grad: in f64 against central finite
// differences of the forward kernels; in f32, f16 and bf16 against the f64
// kernel on the same stored values; inside fused chains bit for bit against the
// ops run one by one; and the check() errors.
//
//===----------------------------------------------------------------------===//
#include "GradCheckUtil.h"
#include "runtime/ops/Check.h"
#include "runtime/ops/ElementwisePlan.h"

#include <algorithm>
#include <functional>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

struct ActCase {
  const char *name;    // test label
  const char *forward; // forward op
  std::function<void(Attrs &)> attrs;
  std::vector<double> kinks; // where the derivative jumps: sampled away
};

std::vector<ActCase> cases() {
  return {
      {"relu", "relu", [](Attrs &) {}, {0.0}},
      {"abs", "abs", [](Attrs &) {}, {0.0}},
      {"leaky_relu",
       "leaky_relu",
       [](Attrs &a) { a.setFloat("alpha", 0.3); },
       {0.0}},
      {"leaky_relu_onnx_alpha",
       "leaky_relu",
       [](Attrs &a) { a.setFloat("alpha", 0.01); },
       {0.0}},
      {"gelu_none",
       "gelu",
       [](Attrs &a) { a.setString("approximate", "none"); },
       {}},
      {"gelu_tanh",
       "gelu",
       [](Attrs &a) { a.setString("approximate", "tanh"); },
       {}},
      {"clip",
       "clip",
       [](Attrs &a) {
         a.setFloat("min", -0.75);
         a.setFloat("max", 1.25);
       },
       {-0.75, 1.25}},
      {"clip_min_only",
       "clip",
       [](Attrs &a) { a.setFloat("min", -0.5); },
       {-0.5}},
      {"clip_max_only",
       "clip",
       [](Attrs &a) { a.setFloat("max", 0.25); },
       {0.25}},
      {"clip_unbounded", "clip", [](Attrs &) {}, {}},
      // The slope ends where alpha x + beta is 0 and 1.
      {"hard_sigmoid",
       "hard_sigmoid",
       [](Attrs &a) {
         a.setFloat("alpha", 0.25);
         a.setFloat("beta", 0.4);
       },
       {-1.6, 2.4}},
      {"hard_sigmoid_onnx",
       "hard_sigmoid",
       [](Attrs &a) {
         a.setFloat("alpha", 0.2);
         a.setFloat("beta", 0.5);
       },
       {-2.5, 2.5}},
      {"hard_swish", "hard_swish", [](Attrs &) {}, {-3, 3}},
  };
}

// Uniform in [-3, 3), at least 0.05 from every kink, so x +- h never
// crosses one (h is 1e-6 there).
Buf inputAwayFromKinks(DType t, Shape s, uint32_t seed,
                       const std::vector<double> &kinks) {
  Buf b(t, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-3, 3);
  for (int64_t i = 0; i < b.size(); ++i) {
    double v;
    do
      v = u(rng);
    while (std::any_of(kinks.begin(), kinks.end(),
                       [&](double k) { return std::fabs(v - k) < 0.05; }));
    b.set(i, v);
  }
  return b;
}

Call gradCall(const ActCase &c, Buf *g, Buf *x, Buf *out) {
  Call call{std::string(c.forward) + "_grad", {}, {g, x}, {out}};
  c.attrs(call.attrs);
  return call;
}

TEST(ActivationGradKernels, MatchFiniteDifferencesOfTheForwardInF64) {
  uint32_t seed = 10;
  for (const ActCase &c : cases()) {
    for (Shape s : {Shape{7}, Shape{3, 4, 5}}) {
      SCOPED_TRACE(std::string(c.name) + " " + str(s));
      Buf x = inputAwayFromKinks(DType::F64, s, seed++, c.kinks);
      Buf dy = randomBuf(DType::F64, s, seed++, -2, 2);
      Buf y(DType::F64, s), dx(DType::F64, s);
      Call fwd{c.forward, {}, {&x}, {&y}};
      c.attrs(fwd.attrs);
      Status st = gradCall(c, &dy, &x, &dx).run();
      ASSERT_TRUE(st.isOk()) << st.message();
      expectMatchesNumeric(dx, numericGrad(fwd, x, dy), c.name);
    }
  }
}

// Values exact in every dtype, checked by hand: the selected (not
// multiplied) cases keep an inf grad out of the cut-off region, bounds are
// inclusive, and abs_grad is 0 at 0.
TEST(ActivationGradKernels, HandCheckedValuesAtKinksAndBounds) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> x = {-2, -0.0, 0, 0.5, 1, 3};
  std::vector<double> g = {inf, 4, 4, -2, 8, 1};
  struct Expect {
    const char *op;
    std::function<void(Attrs &)> attrs;
    std::vector<double> want;
  };
  std::vector<Expect> expects = {
      {"relu_grad", [](Attrs &) {}, {0, 0, 0, -2, 8, 1}},
      {"abs_grad", [](Attrs &) {}, {-inf, 0, 0, -2, 8, 1}},
      {"leaky_relu_grad",
       [](Attrs &a) { a.setFloat("alpha", 0.25); },
       {inf, 1, 1, -2, 8, 1}},
      {"clip_grad",
       [](Attrs &a) {
         a.setFloat("min", 0);
         a.setFloat("max", 1);
       },
       {0, 4, 4, -2, 8, 0}},
      // alpha x + beta is 0 at x = -2, where the inf grad is cut off, and
      // past 1 at x = 3 (HardSigmoidGradAtItsEnds checks 1 itself).
      {"hard_sigmoid_grad",
       [](Attrs &a) {
         a.setFloat("alpha", 0.25);
         a.setFloat("beta", 0.5);
       },
       {0, 1, 1, -0.5, 2, 0}},
      {"gelu_grad",
       [](Attrs &a) { a.setString("approximate", "none"); },
       {}}, // checked below at 0: 0.5 * grad
  };
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    for (const Expect &e : expects) {
      SCOPED_TRACE(std::string(e.op) + " " + std::string(name(t)));
      Buf xb = makeBuf(t, {6}, x), gb = makeBuf(t, {6}, g), out(t, {6});
      Call c{e.op, {}, {&gb, &xb}, {&out}};
      e.attrs(c.attrs);
      Status st = c.run();
      ASSERT_TRUE(st.isOk()) << st.message();
      if (e.want.empty()) {
        EXPECT_EQ(out.get(2), 2.0); // Phi(0) + 0 * phi(0) = 1/2
        continue;
      }
      for (int i = 0; i < 6; ++i)
        EXPECT_EQ(out.get(i), e.want[i]) << "element " << i;
    }
  }
}

// alpha x + beta (alpha 0.25, beta 0.5) is 0 at x = -2 and 1 at x = 2:
// both ends are cut off, an inf grad there included, and so is NaN.
TEST(ActivationGradKernels, HardSigmoidGradAtItsEnds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {-3, -2, 0, 2, 3, nan};
  std::vector<double> g = {inf, inf, 4, inf, 8, 3};
  std::vector<double> want = {0, 0, 1, 0, 0, 0};
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(name(t));
    Buf xb = makeBuf(t, {6}, x), gb = makeBuf(t, {6}, g), out(t, {6});
    Call c{"hard_sigmoid_grad", {}, {&gb, &xb}, {&out}};
    c.attrs.setFloat("alpha", 0.25);
    c.attrs.setFloat("beta", 0.5);
    Status st = c.run();
    ASSERT_TRUE(st.isOk()) << st.message();
    for (int i = 0; i < 6; ++i)
      EXPECT_EQ(out.get(i), want[i]) << "element " << i;
  }
}

// PyTorch's hardswish_backward: 0 below -3 (an inf grad too), grad * (x / 3
// + 0.5) on [-3, 3], grad above 3 and at NaN. Exact in every dtype.
TEST(ActivationGradKernels, HardSwishGradAtItsEnds) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> x = {-4, -3, -1.5, 0, 1.5, 3, 4, nan};
  std::vector<double> g = {inf, 2, 4, 4, 4, 2, 8, 3};
  std::vector<double> want = {0, -1, 0, 2, 4, 3, 8, 3};
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(name(t));
    Buf xb = makeBuf(t, {8}, x), gb = makeBuf(t, {8}, g), out(t, {8});
    Status st = Call{"hard_swish_grad", {}, {&gb, &xb}, {&out}}.run();
    ASSERT_TRUE(st.isOk()) << st.message();
    for (int i = 0; i < 8; ++i)
      EXPECT_EQ(out.get(i), want[i]) << "element " << i;
  }
}

TEST(ActivationGradKernels, LowPrecisionMatchesF64OnTheSameValues) {
  uint32_t seed = 100;
  cpu::ThreadPool &pool = testPool();
  for (DType t : kLowFloats) {
    for (const ActCase &c : cases()) {
      SCOPED_TRACE(std::string(c.name) + " " + std::string(name(t)));
      // Large enough for several chunks and threads.
      Shape s{37, 1029};
      Buf x = inputAwayFromKinks(t, s, seed++, c.kinks);
      Buf g = randomBuf(t, s, seed++, -4, 4);
      Buf out(t, s);
      Status st = gradCall(c, &g, &x, &out).run(&pool);
      ASSERT_TRUE(st.isOk()) << st.message();
      Buf x64 = asF64(x), g64 = asF64(g), ref(DType::F64, s);
      st = gradCall(c, &g64, &x64, &ref).run();
      ASSERT_TRUE(st.isOk()) << st.message();
      expectCloseToF64(out, ref, c.name);
    }
  }
}

ops::FusedStep step(const char *op, std::vector<int> operands, DType t) {
  ops::FusedStep s;
  s.op = op;
  s.operands = std::move(operands);
  s.dtype = t;
  return s;
}

// A backward chain through every gradient op and three dtypes, fused and
// op by op: each intermediate is rounded as if stored, so the results are
// the same bits.
TEST(ActivationGradKernels, FusedChainEqualsStepByStepBitForBit) {
  for (Shape s : {Shape{3, 5}, Shape{41, 300}}) {
    for (cpu::ThreadPool *p :
         {static_cast<cpu::ThreadPool *>(nullptr), &testPool()}) {
      SCOPED_TRACE(str(s));
      Buf g = randomBuf(DType::F16, s, 1, -3, 3);
      Buf x = randomBuf(DType::F16, s, 2, -3, 3);
      Buf x32 = randomBuf(DType::F32, s, 3, -3, 3);
      Buf xb = randomBuf(DType::BF16, s, 4, -3, 3);

      Buf s0(DType::F16, s), s1(DType::F16, s), s2(DType::F32, s),
          s3(DType::F32, s), s4(DType::F32, s), s5(DType::F32, s),
          s6(DType::BF16, s), want(DType::BF16, s);
      Call c0{"relu_grad", {}, {&g, &x}, {&s0}};
      Call c1{"leaky_relu_grad", {}, {&s0, &x}, {&s1}};
      c1.attrs.setFloat("alpha", 0.1);
      Call c2{"cast", {}, {&s1}, {&s2}};
      Call c3{"gelu_grad", {}, {&s2, &x32}, {&s3}};
      c3.attrs.setString("approximate", "tanh");
      Call c4{"clip_grad", {}, {&s3, &x32}, {&s4}};
      c4.attrs.setFloat("min", -1.5);
      c4.attrs.setFloat("max", 2);
      Call c5{"abs_grad", {}, {&s4, &x32}, {&s5}};
      Call c6{"cast", {}, {&s5}, {&s6}};
      Call c7{"gelu_grad", {}, {&s6, &xb}, {&want}};
      c7.attrs.setString("approximate", "none");
      for (Call *c : {&c0, &c1, &c2, &c3, &c4, &c5, &c6, &c7}) {
        Status st = c->run(p);
        ASSERT_TRUE(st.isOk()) << c->op << ": " << st.message();
      }

      std::vector<ops::FusedStep> steps = {
          step("relu_grad", {0, 1}, DType::F16),
          step("leaky_relu_grad", {-1, 1}, DType::F16),
          step("cast", {-2}, DType::F32),
          step("gelu_grad", {-3, 2}, DType::F32),
          step("clip_grad", {-4, 2}, DType::F32),
          step("abs_grad", {-5, 2}, DType::F32),
          step("cast", {-6}, DType::BF16),
          step("gelu_grad", {-7, 3}, DType::BF16),
      };
      steps[1].attrs.setFloat("alpha", 0.1);
      steps[3].attrs.setString("approximate", "tanh");
      steps[7].attrs.setString("approximate", "none");
      steps[4].attrs.setFloat("min", -1.5);
      steps[4].attrs.setFloat("max", 2);
      Buf got(DType::BF16, s);
      Call fused{"fused", {}, {&g, &x, &x32, &xb}, {&got}};
      ops::OpCall call = fused.make(true);
      call.steps = &steps;
      Status st = ops::checkKernel(call);
      ASSERT_TRUE(st.isOk()) << st.message();
      cpu::CpuContext ctx{p};
      st = cpu::runKernel(call, ctx);
      ASSERT_TRUE(st.isOk()) << st.message();
      EXPECT_TRUE(sameBits(got, want));
    }
  }
}

// The memory planner may write a fused gradient over its incoming grad.
TEST(ActivationGradKernels, FusedReluGradInPlace) {
  Shape s{5, 999};
  Buf g = randomBuf(DType::F32, s, 7, -3, 3);
  Buf x = randomBuf(DType::F32, s, 8, -3, 3);
  Buf want(DType::F32, s);
  ASSERT_TRUE(Call({"relu_grad", {}, {&g, &x}, {&want}}).run().isOk());
  std::vector<ops::FusedStep> steps = {step("relu_grad", {0, 1}, DType::F32)};
  Call fused{"fused", {}, {&g, &x}, {&g}};
  ops::OpCall call = fused.make(true);
  call.steps = &steps;
  cpu::CpuContext ctx{&testPool()};
  ASSERT_TRUE(ops::checkKernel(call).isOk());
  ASSERT_TRUE(cpu::runKernel(call, ctx).isOk());
  EXPECT_TRUE(sameBits(g, want));
}

// Every gradient op of runtime/ops/Elementwise.def is checked above through
// a case of its forward op: a new one without a case fails here, so a
// kernel case a backend lacks cannot go unnoticed.
TEST(ActivationGradKernels, EveryGradientOpHasACase) {
  const std::vector<ActCase> all = cases();
  for (const ops::ew::OpInfo &op : ops::ew::allOps()) {
    if (op.sig != ops::ew::Sig::Grad)
      continue;
    std::string name = op.name;
    EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                            [&](const ActCase &c) {
                              return std::string(c.forward) + "_grad" == name;
                            }))
        << name << " has no case in cases()";
  }
}

TEST(ActivationGradKernels, RegisteredAsElementwise) {
  std::vector<std::string> names = cpu::kernelNames();
  for (const char *op :
       {"relu_grad", "abs_grad", "leaky_relu_grad", "gelu_grad", "clip_grad",
        "hard_sigmoid_grad", "hard_swish_grad"}) {
    EXPECT_TRUE(ops::aliasingOf(op) == ops::Aliasing::Elementwise) << op;
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op;
  }
}

TEST(ActivationGradKernels, CheckErrors) {
  Buf g32(DType::F32, {2, 3}), x32(DType::F32, {2, 3}), x16(DType::F16, {2, 3});
  Buf xBig(DType::F32, {4, 3}), out(DType::F32, {2, 3}),
      out16(DType::F16, {2, 3});
  Buf gi(DType::I64, {2, 3}), xi(DType::I64, {2, 3}), outi(DType::I64, {2, 3});
  expectError(Call({"relu_grad", {}, {&g32, &x16}, {&out}}).check(),
              "grad has dtype f32 but input has f16");
  expectError(Call({"abs_grad", {}, {&gi, &xi}, {&outi}}).check(),
              "grad has dtype i64, which the op does not accept (float types "
              "only)");
  expectError(Call({"leaky_relu_grad", {}, {&g32, &x32}, {&out16}}).check(),
              "output has dtype f16 but f32 was expected");
  expectError(Call({"relu_grad", {}, {&g32, &xBig}, {&out}}).check(),
              "operand shapes do not broadcast");
  expectError(Call({"relu_grad", {}, {&g32}, {&out}}).check(),
              "expects 2 inputs, got 1");
  {
    Call c{"gelu_grad", {}, {&g32, &x32}, {&out}};
    c.attrs.setString("approximate", "erf");
    expectError(c.check(), "attribute 'approximate' must be \"none\" or "
                           "\"tanh\", got \"erf\"");
  }
  {
    Call c{"clip_grad", {}, {&g32, &x32}, {&out}};
    c.attrs.setFloat("min", 1);
    c.attrs.setFloat("max", 0);
    expectError(c.check(), "attribute 'min' (1.000000) is greater than 'max'");
  }
  {
    Call c{"leaky_relu_grad", {}, {&g32, &x32}, {&out}};
    c.attrs.setString("alpha", "big");
    expectError(c.check(), "attribute 'alpha' must be a float");
  }
  {
    std::vector<ops::FusedStep> steps = {step("relu_grad", {0, 1}, DType::F32)};
    Call f{"fused", {}, {&g32, &x16}, {&out}};
    ops::OpCall call = f.make(false);
    call.steps = &steps;
    expectError(ops::checkKernel(call),
                "step 0 ('relu_grad'): grad has dtype f32 but input has f16");
  }
}

} // namespace
