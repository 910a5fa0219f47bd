//===- CollectiveKernelsTest.cpp - all_reduce_start/wait on the CPU -------===//
//
// The kernels against a stand-in for the other ranks (their sum of each
// element is known, added when the wait finishes the sum), in every
// gradient type: the mean is the f32 sum times 1/N rounded to f32, rounded
// once to the gradient's type; the start only starts the sum (its buffer
// is summed at the wait); with the skip flag set, no exchange and the
// gradient unchanged. The MPI transport itself runs in
// test/Execution/data-parallel.test.
//
//===----------------------------------------------------------------------===//

#include "NumericKernelTestUtil.h"
#include "runtime/Collective.h"
#include "runtime/Half.h"

#include <cmath>
#include <functional>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

/// Rank 0 of `size`, whose other ranks contribute `others[i]` to element i
/// of every sum; the sum lands when it is finished (the exchanges started
/// and finished are counted).
struct OtherRanks : Collective {
  int size_;
  std::vector<float> others;
  int started = 0, finished = 0;
  struct Pending {
    void *data;
    size_t count;
    DType dtype; // F32: a sum; F16/BF16: a mean in that type
  };
  std::vector<Pending> pending;
  OtherRanks(int size, std::vector<float> o)
      : size_(size), others(std::move(o)) {}
  int rank() const override { return 0; }
  int size() const override { return size_; }
  Status start(void *data, size_t count, DType dtype) {
    ++started;
    if (count != others.size())
      return Status::error("the bucket has " + std::to_string(count) +
                           " values, the test expected " +
                           std::to_string(others.size()));
    pending.push_back({data, count, dtype});
    return Status::ok();
  }
  Status startSum(float *data, size_t count) override {
    return start(data, count, DType::F32);
  }
  Status startMean(uint16_t *data, size_t count, DType dtype) override {
    return start(data, count, dtype);
  }
  Status finish(const void *data) override {
    for (auto it = pending.begin(); it != pending.end(); ++it) {
      if (it->data != data)
        continue;
      for (size_t i = 0; i < it->count; ++i) {
        if (it->dtype == DType::F32) {
          static_cast<float *>(it->data)[i] += others[i];
          continue;
        }
        // startMean's contract: the f32 sum times 1/N, rounded once.
        uint16_t &v = static_cast<uint16_t *>(it->data)[i];
        bool half = it->dtype == DType::F16;
        float sum =
            (half ? halfBitsToFloat(v) : bfloatBitsToFloat(v)) + others[i];
        float mean = sum * static_cast<float>(1.0 / size_);
        v = half ? floatToHalfBits(mean) : floatToBFloatBits(mean);
      }
      pending.erase(it);
      ++finished;
      return Status::ok();
    }
    return Status::error("no sum was started on this buffer");
  }
  void finishAll() override { pending.clear(); }
  Status sumOverRanks(double *, size_t) override {
    return Status::error("the kernels exchange gradients only");
  }
  Status waitForAll(double) override { return Status::ok(); }
  // Rank 0's bytes are every rank's: nothing changes here.
  Status broadcast(void *, size_t) override { return Status::ok(); }
  double timeoutSeconds() const override { return 60; }
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

/// The exchange buffer of `grads`, of type `wire`.
Buf exchangeFor(const std::vector<Buf *> &grads, DType wire = DType::F32) {
  int64_t n = 0;
  for (Buf *g : grads)
    n += g->size();
  return Buf(wire, {n});
}

/// Starts the exchange of `grads` (then `skip`, if given) in a buffer of
/// type `wire`, runs `between`, then waits into `outs`.
Status exchange(
    Collective &world, int64_t worldSize, std::vector<Buf *> grads,
    std::vector<Buf *> outs, Buf *skip = nullptr,
    const std::function<void()> &between = [] {}, DType wire = DType::F32) {
  Buf x = exchangeFor(grads, wire);
  std::vector<Buf *> startIns = grads, waitIns = {&x};
  if (skip) {
    startIns.push_back(skip);
    waitIns.push_back(skip);
  }
  Call start{"all_reduce_start", worldAttrs(worldSize), startIns, {&x}};
  AMPC_RETURN_IF_ERROR(start.run(nullptr, &world));
  between();
  Call wait{"all_reduce_wait", worldAttrs(worldSize), waitIns, outs};
  return wait.run(nullptr, &world);
}

TEST(AllReduce, OneExchangePerBucketMeanRoundedOnce) {
  // Three gradients of three types in one bucket; 4 ranks.
  Buf a = makeBuf(DType::F32, {2}, {1.5, -3.0});
  Buf b = makeBuf(DType::F16, {3}, {0.1, 60000.0, -2.0});
  Buf c = makeBuf(DType::BF16, {1}, {7.0});
  Buf oa(DType::F32, {2}), ob(DType::F16, {3}), oc(DType::BF16, {1});
  // The other three ranks' sums; 60000 + 200000 is out of f16's range
  // before the mean, not after.
  std::vector<float> others = {2.5f, 1.0f, 0.3f, 200000.0f, 6.0f, -3.0f};
  OtherRanks world(4, others);
  Status s = exchange(world, 4, {&a, &b, &c}, {&oa, &ob, &oc});
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.started, 1);
  EXPECT_EQ(world.finished, 1);
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

TEST(AllReduce, TheStartOnlyStartsTheSumAndTheGradientsMayChangeAfterIt) {
  // The start copies the gradients into its buffer: what runs between the
  // start and the wait may reuse their bytes, and the wait finishes the
  // sum that the start began.
  Buf g = makeBuf(DType::F16, {2}, {1.0, 2.0});
  Buf out(DType::F16, {2});
  OtherRanks world(2, {3.0f, 4.0f});
  Status s = exchange(world, 2, {&g}, {&out}, nullptr, [&] {
    EXPECT_EQ(world.started, 1);
    EXPECT_EQ(world.finished, 0);
    g.set(0, -100.0);
    g.set(1, -100.0);
  });
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(out.values(), (std::vector<double>{2.0, 3.0}));
  // A wait for a buffer the collective has no sum for passes the
  // collective's error on.
  Buf x(DType::F32, {2});
  Call orphan{"all_reduce_wait", worldAttrs(2), {&x}, {&out}};
  s = orphan.run(nullptr, &world);
  EXPECT_NE(s.message().find("no sum was started on this buffer"),
            std::string::npos)
      << s.message();
}

TEST(AllReduce, ASixteenBitExchangeCarriesTheGradientsAsTheyAre) {
  // The start copies the 16-bit patterns, the collective leaves the means
  // in the buffer, the wait copies them out; skipped, the gradients come
  // back.
  for (DType t : {DType::F16, DType::BF16}) {
    Buf a = makeBuf(t, {2}, {1.5, -3.0}), b = makeBuf(t, {1}, {0.25});
    Buf oa(t, {2}), ob(t, {1});
    OtherRanks world(2, {2.5f, 1.0f, 0.75f});
    Status s = exchange(
        world, 2, {&a, &b}, {&oa, &ob}, nullptr, [] {}, t);
    ASSERT_TRUE(s.isOk()) << s.message();
    EXPECT_EQ(world.started, 1);
    EXPECT_EQ(oa.values(), (std::vector<double>{2.0, -1.0}));
    EXPECT_EQ(ob.values(), (std::vector<double>{0.5}));
    Buf skip = makeBuf(DType::I1, {}, {1});
    s = exchange(
        world, 2, {&a, &b}, {&oa, &ob}, &skip, [] {}, t);
    ASSERT_TRUE(s.isOk()) << s.message();
    EXPECT_EQ(world.started, 1);
    EXPECT_EQ(oa.values(), a.values());
    EXPECT_EQ(ob.values(), b.values());
  }
  // Its gradients must all have its type.
  Buf h = makeBuf(DType::F16, {1}, {1.0}), f = makeBuf(DType::F32, {1}, {1.0});
  Buf x(DType::F16, {2});
  Call mixed{"all_reduce_start", worldAttrs(2), {&h, &f}, {&x}};
  EXPECT_NE(mixed.check().message().find(
                "output 0 is tensor<2xf16>: a 16-bit exchange carries "
                "gradients of its type only, got tensor<1xf32>"),
            std::string::npos)
      << mixed.check().message();
}

TEST(AllReduce, ANonFiniteValueOnAnyRankIsInEveryMean) {
  Buf g = makeBuf(DType::F16, {2}, {1.0, 2.0});
  Buf out(DType::F16, {2});
  OtherRanks world(2, {INFINITY, 0.0f});
  ASSERT_TRUE(exchange(world, 2, {&g}, {&out}).isOk());
  EXPECT_TRUE(std::isinf(out.get(0)));
  EXPECT_EQ(out.get(1), 1.0);
}

TEST(AllReduce, AnAccumulationStepThatOnlyAddsExchangesNothing) {
  Buf g = makeBuf(DType::BF16, {2}, {1.5, -2.0});
  Buf out(DType::BF16, {2});
  OtherRanks world(2, {4.0f, 4.0f});
  Buf skip = makeBuf(DType::I1, {}, {1}), update = makeBuf(DType::I1, {}, {0});
  Status s = exchange(world, 2, {&g}, {&out}, &skip);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.started, 0);
  EXPECT_EQ(out.values(), g.values());
  s = exchange(world, 2, {&g}, {&out}, &update);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(world.started, 1);
  EXPECT_EQ(world.finished, 1);
  EXPECT_EQ(out.values(), (std::vector<double>{2.75, 1.0}));
  Buf two = makeBuf(DType::I1, {2}, {1, 1});
  Buf x(DType::F32, {2});
  Call bad{"all_reduce_start", worldAttrs(2), {&g, &two}, {&x}};
  EXPECT_NE(bad.check().message().find("skip must be a scalar (rank 0) i1"),
            std::string::npos)
      << bad.check().message();
}

TEST(AllReduce, RefusesToRunWithoutTheRanksItWasCompiledFor) {
  Buf g = makeBuf(DType::F32, {1}, {1.0});
  Buf x(DType::F32, {1});
  Call call{"all_reduce_start", worldAttrs(2), {&g}, {&x}};
  Status s = call.run();
  EXPECT_NE(s.message().find(
                "the step averages its gradients over 2 ranks "
                "(data parallelism), but it runs in one "
                "process: start it with --nproc 2 (or under mpirun -n 2)"),
            std::string::npos)
      << s.message();
  OtherRanks three(3, {0.0f});
  s = call.run(nullptr, &three);
  EXPECT_NE(s.message().find("the step was compiled for 2 ranks but runs in "
                             "3"),
            std::string::npos)
      << s.message();
}

TEST(AllReduce, ChecksNameTheOperand) {
  Buf g = makeBuf(DType::F32, {2}, {1.0, 2.0});
  Buf x(DType::F32, {2}), short1(DType::F32, {1}), halfX(DType::F16, {2});
  Buf out(DType::F32, {2});
  Call wrongBuffer{"all_reduce_start", worldAttrs(2), {&g}, {&short1}};
  EXPECT_NE(wrongBuffer.check().message().find(
                "output 0 must be the exchange buffer of 2 f32, f16 or bf16 "
                "values, got tensor<1xf32>"),
            std::string::npos)
      << wrongBuffer.check().message();
  Call halfBuffer{"all_reduce_wait", worldAttrs(2), {&halfX}, {&out}};
  EXPECT_NE(halfBuffer.check().message().find(
                "input 0 is tensor<2xf16>: a 16-bit exchange carries "
                "gradients of its type only, got tensor<2xf32>"),
            std::string::npos)
      << halfBuffer.check().message();
  Buf ints = makeBuf(DType::I64, {2}, {1, 2});
  Call intCall{"all_reduce_start", worldAttrs(2), {&ints}, {&x}};
  EXPECT_NE(intCall.check().message().find("expected f32, f16 or bf16"),
            std::string::npos)
      << intCall.check().message();
  Buf iout(DType::I64, {2});
  Call intWait{"all_reduce_wait", worldAttrs(2), {&x}, {&iout}};
  EXPECT_NE(intWait.check().message().find(
                "output 0 is tensor<2xi64>: expected f32, f16 or bf16"),
            std::string::npos)
      << intWait.check().message();
  Call one{"all_reduce_start", worldAttrs(1), {&g}, {&x}};
  EXPECT_NE(one.check().message().find("world_size must be >= 2, got 1"),
            std::string::npos)
      << one.check().message();
}

} // namespace
