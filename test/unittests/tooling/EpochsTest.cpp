//===- EpochsTest.cpp - where a run's steps fall in its data's epochs -----===//
//
// EpochClock with one rank (an epoch is whole steps), with ranks that
// divide the epoch, and with ranks that do not: the epoch ends on the step
// that takes its last batch.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/Epochs.h"

#include <gtest/gtest.h>

#include <vector>

using ampc::tools::EpochClock;

namespace {

std::vector<int64_t> endsIn(const EpochClock &c, int64_t steps) {
  std::vector<int64_t> out;
  for (int64_t done = 1; done <= steps; ++done)
    if (c.endsAt(done))
      out.push_back(done);
  return out;
}

TEST(EpochClock, OneRankCountsWholeSteps) {
  EpochClock c{8, 1};
  EXPECT_EQ(endsIn(c, 20), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(c.epochOf(7), 1);
  EXPECT_EQ(c.epochOf(8), 2);
  EXPECT_EQ(c.firstStepOf(11), 8);
  EXPECT_EQ(c.total(16), 2);
  EXPECT_EQ(c.total(20), 3); // stops in the third
  EXPECT_EQ(c.stepsFor(2), 16);
  EXPECT_EQ(c.wholeStepsPerEpoch(), 8);
  EXPECT_DOUBLE_EQ(c.fraction(12), 1.5);
}

TEST(EpochClock, RanksThatDivideTheEpoch) {
  EpochClock c{16, 4};
  EXPECT_EQ(endsIn(c, 8), (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(c.wholeStepsPerEpoch(), 4);
  EXPECT_EQ(c.stepsFor(2), 8);
}

TEST(EpochClock, RanksThatDoNotDivideTheEpoch) {
  // Step s takes batches 3s..3s+2: batch 15 ends epoch 1 in step 5 (6
  // steps done), batch 31 epoch 2 in step 10 (11 done).
  EpochClock c{16, 3};
  EXPECT_EQ(endsIn(c, 11), (std::vector<int64_t>{6, 11}));
  EXPECT_EQ(c.stepsFor(2), 11);
  EXPECT_EQ(c.total(11), 2); // step 10's batch 32 starts no epoch of the run
  EXPECT_EQ(c.wholeStepsPerEpoch(), 0);
  EXPECT_EQ(c.epochOf(5), 1);
  EXPECT_EQ(c.epochOf(6), 2);
  EXPECT_EQ(c.firstStepOf(7), 5); // epoch 2 starts with batch 16, in step 5
  EXPECT_EQ(c.lastStepOf(7), 10); // and ends with batch 31, in step 10
  EXPECT_DOUBLE_EQ(c.fraction(11), 33.0 / 16);
}

TEST(EpochClock, NoEpochsWithoutData) {
  EpochClock c{0, 2};
  EXPECT_FALSE(c.known());
  EXPECT_FALSE(c.endsAt(5));
  EXPECT_EQ(c.stepsFor(3), 1);
}

} // namespace
