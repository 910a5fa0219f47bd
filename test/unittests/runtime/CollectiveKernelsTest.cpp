//===- CollectiveKernelsTest.cpp - all_reduce_mean on the CPU -------------===//
//
// The kernel against a stand-in for the other ranks (their sum of each
// element is known), in every gradient type: the mean is the f32 sum times
// 1/N rounded to f32, rounded once to the gradient's type; with its skip
// flag set, no exchange and the gradient unchanged. The MPI
// transport itself runs in test/Execution/data-parallel.test.
//
//===----------------------------------------------------------------------===//

#include "NumericKernelTestUtil.h"
#include "runtime/Collective.h"
#include "runtime/Half.h"

#include <cmath>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

/// Rank 0 of `size`, whose other ranks contribute `others[i]` to element i
/// of every sum (one exchange per call, counted).
struct OtherRanks : Collective {
  int size_;
  std::vector<float> others;
  int calls = 0;
  OtherRanks(int size, std::vector<float> o)
      : size_(size), others(std::move(o)) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  Status allReduceSum(float *data, size_t count) override {
    ++calls;
    if (count != others.size())
      return Status::error("the bucket has " + std::to_string(count) +
                           " values, the test expected " +
                           std::to_string(others.size()));
    for (size_t i = 0; i < count; ++i)
      data[i] += others[i];
    return Status::ok();
  }
  Status sumOverRanks(double &) override {
    return Status::error("the kernel exchanges gradients only");
  }
  Status waitForAll(double) override { return Status::ok(); }
  double allReduceSeconds() const override { return 0; }
};

Attrs worldAttrs(int64_t n) {
  Attrs a;
  a.setInt("world_size", n);
  return a;
}

/// `v` rounded to `t` (float types).
double roundTo(DType t, float v) {
  switch (t) {
  case DType::F16:
    return halfBitsToFloat(floatToHalfBits(v));
  case DType::BF16:
    return bfloatBitsToFloat(floatToBFloatBits(v));
  default:
    return v;
  }
}

TEST(AllReduceMean, OneExchangePerBucketMeanRoundedOnce) {
  // Three gradients of three types in one bucket; 4 ranks.
  Buf a = makeBuf(DType::F32, {2}, {1.5, -3.0});
  Buf b = makeBuf(DType::F16, {3}, {0.1, 60000.0, -2.0});
  Buf c = makeBuf(DType::BF16, {1}, {7.0});
  Buf oa(DType::F32, {2}), ob(DType::F16, {3}), oc(DType::BF16, {1});
  // The other three ranks' sums; 60000 + 200000 is out of f16's range
  // before the mean, not after.
  std::vector<float> others = {2.5f, 1.0f, 0.3f, 200000.0f, 6.0f, -3.0f};
  OtherRanks world(4, others);
  Call call{"all_reduce_mean", worldAttrs(4), {&a, &b, &c}, {&oa, &ob, &oc}};
  Status s = call.run(nullptr, &world);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.calls, 1);
  const float quarter = 0.25f;
  std::vector<Buf *> ins = {&a, &b, &c}, outs = {&oa, &ob, &oc};
  size_t at = 0;
  for (size_t k = 0; k < ins.size(); ++k)
    for (int64_t i = 0; i < ins[k]->size(); ++i, ++at) {
      float sum = static_cast<float>(ins[k]->get(i)) + others[at];
      EXPECT_EQ(outs[k]->get(i), roundTo(outs[k]->dtype, sum * quarter))
          << "gradient " << k << " element " << i;
    }
  EXPECT_TRUE(std::isfinite(ob.get(1))); // 65000, within f16's range
}

TEST(AllReduceMean, ANonFiniteValueOnAnyRankIsInEveryMean) {
  Buf g = makeBuf(DType::F16, {2}, {1.0, 2.0});
  Buf out(DType::F16, {2});
  OtherRanks world(2, {INFINITY, 0.0f});
  Call call{"all_reduce_mean", worldAttrs(2), {&g}, {&out}};
  ASSERT_TRUE(call.run(nullptr, &world).isOk());
  EXPECT_TRUE(std::isinf(out.get(0)));
  EXPECT_EQ(out.get(1), 1.0);
}

TEST(AllReduceMean, AnAccumulationStepThatOnlyAddsExchangesNothing) {
  Buf g = makeBuf(DType::BF16, {2}, {1.5, -2.0});
  Buf out(DType::BF16, {2});
  OtherRanks world(2, {4.0f, 4.0f});
  Buf skip = makeBuf(DType::I1, {}, {1}), update = makeBuf(DType::I1, {}, {0});
  Call skipped{"all_reduce_mean", worldAttrs(2), {&g, &skip}, {&out}};
  Status s = skipped.run(nullptr, &world);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.calls, 0);
  EXPECT_EQ(out.values(), g.values());
  Call averaged{"all_reduce_mean", worldAttrs(2), {&g, &update}, {&out}};
  s = averaged.run(nullptr, &world);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.calls, 1);
  EXPECT_EQ(out.values(), (std::vector<double>{2.75, 1.0}));
  Buf two = makeBuf(DType::I1, {2}, {1, 1});
  Call bad{"all_reduce_mean", worldAttrs(2), {&g, &two}, {&out}};
  EXPECT_NE(bad.check().message().find("skip must be a scalar (rank 0) i1"),
            std::string::npos)
      << bad.check().message();
}

TEST(AllReduceMean, RefusesToRunWithoutTheRanksItWasCompiledFor) {
  Buf g = makeBuf(DType::F32, {1}, {1.0});
  Buf out(DType::F32, {1});
  Call call{"all_reduce_mean", worldAttrs(2), {&g}, {&out}};
  Status s = call.run();
  EXPECT_NE(s.message().find("the step averages its gradients over 2 ranks "
                             "(data parallelism), but it runs in one "
                             "process: start it under mpirun -n 2"),
            std::string::npos)
      << s.message();
  OtherRanks three(3, {0.0f});
  s = call.run(nullptr, &three);
  EXPECT_NE(s.message().find("the step was compiled for 2 ranks but runs in "
                             "3"),
            std::string::npos)
      << s.message();
}

TEST(AllReduceMean, ChecksNameTheOperand) {
  Buf g = makeBuf(DType::F32, {2}, {1.0, 2.0});
  Buf wrong(DType::F16, {2});
  Call call{"all_reduce_mean", worldAttrs(2), {&g}, {&wrong}};
  EXPECT_NE(call.check().message().find(
                "output 0 has element type f16 but the op computes f32"),
            std::string::npos)
      << call.check().message();
  Buf ints = makeBuf(DType::I64, {2}, {1, 2});
  Buf iout(DType::I64, {2});
  Call intCall{"all_reduce_mean", worldAttrs(2), {&ints}, {&iout}};
  EXPECT_NE(intCall.check().message().find("expected f32, f16 or bf16"),
            std::string::npos)
      << intCall.check().message();
  Call one{"all_reduce_mean", worldAttrs(1), {&g}, {&g}};
  EXPECT_NE(one.check().message().find("world_size must be >= 2, got 1"),
            std::string::npos)
      << one.check().message();
}

} // namespace
