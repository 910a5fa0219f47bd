//===- PredicateKernelsTest.cpp - comparisons and logical ops on the CPU --===//
//
// The ops with an i1 result: each comparison in every dtype against C++'s
// own operator on the stored values (ties, NaN, broadcasting), the logical
// ops against their truth tables, a fused chain against the same ops run
// one by one, and the type rules' messages.
//
//===----------------------------------------------------------------------===//
#include "KernelTestUtil.h"

#include "runtime/ops/ElementwisePlan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::test;

namespace {

struct Comparison {
  const char *op;
  std::function<bool(double, double)> ref;
};

const Comparison kComparisons[] = {
    {"equal", [](double a, double b) { return a == b; }},
    {"less", [](double a, double b) { return a < b; }},
    {"less_equal", [](double a, double b) { return a <= b; }},
    {"greater", [](double a, double b) { return a > b; }},
    {"greater_equal", [](double a, double b) { return a >= b; }},
};

TEST(PredicateKernels, ComparisonsInEveryDtypeBroadcast) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64, DType::I64,
                  DType::I32}) {
    // Few distinct values, so ties are common; NaN and infinities in floats.
    std::vector<double> av = {-2, -1, 0, 1, 2, 3, 1.5, -0.0};
    std::vector<double> bv = {1, -1, 0, 2};
    if (isFloat(t)) {
      av.push_back(nan);
      av.push_back(-INFINITY);
      bv.push_back(INFINITY);
    }
    Tensor a = makeTensor(t, {3, 11}, av);
    Tensor b = makeTensor(t, {5, 1, 1}, bv);
    for (const Comparison &c : kComparisons) {
      SCOPED_TRACE(std::string(c.op) + " " + std::string(name(t)));
      Tensor out(DType::I1, {5, 3, 11});
      Status st = Call(c.op, {&a, &b}, {&out}).run();
      ASSERT_TRUE(st) << st.message();
      for (int64_t i = 0; i < out.size(); ++i) {
        auto idx = unravel(i, out.shape);
        double x = a.get(broadcastSource(idx, a.shape)),
               y = b.get(broadcastSource(idx, b.shape));
        ASSERT_EQ(out.get(i), c.ref(x, y) ? 1 : 0) << x << " vs " << y;
      }
    }
  }
}

TEST(PredicateKernels, EqualOnBoolsAndLogicalTruthTables) {
  Tensor a = makeTensor(DType::I1, {2, 2}, {0, 0, 1, 1});
  Tensor b = makeTensor(DType::I1, {2, 2}, {0, 1, 0, 1});
  struct Case {
    const char *op;
    std::vector<double> want;
  };
  for (const Case &c :
       {Case{"equal", {1, 0, 0, 1}}, Case{"logical_and", {0, 0, 0, 1}},
        Case{"logical_or", {0, 1, 1, 1}}, Case{"logical_xor", {0, 1, 1, 0}}}) {
    SCOPED_TRACE(c.op);
    Tensor out(DType::I1, {2, 2});
    ASSERT_TRUE(Call(c.op, {&a, &b}, {&out}).run());
    for (int64_t i = 0; i < 4; ++i)
      EXPECT_EQ(out.get(i), c.want[i]) << i;
  }
  // not, and a scalar operand broadcast over a matrix.
  Tensor n(DType::I1, {2, 2});
  ASSERT_TRUE(Call("logical_not", {&a}, {&n}).run());
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(n.get(i), a.get(i) ? 0 : 1);
  Tensor one = makeTensor(DType::I1, {}, {1}), o(DType::I1, {2, 2});
  ASSERT_TRUE(Call("logical_and", {&b, &one}, {&o}).run());
  for (int64_t i = 0; i < 4; ++i)
    EXPECT_EQ(o.get(i), b.get(i));
}

// where(x > b, x, c) - b fused, as a causal mask or a ReLU written out
// exports it: the i1 step sits between f16 steps.
TEST(PredicateKernels, FusedComparisonFeedsWhere) {
  Shape s{37, 129};
  Tensor x = randomTensor(DType::F16, s, -3, 3, 1);
  Tensor b = randomTensor(DType::F16, {s[1]}, -1, 1, 2);
  Tensor c = makeTensor(DType::F16, {}, {-65504});
  Tensor m(DType::I1, s), w(DType::F16, s), want(DType::F16, s),
      got(DType::F16, s);
  ASSERT_TRUE(Call("greater", {&x, &b}, {&m}).run());
  ASSERT_TRUE(Call("where", {&m, &x, &c}, {&w}).run());
  ASSERT_TRUE(Call("sub", {&w, &b}, {&want}).run());
  Call f("fused", {&x, &b, &c}, {&got});
  f.steps = {fusedStep("greater", {0, 1}, DType::I1),
             fusedStep("where", {-1, 0, 2}, DType::F16),
             fusedStep("sub", {-2, 1}, DType::F16)};
  Status st = f.run();
  ASSERT_TRUE(st) << st.message();
  for (int64_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got.bits(i), want.bits(i)) << i;
}

// int64 comparisons are exact: values 1 apart near 2^62 differ, where a
// comparison through float or double would find them equal.
TEST(PredicateKernels, Int64ComparesExactly) {
  Tensor a(DType::I64, {3}), b(DType::I64, {3});
  int64_t av[] = {int64_t(1) << 62, (int64_t(1) << 62) + 1, -7};
  int64_t bv[] = {(int64_t(1) << 62) + 1, int64_t(1) << 62, -7};
  for (int i = 0; i < 3; ++i) {
    static_cast<int64_t *>(a.view().data)[i] = av[i];
    static_cast<int64_t *>(b.view().data)[i] = bv[i];
  }
  Tensor lt(DType::I1, {3}), eq(DType::I1, {3});
  ASSERT_TRUE(Call("less", {&a, &b}, {&lt}).run());
  ASSERT_TRUE(Call("equal", {&a, &b}, {&eq}).run());
  EXPECT_EQ(lt.get(0), 1);
  EXPECT_EQ(lt.get(1), 0);
  EXPECT_EQ(lt.get(2), 0);
  EXPECT_EQ(eq.get(0), 0);
  EXPECT_EQ(eq.get(1), 0);
  EXPECT_EQ(eq.get(2), 1);
}

TEST(PredicateKernels, TypeRulesNameTheOperand) {
  Tensor f(DType::F32, {3}), h(DType::F16, {3}), i1(DType::I1, {3}),
      out(DType::I1, {3}), fout(DType::F32, {3});
  auto message = [](Call c) { return c.check().message(); };
  EXPECT_EQ(message(Call("less", {&f, &h}, {&out})),
            "op 'less': lhs has dtype f32 but rhs has f16");
  EXPECT_EQ(message(Call("less", {&f, &f}, {&fout})),
            "op 'less': output has dtype f32 but i1 was expected");
  EXPECT_EQ(message(Call("logical_or", {&i1, &f}, {&out})),
            "op 'logical_or': rhs has dtype f32 but i1 was expected");
  EXPECT_EQ(message(Call("logical_not", {&f}, {&out})),
            "op 'logical_not': input has dtype f32 but i1 was expected");
}

// Every predicate row of Elementwise.def is exercised above.
TEST(PredicateKernels, EveryPredicateOpHasACase) {
  std::vector<std::string> tested = {"logical_and", "logical_or", "logical_xor",
                                     "logical_not"};
  for (const Comparison &c : kComparisons)
    tested.push_back(c.op);
  for (const ops::ew::OpInfo &op : ops::ew::allOps())
    if (ops::ew::isPredicate(op.sig))
      EXPECT_NE(std::find(tested.begin(), tested.end(), op.name), tested.end())
          << op.name << " has no case here";
}

} // namespace
