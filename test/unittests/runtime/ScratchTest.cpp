//===- ScratchTest.cpp - kernel scratch blocks kept between runs ----------===//
#include "runtime/cpu/Scratch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <thread>

using namespace ampc::rt::cpu;

namespace {

// Runs `body` on a new thread, whose cache starts empty (this one's holds
// what earlier kernel tests left there).
template <typename F> void onFreshThread(F body) {
  std::thread t([&] {
    ASSERT_EQ(cachedScratchBytes(), 0u);
    body();
  });
  t.join();
}

TEST(Scratch, ABlockIsKeptAndReusedByTheNextRun) {
  onFreshThread([] {
    float *first = nullptr;
    {
      Scratch<float> s;
      first = s.resize(1 << 20);
      ASSERT_NE(first, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
      first[(1 << 20) - 1] = 1; // the whole size is usable
    }
    EXPECT_EQ(cachedScratchBytes(), size_t(4) << 20);
    {
      Scratch<float> s;
      EXPECT_EQ(s.resize(1000), first) << "the cached block is taken again";
    }
  });
}

TEST(Scratch, TheSmallestCachedBlockThatFitsIsTaken) {
  onFreshThread([] {
    void *big = nullptr, *small = nullptr;
    {
      Scratch<uint8_t> a, b;
      big = a.resize(1 << 22);
      small = b.resize(1 << 12);
    }
    Scratch<uint8_t> c, d;
    EXPECT_EQ(c.resize(100), small);
    EXPECT_EQ(d.resize(1 << 20), big);
  });
}

TEST(Scratch, ABlockNoneFitsReplacesTheSmallerOnes) {
  onFreshThread([] {
    // A growing series of requests must not keep every size it passed
    // through: the new block replaces the cached ones too small for it.
    Scratch<double> s;
    s.resize(8);
    s.resize(1 << 10);
    double *big = s.resize(1 << 16);
    EXPECT_EQ(s.size(), size_t(1) << 16);
    EXPECT_EQ(cachedScratchBytes(), 0u);
    {
      Scratch<double> small;
      small.resize(4); // none cached: a block of its own
    }
    EXPECT_GT(cachedScratchBytes(), 0u);
    EXPECT_LT(cachedScratchBytes(), size_t(1) << 10);
    Scratch<double> t;
    EXPECT_NE(t.resize(1 << 12), big); // big is still in use by s
    EXPECT_EQ(cachedScratchBytes(), 0u);
  });
}

TEST(Scratch, EachThreadHasItsOwnCache) {
  onFreshThread([] {
    void *mine = nullptr;
    {
      Scratch<uint8_t> s;
      mine = s.resize(1 << 16);
    }
    void *theirs = nullptr;
    std::thread([&] {
      Scratch<uint8_t> s;
      theirs = s.resize(1 << 16);
    }).join();
    EXPECT_NE(theirs, mine);
    Scratch<uint8_t> again;
    EXPECT_EQ(again.resize(1 << 16), mine);
  });
}

} // namespace
