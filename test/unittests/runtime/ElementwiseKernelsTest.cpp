//===- ElementwiseKernelsTest.cpp - elementwise and fused CPU kernels -----===//
//
// References are naive double-precision loops and hand-computed values
// written here; fused chains are compared bit for bit with the same ops run
// one by one.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "runtime/cpu/Parallel.h"
#include "runtime/ops/ElementwisePlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <map>

using namespace ampc::rt;
using namespace ampc::rt::test;

namespace {

const DType kFloatTypes[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

// Relative tolerance of one rounding of a transcendental computed in f32
// (a few f32 ulps) and stored in `t`.
double tolerance(DType t) {
  switch (t) {
  case DType::F64:
    return 1e-13;
  case DType::F32:
    return 4e-7;
  case DType::F16:
    return 1.0 / 1024; // one f16 ulp: a near-tie may round either way
  case DType::BF16:
    return 1.0 / 128;
  default:
    return 0;
  }
}

// Rounds a double to what storing it in `t` gives, for results that are
// correctly rounded in f32 (so rounding f64 -> f32 -> 16 bits is exact).
double roundTo(DType t, double v) {
  Tensor x(t, {1});
  if (t == DType::F16 || t == DType::BF16)
    x.set(0, static_cast<float>(v));
  else
    x.set(0, v);
  return x.get(0);
}

struct UnaryCase {
  const char *op;
  std::function<double(double)> ref;
  double lo, hi;
  std::function<void(Attrs &)> attrs;
};

double geluRef(double x) {
  return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
}
double geluTanhRef(double x) {
  return 0.5 * x *
         (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
}

// One reference per float unary op (and one per attribute variant).
std::vector<UnaryCase> unaryCases() {
  return {
      {"relu", [](double x) { return x > 0 ? x : 0; }, -4, 4, nullptr},
      {"tanh", [](double x) { return std::tanh(x); }, -4, 4, nullptr},
      {"sigmoid", [](double x) { return 1 / (1 + std::exp(-x)); }, -8, 8,
       nullptr},
      {"erf", [](double x) { return std::erf(x); }, -3, 3, nullptr},
      {"exp", [](double x) { return std::exp(x); }, -5, 5, nullptr},
      {"log", [](double x) { return std::log(x); }, 0.01, 50, nullptr},
      {"sqrt", [](double x) { return std::sqrt(x); }, 0, 100, nullptr},
      {"reciprocal", [](double x) { return 1 / x; }, 0.1, 10, nullptr},
      {"neg", [](double x) { return -x; }, -4, 4, nullptr},
      {"abs", [](double x) { return std::fabs(x); }, -4, 4, nullptr},
      {"gelu", geluRef, -5, 5,
       [](Attrs &a) { a.setString("approximate", "none"); }},
      {"gelu", geluTanhRef, -5, 5,
       [](Attrs &a) { a.setString("approximate", "tanh"); }},
      {"leaky_relu", [](double x) { return x >= 0 ? x : 0.01 * x; }, -4, 4,
       [](Attrs &a) { a.setFloat("alpha", 0.01); }},
      {"leaky_relu", [](double x) { return x >= 0 ? x : 0.25 * x; }, -4, 4,
       [](Attrs &a) { a.setFloat("alpha", 0.25); }},
      {"hard_sigmoid",
       [](double x) { return std::min(std::max(0.2 * x + 0.5, 0.0), 1.0); }, -4,
       4,
       [](Attrs &a) {
         a.setFloat("alpha", 0.2);
         a.setFloat("beta", 0.5);
       }},
      // PyTorch's nn.Hardsigmoid: relu6(x + 3) / 6.
      {"hard_sigmoid",
       [](double x) { return std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -4, 4,
       [](Attrs &a) {
         a.setFloat("alpha", 1.0 / 6);
         a.setFloat("beta", 0.5);
       }},
      {"hard_swish",
       [](double x) { return x * std::min(std::max(x + 3, 0.0), 6.0) / 6; }, -5,
       5, nullptr},
      {"sin", [](double x) { return std::sin(x); }, -6, 6, nullptr},
      {"cos", [](double x) { return std::cos(x); }, -6, 6, nullptr},
      {"softplus", [](double x) { return std::log1p(std::exp(x)); }, -30, 30,
       nullptr},
      {"clip", [](double x) { return std::min(std::max(x, -1.5), 2.25); }, -4,
       4,
       [](Attrs &a) {
         a.setFloat("min", -1.5);
         a.setFloat("max", 2.25);
       }},
  };
}

TEST(ElementwiseKernels, FloatUnaryOpsMatchDoubleReference) {
  std::vector<UnaryCase> cases = unaryCases();
  for (const UnaryCase &c : cases) {
    for (DType t : kFloatTypes) {
      SCOPED_TRACE(std::string(c.op) + " " + std::string(name(t)));
      Tensor in = randomTensor(t, {3, 700}, c.lo, c.hi, 7);
      Tensor out(t, {3, 700});
      Call call(c.op, {&in}, {&out});
      if (c.attrs)
        c.attrs(call.attrs);
      ASSERT_TRUE(call.run()) << call.run().message();
      for (int64_t i = 0; i < in.size(); ++i) {
        double want = c.ref(in.get(i));
        double got = out.get(i);
        // The absolute part covers 1 + erf(x / sqrt2) cancelling in f32
        // for very negative x (gelu computes that formula, as PyTorch does).
        double tol =
            tolerance(t) * std::fabs(want) + (t == DType::F64 ? 1e-15 : 1e-6);
        ASSERT_NEAR(got, want, tol) << "x=" << in.get(i) << " i=" << i;
      }
    }
  }
}

// Every float unary op of runtime/ops/Elementwise.def has a reference
// above: a new one without a case fails here, so a kernel case a backend
// lacks cannot go unnoticed.
TEST(ElementwiseKernels, EveryFloatUnaryOpHasAReference) {
  const std::vector<UnaryCase> all = unaryCases();
  for (const ops::ew::OpInfo &op : ops::ew::allOps()) {
    if (op.sig != ops::ew::Sig::FloatUnary)
      continue;
    std::string name = op.name;
    EXPECT_TRUE(std::any_of(all.begin(), all.end(),
                            [&](const UnaryCase &c) { return c.op == name; }))
        << name << " has no case in unaryCases()";
  }
}

TEST(ElementwiseKernels, ExactOpsAreCorrectlyRoundedInEveryFloatType) {
  // sqrt, reciprocal, neg, abs, relu and leaky_relu(0.25) of f16/bf16 values
  // computed in f32 and rounded once are the correctly rounded results.
  for (DType t : kFloatTypes) {
    Tensor in = randomTensor(t, {1000}, -30, 30, 3);
    for (const char *op : {"sqrt", "reciprocal", "neg", "abs", "relu"}) {
      SCOPED_TRACE(std::string(op) + " " + std::string(name(t)));
      Tensor out(t, {1000});
      Call call(op, {&in}, {&out});
      ASSERT_TRUE(call.run());
      for (int64_t i = 0; i < 1000; ++i) {
        double x = in.get(i), want;
        std::string o = op;
        if (o == "sqrt")
          want = std::sqrt(x);
        else if (o == "reciprocal")
          want = 1 / x;
        else if (o == "neg")
          want = -x;
        else if (o == "abs")
          want = std::fabs(x);
        else
          want = x > 0 ? x : 0;
        want = roundTo(t, want);
        double got = out.get(i);
        if (std::isnan(want))
          EXPECT_TRUE(std::isnan(got)) << x;
        else
          EXPECT_EQ(got, want) << "x=" << x;
      }
    }
  }
}

TEST(ElementwiseKernels, ReluPropagatesNaNAndGivesPositiveZero) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor in = makeTensor(DType::F32, {4}, {nan, -0.0, -2, 3});
  Tensor out(DType::F32, {4});
  Call call("relu", {&in}, {&out});
  ASSERT_TRUE(call.run());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.bits(1), 0u); // +0, not -0
  EXPECT_EQ(out.get(2), 0);
  EXPECT_EQ(out.get(3), 3);
}

TEST(ElementwiseKernels, ClipOneSidedNaNAndIntegers) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor in = makeTensor(DType::F32, {4}, {nan, -5, 0.5, 9});
  Tensor out(DType::F32, {4});
  Call lo("clip", {&in}, {&out});
  lo.attrs.setFloat("min", 0);
  ASSERT_TRUE(lo.run());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), 0);
  EXPECT_EQ(out.get(2), 0.5);
  EXPECT_EQ(out.get(3), 9);
  Call hi("clip", {&in}, {&out});
  hi.attrs.setFloat("max", 1);
  ASSERT_TRUE(hi.run());
  EXPECT_EQ(out.get(1), -5);
  EXPECT_EQ(out.get(3), 1);
  Call none("clip", {&in}, {&out});
  ASSERT_TRUE(none.run());
  EXPECT_EQ(out.get(1), -5);
  EXPECT_EQ(out.get(3), 9);

  for (DType t : {DType::I64, DType::I32}) {
    Tensor xi = makeTensor(t, {5}, {-7, -1, 0, 3, 8});
    Tensor yi(t, {5});
    Call c("clip", {&xi}, {&yi});
    c.attrs.setFloat("min", -1.5); // integer bound: -1
    c.attrs.setFloat("max", 3.5);  // integer bound: 3
    ASSERT_TRUE(c.run());
    std::vector<int64_t> want = {-1, -1, 0, 3, 3};
    for (int i = 0; i < 5; ++i)
      EXPECT_EQ(yi.getInt(i), want[i]) << name(t) << " " << i;
  }
  // A bound beyond the i32 range saturates instead of wrapping.
  Tensor xi = makeTensor(DType::I32, {2}, {-7, 5});
  Tensor yi(DType::I32, {2});
  Call c("clip", {&xi}, {&yi});
  c.attrs.setFloat("min", -1e12);
  c.attrs.setFloat("max", 1e12);
  ASSERT_TRUE(c.run());
  EXPECT_EQ(yi.getInt(0), -7);
  EXPECT_EQ(yi.getInt(1), 5);
}

using BinRef = std::function<double(double, double)>;

void checkBinary(const char *op, DType t, const Shape &a, const Shape &b,
                 const Shape &o, const BinRef &ref, double lo, double hi,
                 cpu::ThreadPool *pool = nullptr) {
  SCOPED_TRACE(std::string(op) + " " + std::string(name(t)) + " " + str(a) +
               " " + str(b));
  Tensor x = randomTensor(t, a, lo, hi, 11);
  Tensor y = randomTensor(t, b, lo, hi, 12);
  if (std::string(op) == "div" && !isFloat(t))
    for (int64_t i = 0; i < y.size(); ++i)
      if (y.getInt(i) == 0)
        y.setInt(i, 3);
  Tensor out(t, o);
  Call call(op, {&x, &y}, {&out});
  Status s = call.run(pool);
  ASSERT_TRUE(s) << s.message();
  for (int64_t i = 0; i < out.size(); ++i) {
    auto idx = unravel(i, o);
    double xv = x.get(broadcastSource(idx, a));
    double yv = y.get(broadcastSource(idx, b));
    double want = ref(xv, yv);
    if (isFloat(t))
      want = roundTo(t, want);
    ASSERT_EQ(out.get(i), want) << "i=" << i << " x=" << xv << " y=" << yv;
  }
}

TEST(ElementwiseKernels, BinaryArithmeticBroadcastsAndRoundsOnce) {
  struct Pat {
    Shape a, b, o;
  };
  std::vector<Pat> pats = {
      {{4, 5}, {4, 5}, {4, 5}},
      {{4, 5}, {5}, {4, 5}},
      {{}, {4, 5}, {4, 5}},
      {{5, 1, 7}, {1, 6, 1}, {5, 6, 7}},
      {{2, 3, 4, 5}, {3, 1, 5}, {2, 3, 4, 5}},
      {{1}, {3}, {3}},
      {{0, 3}, {3}, {0, 3}},
      {{7, 1}, {1, 1}, {7, 1}},
      {{3, 300}, {3, 1}, {3, 300}},
  };
  std::vector<std::pair<const char *, BinRef>> ops = {
      {"add", [](double x, double y) { return x + y; }},
      {"sub", [](double x, double y) { return x - y; }},
      {"mul", [](double x, double y) { return x * y; }},
      {"div", [](double x, double y) { return x / y; }},
  };
  for (auto &[op, ref] : ops)
    for (DType t : kFloatTypes)
      for (const Pat &p : pats)
        checkBinary(op, t, p.a, p.b, p.o, ref, -100, 100);
}

TEST(ElementwiseKernels, IntegerArithmeticTruncatesAndWraps) {
  std::vector<std::pair<const char *, BinRef>> ops = {
      {"add", [](double x, double y) { return x + y; }},
      {"sub", [](double x, double y) { return x - y; }},
      {"mul", [](double x, double y) { return x * y; }},
      {"div", [](double x, double y) { return std::trunc(x / y); }},
  };
  for (auto &[op, ref] : ops)
    for (DType t : {DType::I64, DType::I32}) {
      checkBinary(op, t, {6, 7}, {7}, {6, 7}, ref, -1000, 1000);
      checkBinary(op, t, {2, 1, 3}, {4, 1}, {2, 4, 3}, ref, -50, 50);
    }
  // Hand-computed: truncation toward zero, wrapping overflow.
  Tensor a = makeTensor(DType::I32, {4}, {-7, 7, 2147483647, -2147483648.0});
  Tensor b = makeTensor(DType::I32, {4}, {2, -2, 1, -1});
  Tensor q(DType::I32, {4}), s(DType::I32, {4});
  ASSERT_TRUE(Call("div", {&a, &b}, {&q}).run());
  EXPECT_EQ(q.getInt(0), -3);
  EXPECT_EQ(q.getInt(1), -3);
  EXPECT_EQ(q.getInt(3), -2147483648LL); // INT32_MIN / -1 wraps
  ASSERT_TRUE(Call("add", {&a, &b}, {&s}).run());
  EXPECT_EQ(s.getInt(2), -2147483648LL);
  Tensor n = makeTensor(DType::I64, {3}, {-5, 0, 9});
  Tensor neg(DType::I64, {3}), ab(DType::I64, {3});
  ASSERT_TRUE(Call("neg", {&n}, {&neg}).run());
  ASSERT_TRUE(Call("abs", {&n}, {&ab}).run());
  EXPECT_EQ(neg.getInt(0), 5);
  EXPECT_EQ(neg.getInt(2), -9);
  EXPECT_EQ(ab.getInt(0), 5);
  EXPECT_EQ(ab.getInt(2), 9);
}

// Every Num op of runtime/ops/Elementwise.def computes i64 and i32 as this
// reference says. The float loops are generated from the .def's value
// column, the integer loops are written per backend: a Num op without one
// is refused by the CPU backend, and one without a reference here fails.
TEST(ElementwiseKernels, EveryNumOpHasAnIntegerReference) {
  using Ref = std::function<int64_t(int64_t, int64_t)>;
  const std::map<std::string, Ref> refs = {
      {"neg", [](int64_t x, int64_t) { return -x; }},
      {"abs", [](int64_t x, int64_t) { return x < 0 ? -x : x; }},
      {"clip", [](int64_t x, int64_t) { return x; }}, // no bounds given
      {"add", [](int64_t x, int64_t y) { return x + y; }},
      {"sub", [](int64_t x, int64_t y) { return x - y; }},
      {"mul", [](int64_t x, int64_t y) { return x * y; }},
      {"div", [](int64_t x, int64_t y) { return x / y; }},
  };
  const std::vector<double> xs = {-7, -1, 0, 3, 8}, ys = {2, 5, -3, 4, -1};
  for (const ops::ew::OpInfo &op : ops::ew::allOps()) {
    bool unary = op.sig == ops::ew::Sig::NumUnary;
    if (!unary && op.sig != ops::ew::Sig::NumBinary)
      continue;
    auto ref = refs.find(op.name);
    ASSERT_NE(ref, refs.end()) << op.name << " has no integer reference";
    for (DType t : {DType::I64, DType::I32}) {
      Tensor x = makeTensor(t, {5}, xs), y = makeTensor(t, {5}, ys);
      Tensor out(t, {5});
      std::vector<Tensor *> ins = {&x};
      if (!unary)
        ins.push_back(&y);
      Status s = Call(op.name, ins, {&out}).run();
      ASSERT_TRUE(s) << op.name << " " << name(t) << ": " << s.message();
      for (int64_t i = 0; i < 5; ++i)
        EXPECT_EQ(out.getInt(i), ref->second(static_cast<int64_t>(xs[i]),
                                             static_cast<int64_t>(ys[i])))
            << op.name << " " << name(t) << " element " << i;
    }
  }
}

TEST(ElementwiseKernels, IntegerDivisionByZeroIsAnError) {
  Tensor a = makeTensor(DType::I64, {3}, {1, 2, 3});
  Tensor b = makeTensor(DType::I64, {3}, {1, 0, 3});
  Tensor q(DType::I64, {3});
  Status s = Call("div", {&a, &b}, {&q}).run();
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("op 'div'"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("division by zero"), std::string::npos);
  // Float division by zero is IEEE.
  Tensor fa = makeTensor(DType::F32, {2}, {1, -1});
  Tensor fb = makeTensor(DType::F32, {1}, {0});
  Tensor fq(DType::F32, {2});
  ASSERT_TRUE(Call("div", {&fa, &fb}, {&fq}).run());
  EXPECT_EQ(fq.get(0), INFINITY);
  EXPECT_EQ(fq.get(1), -INFINITY);
}

TEST(ElementwiseKernels, Pow) {
  for (DType t : kFloatTypes) {
    Tensor a = randomTensor(t, {4, 50}, 0.1, 4, 1);
    Tensor b = randomTensor(t, {50}, -3, 3, 2);
    Tensor o(t, {4, 50});
    ASSERT_TRUE(Call("pow", {&a, &b}, {&o}).run());
    for (int64_t i = 0; i < o.size(); ++i) {
      double want = std::pow(a.get(i), b.get(i % 50));
      ASSERT_NEAR(o.get(i), want, tolerance(t) * 4 * std::fabs(want))
          << name(t) << " " << i;
    }
  }
}

TEST(ElementwiseKernels, WhereBroadcastsAllThree) {
  for (DType t : {DType::F32, DType::F16, DType::F64, DType::I64, DType::I32,
                  DType::I1}) {
    SCOPED_TRACE(name(t));
    Tensor c = randomTensor(DType::I1, {2, 1, 4}, 0, 2, 5);
    Tensor x = randomTensor(t, {3, 1}, -9, 9, 6);
    Tensor y = randomTensor(t, {}, -9, 9, 7);
    if (t == DType::I1) {
      x = randomTensor(t, {3, 1}, 0, 2, 8);
      y = makeTensor(t, {}, {1});
    }
    Tensor o(t, {2, 3, 4});
    ASSERT_TRUE(Call("where", {&c, &x, &y}, {&o}).run());
    for (int64_t i = 0; i < o.size(); ++i) {
      auto idx = unravel(i, o.shape);
      bool cv = c.get(broadcastSource(idx, c.shape)) != 0;
      uint64_t want = cv ? x.bits(broadcastSource(idx, x.shape)) : y.bits(0);
      ASSERT_EQ(o.bits(i), want) << i;
    }
  }
}

TEST(ElementwiseKernels, CastRoundsTruncatesAndSaturates) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  Tensor f =
      makeTensor(DType::F32, {7}, {-2.7, 2.7, nan, 1e20, -1e20, -0.0, 0.5});
  Tensor i32(DType::I32, {7}), i64(DType::I64, {7}), b(DType::I1, {7});
  ASSERT_TRUE(Call("cast", {&f}, {&i32}).run());
  ASSERT_TRUE(Call("cast", {&f}, {&i64}).run());
  ASSERT_TRUE(Call("cast", {&f}, {&b}).run());
  std::vector<int64_t> want32 = {-2, 2, 0, 2147483647, -2147483648LL, 0, 0};
  std::vector<int64_t> want64 = {-2, 2, 0, INT64_MAX, INT64_MIN, 0, 0};
  std::vector<int64_t> wantB = {1, 1, 1, 1, 1, 0, 1};
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(i32.getInt(i), want32[i]) << i;
    EXPECT_EQ(i64.getInt(i), want64[i]) << i;
    EXPECT_EQ(b.bits(i), static_cast<uint64_t>(wantB[i])) << i;
  }
  // i1 -> float and int.
  Tensor bf(DType::F32, {7}), bi(DType::I32, {7});
  ASSERT_TRUE(Call("cast", {&b}, {&bf}).run());
  ASSERT_TRUE(Call("cast", {&b}, {&bi}).run());
  for (int i = 0; i < 7; ++i) {
    EXPECT_EQ(bf.get(i), wantB[i]);
    EXPECT_EQ(bi.getInt(i), wantB[i]);
  }
  // f32 -> f16 rounds to nearest even: 1 + 2^-11 is a tie (down to 1),
  // 1 + 3 * 2^-11 a tie up to 1 + 2^-9, 65520 overflows.
  Tensor g = makeTensor(DType::F32, {4},
                        {1 + 0x1p-11, 1 + 3 * 0x1p-11, 65520, 65519.99});
  Tensor h(DType::F16, {4});
  ASSERT_TRUE(Call("cast", {&g}, {&h}).run());
  EXPECT_EQ(h.bits(0), 0x3C00u);
  EXPECT_EQ(h.bits(1), 0x3C02u);
  EXPECT_EQ(h.bits(2), 0x7C00u);
  EXPECT_EQ(h.bits(3), 0x7BFFu);
  // f64 -> f16 rounds once: just above a tie rounds up, although rounding
  // to f32 first would land on the tie and round to even (down).
  Tensor d = makeTensor(DType::F64, {2},
                        {1 + 0x1p-11 + 0x1p-40, -(1 + 0x1p-11 + 0x1p-40)});
  Tensor dh(DType::F16, {2}), db(DType::BF16, {2});
  ASSERT_TRUE(Call("cast", {&d}, {&dh}).run());
  EXPECT_EQ(dh.bits(0), 0x3C01u);
  EXPECT_EQ(dh.bits(1), 0xBC01u);
  // i64 -> bf16 rounds once: 2^30 + 2^22 + 1 is just above a bf16 tie.
  Tensor big(DType::I64, {2});
  big.setInt(0, (int64_t(1) << 30) + (int64_t(1) << 22) + 1);
  big.setInt(1, (int64_t(1) << 30) + (int64_t(1) << 22));
  Tensor bb(DType::BF16, {2});
  ASSERT_TRUE(Call("cast", {&big}, {&bb}).run());
  EXPECT_EQ(bb.get(0), 0x1p30 + 0x1p23);
  EXPECT_EQ(bb.get(1), 0x1p30); // exact tie: to even
  // f16 -> f64 and f64 -> i64 / f32 -> f64 keep values.
  Tensor hh = makeTensor(DType::F16, {3}, {0.1, -3.5, 65504});
  Tensor hd(DType::F64, {3});
  ASSERT_TRUE(Call("cast", {&hh}, {&hd}).run());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(hd.get(i), hh.get(i));
  // Same dtype: identity.
  Tensor same(DType::F16, {3});
  ASSERT_TRUE(Call("cast", {&hh}, {&same}).run());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(same.bits(i), hh.bits(i));
}

// A fused chain through f16 and f32 intermediates, compared bit for bit with
// the same ops run one by one.

void runUnfusedChain(Tensor &x, Tensor &b, Tensor &c, Tensor &cond, Tensor &out,
                     cpu::ThreadPool *pool) {
  Shape s = x.shape;
  Tensor s0(DType::F16, s), s1(DType::F32, s), s2(DType::F32, s),
      s3(DType::F32, s), s4(DType::F16, s), s5(DType::F16, s),
      s6(DType::F16, s);
  ASSERT_TRUE(Call("add", {&x, &b}, {&s0}).run(pool));
  ASSERT_TRUE(Call("cast", {&s0}, {&s1}).run(pool));
  ASSERT_TRUE(Call("mul", {&s1, &c}, {&s2}).run(pool));
  Call g("gelu", {&s2}, {&s3});
  g.attrs.setString("approximate", "tanh");
  ASSERT_TRUE(g.run(pool));
  ASSERT_TRUE(Call("cast", {&s3}, {&s4}).run(pool));
  ASSERT_TRUE(Call("sigmoid", {&s4}, {&s5}).run(pool));
  ASSERT_TRUE(Call("where", {&cond, &s5, &x}, {&s6}).run(pool));
  ASSERT_TRUE(Call("sub", {&s6, &s0}, {&out}).run(pool));
}

std::vector<ops::FusedStep> chainSteps() {
  std::vector<ops::FusedStep> steps = {
      fusedStep("add", {0, 1}, DType::F16),       // s0 = x + b
      fusedStep("cast", {-1}, DType::F32),        // s1
      fusedStep("mul", {-2, 2}, DType::F32),      // s2 = s1 * c
      fusedStep("gelu", {-3}, DType::F32),        // s3
      fusedStep("cast", {-4}, DType::F16),        // s4
      fusedStep("sigmoid", {-5}, DType::F16),     // s5
      fusedStep("where", {3, -6, 0}, DType::F16), // s6 = cond ? s5 : x
      fusedStep("sub", {-7, -1}, DType::F16),     // s7 = s6 - s0
  };
  steps[3].attrs.setString("approximate", "tanh");
  return steps;
}

TEST(ElementwiseKernels, FusedChainEqualsStepByStepBitForBit) {
  cpu::ThreadPool pool(4);
  for (Shape s : {Shape{3, 5}, Shape{37, 129}, Shape{300, 129}}) {
    for (cpu::ThreadPool *p :
         {static_cast<cpu::ThreadPool *>(nullptr), &pool}) {
      SCOPED_TRACE(str(s));
      Tensor x = randomTensor(DType::F16, s, -6, 6, 1);
      Tensor b = randomTensor(DType::F16, {s[1]}, -2, 2, 2);
      Tensor c = makeTensor(DType::F32, {}, {1.7});
      Tensor cond = randomTensor(DType::I1, {s[0], 1}, 0, 2, 3);
      Tensor want(DType::F16, s), got(DType::F16, s);
      runUnfusedChain(x, b, c, cond, want, p);
      Call f("fused", {&x, &b, &c, &cond}, {&got});
      f.steps = chainSteps();
      Status st = f.run(p);
      ASSERT_TRUE(st) << st.message();
      for (int64_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got.bits(i), want.bits(i)) << "i=" << i;
    }
  }
}

TEST(ElementwiseKernels, FusedInPlaceUpdate) {
  // An optimizer-like update: w = w - lr * g, with the output being w.
  cpu::ThreadPool pool(3);
  for (cpu::ThreadPool *p : {static_cast<cpu::ThreadPool *>(nullptr), &pool}) {
    Tensor w = randomTensor(DType::F32, {200, 301}, -1, 1, 4);
    Tensor g = randomTensor(DType::BF16, {200, 301}, -1, 1, 5);
    Tensor lr = makeTensor(DType::F32, {1}, {0.125});
    Tensor expect(DType::F32, w.shape);
    for (int64_t i = 0; i < w.size(); ++i)
      expect.set(i, static_cast<float>(
                        w.get(i) - static_cast<float>(
                                       0.125f * static_cast<float>(g.get(i)))));
    Call f("fused", {&w, &g, &lr}, {&w});
    ops::FusedStep s0, s1, s2;
    s0.op = "cast";
    s0.operands = {1};
    s1.op = "mul";
    s1.operands = {2, -1};
    s2.op = "sub";
    s2.operands = {0, -2};
    f.steps = {s0, s1, s2};
    ASSERT_TRUE(f.run(p));
    for (int64_t i = 0; i < w.size(); ++i)
      ASSERT_EQ(w.bits(i), expect.bits(i)) << i;
  }
  // In place on an f16 tensor.
  Tensor h = makeTensor(DType::F16, {1000}, {1.5, -2.25, 3});
  Call f("fused", {&h}, {&h});
  ops::FusedStep s;
  s.op = "neg";
  s.operands = {0};
  s.dtype = DType::F16;
  f.steps = {s};
  ASSERT_TRUE(f.run());
  EXPECT_EQ(h.get(0), -1.5);
  EXPECT_EQ(h.get(1), 2.25);
  EXPECT_EQ(h.get(999), -1.5);
}

TEST(ElementwiseKernels, FusedIntegerChainAndDivisionByZero) {
  Tensor a = makeTensor(DType::I32, {4, 3}, {5, -9, 12});
  Tensor d = makeTensor(DType::I32, {3}, {2, 4, 0});
  Tensor o(DType::I32, {4, 3});
  Call f("fused", {&a, &d}, {&o});
  ops::FusedStep s0, s1;
  s0.op = "abs";
  s0.operands = {0};
  s0.dtype = DType::I32;
  s1.op = "div";
  s1.operands = {-1, 1};
  s1.dtype = DType::I32;
  f.steps = {s0, s1};
  Status st = f.run();
  ASSERT_FALSE(st);
  EXPECT_NE(st.message().find("division by zero in step 1"), std::string::npos)
      << st.message();
  d.setInt(2, -5);
  Call ok("fused", {&a, &d}, {&o});
  ok.steps = {s0, s1};
  ASSERT_TRUE(ok.run());
  EXPECT_EQ(o.getInt(0), 2);
  EXPECT_EQ(o.getInt(1), 2);
  EXPECT_EQ(o.getInt(2), -2);
}

// Every check error names the thing that is wrong.
void expectCheckError(Call &c, const std::string &fragment) {
  Status s = c.check();
  ASSERT_FALSE(s) << "expected an error containing: " << fragment;
  EXPECT_NE(s.message().find(fragment), std::string::npos) << s.message();
  EXPECT_EQ(s.message().rfind("op '", 0), 0u) << s.message();
}

TEST(ElementwiseKernels, CheckErrors) {
  Tensor f23(DType::F32, {2, 3}), f32s(DType::F32, {3, 2}),
      h23(DType::F16, {2, 3}), i23(DType::I32, {2, 3}), b23(DType::I1, {2, 3}),
      f4(DType::F32, {4});
  {
    Call c("add", {&f23, &f23}, {&f32s});
    expectCheckError(c, "output 0 has shape [3, 2] but the op computes [2, 3]");
  }
  {
    Call c("add", {&f23, &h23}, {&f23});
    expectCheckError(c, "lhs has dtype f32 but rhs has f16");
  }
  {
    Call c("add", {&f23, &f4}, {&f23});
    expectCheckError(c, "do not broadcast");
  }
  {
    Call c("add", {&f23}, {&f23});
    expectCheckError(c, "expects 2 inputs, got 1");
  }
  {
    Call c("add", {&f23, &f23}, {&h23});
    expectCheckError(c, "output has dtype f16 but f32 was expected");
  }
  {
    Call c("relu", {&i23}, {&i23});
    expectCheckError(c, "input has dtype i32");
  }
  {
    Call c("pow", {&i23, &i23}, {&i23});
    expectCheckError(c, "lhs has dtype i32");
  }
  {
    Call c("neg", {&b23}, {&b23});
    expectCheckError(c, "input has dtype i1");
  }
  {
    Call c("where", {&f23, &f23, &f23}, {&f23});
    expectCheckError(c, "condition has dtype f32 but i1 was expected");
  }
  {
    Call c("where", {&b23, &f23, &h23}, {&f23});
    expectCheckError(c, "x has dtype f32 but y has f16");
  }
  {
    Call c("gelu", {&f23}, {&f23});
    c.attrs.setString("approximate", "fast");
    expectCheckError(c, "'approximate' must be \"none\" or \"tanh\"");
  }
  {
    Call c("gelu", {&f23}, {&f23});
    c.attrs.setInt("approximate", 1);
    expectCheckError(c, "'approximate' must be a string");
  }
  {
    Call c("leaky_relu", {&f23}, {&f23});
    c.attrs.setInt("alpha", 1);
    expectCheckError(c, "'alpha' must be a float");
  }
  // The runtime has no attribute defaults: the compiler writes them all.
  {
    Call c("leaky_relu", {&f23}, {&f23});
    expectCheckError(c, "attribute 'alpha' is missing");
  }
  {
    Call c("gelu", {&f23}, {&f23});
    expectCheckError(c, "attribute 'approximate' is missing");
  }
  {
    Call c("hard_sigmoid", {&f23}, {&f23});
    c.attrs.setFloat("alpha", 0.2);
    expectCheckError(c, "attribute 'beta' is missing");
  }
  {
    Call c("clip", {&f23}, {&f23});
    c.attrs.setFloat("min", 2);
    c.attrs.setFloat("max", 1);
    expectCheckError(c, "'min' (2.000000) is greater than 'max'");
  }
  {
    Call c("clip", {&f23}, {&f23});
    c.attrs.setFloat("min", NAN);
    expectCheckError(c, "must not be NaN");
  }
  {
    Call c("cast", {&f23}, {&f32s});
    expectCheckError(c, "output 0 has shape [3, 2] but the op computes [2, 3]");
  }
  {
    Call c("relu", {&f23}, {&f23, &f23});
    expectCheckError(c, "expects 1 output, got 2");
  }
}

TEST(ElementwiseKernels, FusedCheckErrors) {
  Tensor f23(DType::F32, {2, 3}), f3(DType::F32, {3}), f4(DType::F32, {4}),
      h23(DType::F16, {2, 3});
  {
    Call c("fused", {&f23}, {&f23});
    expectCheckError(c, "has no steps");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("matmul", {0, 0}, DType::F32)};
    expectCheckError(c, "step 0 ('matmul'): 'matmul' is not an elementwise op");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("add", {0}, DType::F32)};
    expectCheckError(c, "step 0 ('add'): takes 2 operands, got 1");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("relu", {-1}, DType::F32)};
    expectCheckError(c, "refers to step 0, which is not computed before");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("relu", {2}, DType::F32)};
    expectCheckError(c, "refers to kernel input 2 but there are 1 inputs");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("relu", {0}, DType::F16),
               fusedStep("cast", {-1}, DType::F32)};
    expectCheckError(c, "step 0 ('relu'): output has dtype f16 but f32");
  }
  {
    Call c("fused", {&f23}, {&f23});
    c.steps = {fusedStep("cast", {0}, DType::F16)};
    expectCheckError(c, "the last step has dtype f16 but output 0 has f32");
  }
  {
    // relu of a [3] input computes [3], not the output shape [2, 3].
    Call c("fused", {&f3, &f23}, {&f23});
    c.steps = {fusedStep("relu", {0}, DType::F32),
               fusedStep("add", {-1, 1}, DType::F32)};
    expectCheckError(c, "step 0 ('relu'): computes shape [3] but every step "
                        "must have the output shape [2, 3]");
  }
  {
    Call c("fused", {&f4, &f23}, {&f23});
    c.steps = {fusedStep("add", {1, 1}, DType::F32)};
    expectCheckError(c, "input 0 of shape [4] does not broadcast to the "
                        "output shape [2, 3]");
  }
  {
    Call c("fused", {&f23, &h23}, {&f23});
    c.steps = {fusedStep("add", {0, 1}, DType::F32)};
    expectCheckError(c, "step 0 ('add'): lhs has dtype f32 but rhs has f16");
  }
  {
    Call c("fused", {&f23}, {&f23});
    ops::FusedStep s = fusedStep("leaky_relu", {0}, DType::F32);
    s.attrs.setString("alpha", "x");
    c.steps = {s};
    expectCheckError(c, "step 0 ('leaky_relu'): attribute 'alpha' must be");
  }
}

TEST(ElementwiseKernels, EveryOpIsRegistered) {
  std::vector<std::string> names = cpu::kernelNames();
  for (const char *op :
       {"relu",       "tanh", "sigmoid", "erf",  "exp",        "log",  "sqrt",
        "reciprocal", "neg",  "abs",     "gelu", "leaky_relu", "clip", "add",
        "sub",        "mul",  "div",     "pow",  "where",      "cast", "fused"})
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op;
}

} // namespace
