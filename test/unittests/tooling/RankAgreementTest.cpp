//===- RankAgreementTest.cpp - a rank compares its run with rank 0's ------===//

#include "runtime/tooling/RankAgreement.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

using namespace ampc;
using namespace ampc::tools;

namespace {

/// Rank `rank` of `size`, where every call the test does not expect fails
/// it: each fake below takes the one its function makes.
struct OnlyExpectedCalls : rt::Collective {
  OnlyExpectedCalls(int rank, int size) : rank_(rank), size_(size) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  rt::Status broadcast(void *, size_t) override { return unexpected(); }
  rt::Status sumOverRanks(double *, size_t) override { return unexpected(); }
  rt::Status startSum(float *, size_t) override { return unexpected(); }
  rt::Status startMean(uint16_t *, size_t, rt::DType) override {
    return unexpected();
  }
  rt::Status finish(const void *) override { return unexpected(); }
  void finishAll() override {}
  double timeoutSeconds() const override { return 60; }
  rt::Status waitForAll(double) override { return unexpected(); }
  double allReduceSeconds() const override { return 0; }

  static rt::Status unexpected() {
    ADD_FAILURE() << "a collective call the function under test should not "
                     "make";
    return rt::Status::error("unexpected");
  }

  int rank_, size_;
};

/// Rank `rank` of two, whose broadcasts deliver rank 0's facts (its size,
/// then its bytes), as MpiCollective's would.
struct RankZeroHas : OnlyExpectedCalls {
  RankZeroHas(int rank, RunFacts leadFacts)
      : OnlyExpectedCalls(rank, 2), lead(encodeRunFacts(leadFacts)) {}
  rt::Status broadcast(void *data, size_t bytes) override {
    if (failing)
      return rt::Status::error("a broadcast from rank 0 waited 60 s");
    if (rank_ != 0) {
      if (calls == 0) {
        uint64_t n = lead.size();
        EXPECT_EQ(bytes, sizeof n);
        std::memcpy(data, &n, sizeof n);
      } else {
        EXPECT_EQ(bytes, lead.size());
        std::memcpy(data, lead.data(), bytes);
      }
    }
    ++calls;
    return rt::Status::ok();
  }

  std::string lead;
  int calls = 0;
  bool failing = false;
};

// What the tool tells a rank that differs to do (LoopOptions::howToStart).
const char *const kHowToStart = "Start every rank alike";

const RunFacts kLead = {
    {"--lr", "0.1"}, {"--seed", "7"}, {"the weights' CRC-32", "0x01234567"}};

TEST(RankAgreement, FactsTravelAsTheyAre) {
  RunFacts facts = {{"--data", "/a path; with: \"quotes\""},
                    {"empty", ""},
                    {std::string("nul\0key", 7), std::string("\0\xff", 2)}};
  RunFacts back;
  ASSERT_TRUE(decodeRunFacts(encodeRunFacts(facts), back));
  EXPECT_EQ(back, facts);
  ASSERT_TRUE(decodeRunFacts("", back));
  EXPECT_TRUE(back.empty());
}

TEST(RankAgreement, CutFactsAreRefused) {
  std::string bytes = encodeRunFacts(kLead);
  RunFacts back;
  for (size_t n : {size_t(1), size_t(5), bytes.size() - 1})
    EXPECT_FALSE(decodeRunFacts(bytes.substr(0, n), back)) << n;
}

TEST(RankAgreement, RankZeroAndAnEqualRankPass) {
  RankZeroHas lead(0, kLead);
  EXPECT_TRUE(checkSameRunAsRankZero(lead, {{"--lr", "0.5"}}, kHowToStart))
      << "rank 0 compares with no one";
  EXPECT_EQ(lead.calls, 2);
  RankZeroHas other(1, kLead);
  rt::Status s = checkSameRunAsRankZero(other, kLead, kHowToStart);
  EXPECT_TRUE(s) << s.message();
}

TEST(RankAgreement, ADifferentRankNamesEachFact) {
  RunFacts mine = kLead;
  mine["--lr"] = "0.2";
  mine.erase("--seed");
  mine["--sync-batch-norm"] = "true";
  RankZeroHas other(1, kLead);
  rt::Status s = checkSameRunAsRankZero(other, mine, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("(--lr 0.2 here, 0.1 on rank 0; "
                             "--seed none here, 7 on rank 0; "
                             "--sync-batch-norm true here, none on rank 0)"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(s.message().find("CRC-32"), std::string::npos) << s.message();
  // Then what the tool says to do about it.
  const std::string tail = ". " + std::string(kHowToStart);
  EXPECT_EQ(s.message().substr(s.message().size() - tail.size()), tail)
      << s.message();
}

// A value "none" is not a fact that is missing.
TEST(RankAgreement, AMissingFactIsNotTheValueNone) {
  RankZeroHas other(1, {{"--loss-scale", "none"}});
  rt::Status s = checkSameRunAsRankZero(other, {}, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("(--loss-scale none here, none on rank 0)"),
            std::string::npos)
      << s.message();
}

// The step's hash is named with the flags that changed it, and alone when
// they agree (another model file, another build).
TEST(RankAgreement, TheStepsHashIsNamedWheneverItDiffers) {
  RunFacts lead = kLead;
  lead[kStepHashFact] = "0xaaaa";
  RunFacts mine = lead;
  mine[kStepHashFact] = "0xbbbb";
  RankZeroHas sameFlags(1, lead);
  rt::Status s = checkSameRunAsRankZero(sameFlags, mine, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("(the compiled step's hash 0xbbbb here, 0xaaaa "
                             "on rank 0)"),
            std::string::npos)
      << s.message();
  mine["--lr"] = "0.3";
  RankZeroHas otherFlags(1, lead);
  s = checkSameRunAsRankZero(otherFlags, mine, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("(--lr 0.3 here, 0.1 on rank 0; the compiled "
                             "step's hash 0xbbbb here, 0xaaaa on rank 0)"),
            std::string::npos)
      << s.message();
}

TEST(RankAgreement, AFailedBroadcastSaysWhatItWasFor) {
  RankZeroHas other(1, kLead);
  other.failing = true;
  rt::Status s = checkSameRunAsRankZero(other, kLead, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("comparing this rank's run with rank 0's"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("waited 60 s"), std::string::npos) << s.message();
  RankZeroHas lead(0, kLead);
  lead.failing = true;
  s = checkSameRunAsRankZero(lead, kLead, kHowToStart);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("sending this run's facts to the other ranks"),
            std::string::npos)
      << s.message();
}

/// Rank `rank` of `failed.size()`, whose sum over the ranks adds the
/// others' slots: 1 where `failed` says that rank's call failed.
struct OthersFailed : OnlyExpectedCalls {
  OthersFailed(int rank, std::vector<bool> failed)
      : OnlyExpectedCalls(rank, static_cast<int>(failed.size())),
        failed(std::move(failed)) {}
  rt::Status sumOverRanks(double *values, size_t count) override {
    EXPECT_EQ(count, failed.size());
    for (size_t r = 0; r < count; ++r)
      if (static_cast<int>(r) != rank_)
        values[r] += failed[r] ? 1.0 : 0.0;
    return rt::Status::ok();
  }

  std::vector<bool> failed;
};

TEST(RankAgreement, EveryRankLearnsWhichRanksFailed) {
  rt::Status ok = rt::Status::ok();
  OthersFailed allWell(0, {false, false, false});
  EXPECT_TRUE(checkEveryRank(allWell, ok, "load the checkpoint"));

  OthersFailed oneFailed(0, {false, true, false});
  rt::Status s = checkEveryRank(oneFailed, ok, "load the checkpoint");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "rank 1 could not load the checkpoint (its own "
                         "error says why)");

  OthersFailed twoFailed(1, {true, false, true});
  s = checkEveryRank(twoFailed, ok, "write the checkpoint in ckpt");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "ranks 0, 2 could not write the checkpoint in ckpt "
                         "(their own error says why)");
}

TEST(RankAgreement, AFailedRankKeepsItsOwnError) {
  // Its slot goes out set, so the others learn of it.
  struct SeesOwnSlot : OthersFailed {
    using OthersFailed::OthersFailed;
    rt::Status sumOverRanks(double *values, size_t count) override {
      own = values[static_cast<size_t>(rank_)];
      return OthersFailed::sumOverRanks(values, count);
    }
    double own = -1;
  } ranks(1, {true, false});
  rt::Status mine = rt::Status::error("ckpt/checkpoint.ampc: cannot open");
  rt::Status s = checkEveryRank(ranks, mine, "load the checkpoint");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), mine.message());
  EXPECT_EQ(ranks.own, 1.0);
}

} // namespace
