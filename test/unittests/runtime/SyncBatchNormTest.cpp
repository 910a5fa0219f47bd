//===- SyncBatchNormTest.cpp - batch norm over two ranks' batches ---------===//
//
// Synchronised batch norm (sync_ranks = 2) on two threads, each a rank
// with half of a batch, exchanging through an in-process rt::Collective,
// against the kernels without sync_ranks on the whole batch (the batch
// axis is axis 0: rank 0 has the first half). The forward outputs, the
// statistics and the input gradient must be the whole batch's; the scale
// and bias gradients are each rank's own sums, whose sum is the whole
// batch's.
//
//===----------------------------------------------------------------------===//

#include "NumericKernelTestUtil.h"
#include "runtime/Collective.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

/// Two ranks in one process: sumOverRanks waits for the other thread. Each
/// round's sums are kept until both ranks have read them (the first to
/// leave may start the next round before the other has woken).
struct TwoRanks {
  std::mutex mutex;
  std::condition_variable done;
  int arrived = 0;
  int64_t round = 0;
  std::vector<double> adding;
  std::map<int64_t, std::pair<std::vector<double>, int>> sums; // and readers
};

struct Rank : Collective {
  TwoRanks &world;
  int r;
  Rank(TwoRanks &w, int r) : world(w), r(r) {}
  int rank() const override { return r; }
  int size() const override { return 2; }
  Status startSum(float *, size_t) override {
    return Status::error("batch norm exchanges doubles only");
  }
  Status startMean(uint16_t *, size_t, DType) override {
    return Status::error("batch norm exchanges doubles only");
  }
  Status finish(const void *) override { return Status::ok(); }
  void finishAll() override {}
  Status sumOverRanks(double *values, size_t count) override {
    std::unique_lock<std::mutex> lock(world.mutex);
    if (world.arrived == 0)
      world.adding.assign(values, values + count);
    else if (world.adding.size() != count)
      return Status::error("the ranks sum different counts");
    else
      for (size_t i = 0; i < count; ++i)
        world.adding[i] += values[i];
    int64_t round = world.round;
    if (++world.arrived == 2) {
      world.sums[round] = {world.adding, 0};
      world.arrived = 0;
      ++world.round;
      world.done.notify_all();
    } else {
      world.done.wait(lock, [&] { return world.round != round; });
    }
    auto &[sum, readers] = world.sums[round];
    std::copy(sum.begin(), sum.end(), values);
    if (++readers == 2)
      world.sums.erase(round);
    return Status::ok();
  }
  Status waitForAll(double) override { return Status::ok(); }
  Status broadcast(void *, size_t) override {
    return Status::error("batch norm exchanges doubles only");
  }
  double timeoutSeconds() const override { return 60; }
  double allReduceSeconds() const override { return 0; }
};

/// Rows [first, first + count) of axis 0 of `b`.
Buf rows(const Buf &b, int64_t first, int64_t count) {
  Shape s = b.shape;
  int64_t per = b.size() / s[0];
  s[0] = count;
  Buf out(b.dtype, s);
  for (int64_t i = 0; i < out.size(); ++i)
    out.set(i, b.get(first * per + i));
  return out;
}

void expectClose(const std::vector<double> &got,
                 const std::vector<double> &want, double tol,
                 const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tol * (1 + std::abs(want[i])))
        << what << " element " << i;
}

struct Half {
  Buf x, dy, y, newMean, newVar, mean, invStd, dx, dScale, dBias;
};

TEST(SyncBatchNorm, TwoRanksNormaliseAsTheirWholeBatch) {
  for (Shape s : {Shape{8, 3, 2, 2}, Shape{6, 4}}) {
    SCOPED_TRACE(str(s));
    int64_t c = s[1], n = s[0];
    Buf x = randomBuf(DType::F32, s, 11, -2, 3);
    // Rank 1's half is shifted: per-rank statistics would differ.
    for (int64_t i = x.size() / 2; i < x.size(); ++i)
      x.set(i, x.get(i) * 3 + 1);
    Buf dy = randomBuf(DType::F32, s, 12, -1, 1);
    Buf scale = randomBuf(DType::F32, {c}, 13, 0.5, 1.5);
    Buf bias = randomBuf(DType::F32, {c}, 14);
    Buf runMean = randomBuf(DType::F32, {c}, 15);
    Buf runVar = randomBuf(DType::F32, {c}, 16, 0.5, 2);

    auto forward = [&](Buf &in, Half &h, int64_t syncRanks) {
      h.y = Buf(DType::F32, in.shape);
      for (Buf *o : {&h.newMean, &h.newVar, &h.mean, &h.invStd})
        *o = Buf(DType::F32, {c});
      Call call{"batch_norm_training",
                {},
                {&in, &scale, &bias, &runMean, &runVar},
                {&h.y, &h.newMean, &h.newVar, &h.mean, &h.invStd}};
      call.attrs.setFloat("epsilon", 1e-3);
      call.attrs.setFloat("momentum", 0.9);
      if (syncRanks > 1)
        call.attrs.setInt("sync_ranks", syncRanks);
      return call;
    };
    auto backward = [&](Buf &in, Buf &g, Half &h, int64_t syncRanks) {
      h.dx = Buf(DType::F32, in.shape);
      h.dScale = Buf(DType::F32, {c});
      h.dBias = Buf(DType::F32, {c});
      Call call{"batch_norm_grad",
                {},
                {&g, &in, &scale, &h.mean, &h.invStd},
                {&h.dx, &h.dScale, &h.dBias}};
      if (syncRanks > 1)
        call.attrs.setInt("sync_ranks", syncRanks);
      return call;
    };

    Half whole;
    Call f = forward(x, whole, 1);
    ASSERT_TRUE(f.run().isOk());
    Call b = backward(x, dy, whole, 1);
    ASSERT_TRUE(b.run().isOk());

    TwoRanks world;
    Half part[2];
    Buf xs[2] = {rows(x, 0, n / 2), rows(x, n / 2, n - n / 2)};
    Buf dys[2] = {rows(dy, 0, n / 2), rows(dy, n / 2, n - n / 2)};
    Status status[2];
    auto rank = [&](int r) {
      Rank me(world, r);
      Call fr = forward(xs[r], part[r], 2);
      status[r] = fr.run(nullptr, &me);
      if (!status[r])
        return;
      Call br = backward(xs[r], dys[r], part[r], 2);
      status[r] = br.run(nullptr, &me);
    };
    std::thread other(rank, 1);
    rank(0);
    other.join();
    for (int r = 0; r < 2; ++r)
      ASSERT_TRUE(status[r].isOk()) << status[r].message();

    for (int r = 0; r < 2; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r));
      int64_t first = r == 0 ? 0 : n / 2, count = xs[r].shape[0];
      expectClose(part[r].y.values(), rows(whole.y, first, count).values(),
                  1e-6, "output");
      expectClose(part[r].dx.values(), rows(whole.dx, first, count).values(),
                  1e-5, "input_grad");
      for (auto [got, want, what] :
           {std::tuple{&part[r].mean, &whole.mean, "batch_mean"},
            {&part[r].invStd, &whole.invStd, "batch_inv_std"},
            {&part[r].newMean, &whole.newMean, "new_running_mean"},
            {&part[r].newVar, &whole.newVar, "new_running_var"}})
        expectClose(got->values(), want->values(), 1e-6, what);
    }
    // Each rank's scale and bias gradients are its own sums.
    std::vector<double> dScale(c), dBias(c);
    for (int64_t i = 0; i < c; ++i) {
      dScale[i] = part[0].dScale.get(i) + part[1].dScale.get(i);
      dBias[i] = part[0].dBias.get(i) + part[1].dBias.get(i);
    }
    expectClose(dScale, whole.dScale.values(), 1e-5, "scale_grad");
    expectClose(dBias, whole.dBias.values(), 1e-5, "bias_grad");
  }
}

TEST(SyncBatchNorm, NeedsTheRanksItWasCompiledFor) {
  Buf x = randomBuf(DType::F32, {4, 2}, 1);
  Buf scale = makeBuf(DType::F32, {2}, {1, 1}), bias(DType::F32, {2}),
      rm(DType::F32, {2}), rv = makeBuf(DType::F32, {2}, {1, 1});
  Buf y(DType::F32, {4, 2}), a(DType::F32, {2}), b(DType::F32, {2}),
      m(DType::F32, {2}), is(DType::F32, {2});
  Call call{"batch_norm_training",
            {},
            {&x, &scale, &bias, &rm, &rv},
            {&y, &a, &b, &m, &is}};
  call.attrs.setFloat("epsilon", 1e-5);
  call.attrs.setFloat("momentum", 0.9);
  call.attrs.setInt("sync_ranks", 2);
  Status s = call.run();
  EXPECT_NE(s.message().find(
                "batch norm takes its statistics over 2 ranks "
                "(data parallelism), but it runs in one "
                "process: start it with --nproc 2 (or under mpirun -n 2)"),
            std::string::npos)
      << s.message();
  call.attrs.setInt("sync_ranks", 1);
  EXPECT_NE(
      call.check().message().find("attribute 'sync_ranks' must be >= 2, got 1"),
      std::string::npos)
      << call.check().message();
}

} // namespace
