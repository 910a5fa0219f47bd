//===- ParallelTest.cpp - the CPU thread pool -----------------------------===//
#include "runtime/cpu/Parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <vector>

using namespace ampc::rt::cpu;

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
