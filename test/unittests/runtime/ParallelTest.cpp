//===- ParallelTest.cpp - the CPU thread pool -----------------------------===//
//
// The pool covers every index once, and a thread it cannot start (or a
// count above its limit) is a Status, never an exception or an abort.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Parallel.h"
#include "ProgramBuilder.h"
#include "runtime/Session.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cerrno>
#include <vector>

using namespace ampc::rt::cpu;
using ampc::rt::Status;

TEST(ThreadPool, CoversEveryIndexOnce) {
  ThreadPool pool(4);
  CpuContext ctx{&pool};
  for (int64_t n : {0, 1, 3, 7, 1000, 12345}) {
    std::vector<std::atomic<int>> hits(n);
    parallelFor(ctx, n, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        hits[i]++;
    });
    for (int64_t i = 0; i < n; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadPool, RunsManyRoundsBackToBack) {
  ThreadPool pool(3);
  CpuContext ctx{&pool};
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 200; ++round)
    parallelFor(ctx, 100, 1, [&](int64_t b, int64_t e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 200 * 100);
}

namespace {
// Starts the first kStarted workers with pthread_create, then fails as a
// system out of threads does (EAGAIN, what pthread_create returns at the
// limit on threads or memory).
constexpr int kStarted = 2;
int startedSoFar = 0;
int startThenFail(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
                  void *arg) {
  if (startedSoFar == kStarted)
    return EAGAIN;
  ++startedSoFar;
  return pthread_create(t, attr, fn, arg);
}
} // namespace

TEST(ThreadPool, ReportsAThreadItCannotStart) {
  startedSoFar = 0;
  {
    ThreadPool pool(8, startThenFail);
    ASSERT_FALSE(pool.status().isOk());
    EXPECT_EQ(pool.status().message(),
              "cannot start thread 4 of the 8 threads asked for: Resource "
              "temporarily unavailable (the system's limit on threads or "
              "memory; ask for fewer)");
    // Its team is the calling thread and the threads the probe could
    // start; the probe's threads all ended.
    EXPECT_EQ(pool.size(), 1u + kStarted);
    CpuContext ctx{&pool};
    std::vector<std::atomic<int>> hits(1000);
    parallelFor(ctx, 1000, 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i)
        hits[i]++;
    });
    for (int64_t i = 0; i < 1000; ++i)
      ASSERT_EQ(hits[i].load(), 1) << "i=" << i;
  }
  EXPECT_EQ(startedSoFar, kStarted);
}

TEST(ThreadPool, RefusesMoreThanItsLimit) {
  EXPECT_TRUE(checkThreadCount(0).isOk());
  EXPECT_TRUE(checkThreadCount(ThreadPool::kMaxThreads).isOk());
  Status s = checkThreadCount(100000);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "100000 threads asked for, more than the 4096 a CPU "
                         "thread pool starts (0 starts one per hardware "
                         "thread)");
  // Nothing is started, and the pool still runs, on the calling thread.
  startedSoFar = 0;
  ThreadPool pool(ThreadPool::kMaxThreads + 1, startThenFail);
  EXPECT_FALSE(pool.status().isOk());
  EXPECT_EQ(startedSoFar, 0);
  EXPECT_EQ(pool.size(), 1u);
  int64_t covered = 0;
  parallelFor(CpuContext{&pool}, 100, 1,
              [&](int64_t b, int64_t e) { covered += e - b; });
  EXPECT_EQ(covered, 100);
}

TEST(ThreadPool, SessionRefusesTooManyThreads) {
  ampc::rt::proto::Program p = ampc::rt::test::reluProgram(4, 128);
  ampc::rt::ProgramInfo info;
  ASSERT_TRUE(ampc::rt::test::loadProgram(p, info).isOk());
  ampc::rt::SessionOptions options;
  options.threads = 100000;
  std::unique_ptr<ampc::rt::Session> session;
  Status s = ampc::rt::Session::create(info.functions[0], options, session);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), checkThreadCount(100000).message());
  EXPECT_EQ(session, nullptr);
  options.threads = 2;
  EXPECT_TRUE(
      ampc::rt::Session::create(info.functions[0], options, session).isOk());
}
