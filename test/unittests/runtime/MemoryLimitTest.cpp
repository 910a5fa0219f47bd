//===- MemoryLimitTest.cpp - sizes that overflow or do not fit ------------===//
//
// Element counts and byte sizes are computed without overflow, sizes are
// written and read as people write them, a Program whose sizes overflow is
// refused on load, and a Session whose arena does not fit the device (or
// beside the process's other sessions) is refused before it allocates.
//
//===----------------------------------------------------------------------===//
#include "ProgramBuilder.h"
#include "runtime/ByteSize.h"
#include "runtime/HostMemory.h"
#include "runtime/Session.h"

#include <gtest/gtest.h>

#include <cstring>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::test;
namespace pb = ampc::rt::proto;

namespace {

constexpr int64_t kTwo40 = int64_t(1) << 40;

std::optional<int64_t> elements(std::vector<int64_t> dims) {
  return checkedNumElements(dims.data(), dims.size());
}
std::optional<int64_t> bytes(std::vector<int64_t> dims, int64_t elementBytes) {
  return checkedByteSize(dims.data(), dims.size(), elementBytes);
}

// One thread, under `memoryLimit` bytes (0: the host's memory).
SessionOptions limitedTo(uint64_t memoryLimit) {
  SessionOptions options;
  options.memoryLimit = memoryLimit;
  options.threads = 1;
  return options;
}

} // namespace

TEST(ByteSize, CountsWithoutOverflow) {
  EXPECT_EQ(elements({2, 3, 4}), 24);
  EXPECT_EQ(elements({}), 1);
  EXPECT_EQ(elements({kTwo40, 0}), 0);
  EXPECT_EQ(elements({kTwo40, kTwo40}), std::nullopt);
  // A zero dimension does not hide an overflowing product of the others.
  EXPECT_EQ(elements({0, kTwo40, kTwo40}), std::nullopt);
  EXPECT_EQ(elements({2, -1}), std::nullopt);
  EXPECT_EQ(elements({std::numeric_limits<int64_t>::max()}),
            std::numeric_limits<int64_t>::max());
  EXPECT_EQ(bytes({1000, 1000}, 4), 4000000);
  EXPECT_EQ(bytes({int64_t(1) << 62}, 4), std::nullopt);
  EXPECT_EQ(bytes({int64_t(1) << 62, 0}, 4), std::nullopt);
  EXPECT_EQ(bytes({int64_t(1) << 61}, 2), int64_t(1) << 62);
}

TEST(ByteSize, FormatsSizesForPeople) {
  EXPECT_EQ(formatBytes(0), "0 bytes");
  EXPECT_EQ(formatBytes(1), "1 byte");
  EXPECT_EQ(formatBytes(1023), "1023 bytes");
  EXPECT_EQ(formatBytes(1024), "1 KiB");
  EXPECT_EQ(formatBytes(1536), "1.5 KiB");
  EXPECT_EQ(formatBytes(uint64_t(16) << 30), "16 GiB");
  EXPECT_EQ(formatBytes(3435973836), "3.2 GiB");
  EXPECT_EQ(formatBytes((uint64_t(1) << 30) - 1), "1.0 GiB");
  EXPECT_EQ(formatBytes(uint64_t(4000000000000000)), "3.6 PiB");
  EXPECT_EQ(describeBytes(100), "100 bytes");
  EXPECT_EQ(describeBytes(3435973836), "3.2 GiB (3435973836 bytes)");
}

TEST(ByteSize, ParsesSizes) {
  auto parse = [](const char *text) -> std::optional<uint64_t> {
    uint64_t v;
    std::string error;
    if (!parseByteSize(text, v, error))
      return std::nullopt;
    return v;
  };
  EXPECT_EQ(parse("1073741824"), uint64_t(1) << 30);
  EXPECT_EQ(parse("100B"), 100u);
  EXPECT_EQ(parse("512M"), uint64_t(512) << 20);
  EXPECT_EQ(parse("512mb"), uint64_t(512) << 20);
  EXPECT_EQ(parse("16G"), uint64_t(16) << 30);
  EXPECT_EQ(parse("1.5GiB"), uint64_t(3) << 29);
  EXPECT_EQ(parse("2t"), uint64_t(2) << 40);
  EXPECT_EQ(parse("0.5K"), 512u);
  for (const char *bad : {"", "G", "12X", "1.2.3G", "-5G", "0", "0.0001",
                          "9223372036854775808", "8388608T", "16 G"})
    EXPECT_EQ(parse(bad), std::nullopt) << bad;
  uint64_t v;
  std::string error;
  ASSERT_FALSE(parseByteSize("12X", v, error));
  EXPECT_EQ(error, "has an unknown unit 'X' (units: B, K, M, G, T, P; KiB "
                   "and KB mean K)");
  ASSERT_FALSE(parseByteSize("lots", v, error));
  EXPECT_NE(error.find("is not a size"), std::string::npos) << error;
}

TEST(MemoryLimit, ProgramsWhoseSizesOverflowAreRefused) {
  // 2^40 x 2^40 elements: the count overflows int64.
  pb::Program p = reluProgram(4, 128);
  auto *shape = p.mutable_functions(0)
                    ->mutable_values(0)
                    ->mutable_type()
                    ->mutable_shape();
  shape->Set(0, kTwo40);
  shape->Add(kTwo40);
  expectLoadError(p, "value 0: shape [1099511627776, 1099511627776] of f32 is "
                     "too large: its byte size overflows int64, more than "
                     "the 4 TiB a Program value may have");
  // A zero dimension does not make the others' product safe.
  shape->Add(0);
  expectLoadError(p, "is too large: its byte size overflows int64");
  // 2^61 f32 elements fit int64, their bytes do not.
  p = reluProgram(int64_t(1) << 61, 128);
  expectLoadError(p, "value 0: shape [2305843009213693952] of f32 is too "
                     "large: its byte size overflows int64");
  // Fits int64 but not a Program.
  p = reluProgram(int64_t(1) << 41, 128);
  expectLoadError(p, "value 0: shape [2199023255552] of f32 is too large: 8 "
                     "TiB (8796093022208 bytes), more than the 4 TiB a "
                     "Program value may have");
  p = reluProgram(4, (int64_t(1) << 42) + 64);
  expectLoadError(p, "arena of 4.0 TiB (4398046511168 bytes) is more than the "
                     "4 TiB a Program may have");
  // An offset near INT64_MAX: offset + size would overflow.
  p = reluProgram(4, 128);
  p.mutable_functions(0)->mutable_values(1)->set_arena_offset(
      std::numeric_limits<int64_t>::max() / 64 * 64);
  expectLoadError(p, "value 1 (16 bytes at offset 9223372036854775744) ends "
                     "past the arena (128 bytes)");
}

TEST(MemoryLimit, SessionWhoseArenaDoesNotFitIsRefused) {
  std::unique_ptr<Session> session;
  // 1 MiB of arena under a 512 KiB limit.
  Status s =
      createSession(reluProgram(4, 1 << 20), limitedTo(512 << 10), session);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "arena of 1 MiB (1048576 bytes) for function "
                         "'forward' does not fit: the CPU has 512 KiB "
                         "(524288 bytes) under the session's memory limit");
  EXPECT_EQ(session, nullptr);
  // The same under a limit it fits in runs.
  s = createSession(reluProgram(4, 1 << 20), limitedTo(2 << 20), session);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::vector<float> x = {-1, 2, -3, 4};
  ASSERT_TRUE(session->setInput("x", {DType::F32, {4}, x.data()}));
  ASSERT_TRUE(session->run());
}

TEST(MemoryLimit, SessionsShareTheDevice) {
  std::unique_ptr<Session> first, second;
  const uint64_t limit = 3 << 20; // two 2 MiB arenas do not fit together
  Status s = createSession(reluProgram(4, 2 << 20), limitedTo(limit), first);
  ASSERT_TRUE(s.isOk()) << s.message();
  s = createSession(reluProgram(4, 2 << 20), limitedTo(limit), second);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "arena of 2 MiB (2097152 bytes) for function "
                         "'forward' does not fit: the CPU has 3 MiB (3145728 "
                         "bytes) under the session's memory limit, of which "
                         "the process's other sessions hold 2 MiB (2097152 "
                         "bytes)");
  first.reset();
  s = createSession(reluProgram(4, 2 << 20), limitedTo(limit), second);
  EXPECT_TRUE(s.isOk()) << s.message();
}

TEST(MemoryLimit, StagingCountsTowardTheSession) {
  // Parameter a takes parameter b's value and b takes a's: both are staged.
  pb::Program p;
  pb::Function &f = addFunction(p, "step", 128);
  addValue(f, pb::F32, {16}, 0);  // 0: a
  addValue(f, pb::F32, {16}, 64); // 1: b
  std::string zeros(64, '\0');
  bind(f.mutable_params(), "a", 0)->set_init(zeros);
  bind(f.mutable_params(), "b", 1)->set_init(zeros);
  f.mutable_params(0)->set_update(1);
  f.mutable_params(1)->set_update(0);
  std::unique_ptr<Session> session;
  Status s = createSession(p, limitedTo(150), session);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), "arena of 128 bytes and 128 bytes to stage parameter "
                         "updates for function 'step' do not fit: the CPU "
                         "has 150 bytes under the session's memory limit");
  s = createSession(p, limitedTo(256), session);
  ASSERT_TRUE(s.isOk()) << s.message();
  // The swap goes through the staging.
  float one = 1;
  std::vector<float> ones(16, one);
  ASSERT_TRUE(session->setParam("a", {DType::F32, {16}, ones.data()}));
  ASSERT_TRUE(session->run());
  TensorView a, b;
  ASSERT_TRUE(session->param("a", a));
  ASSERT_TRUE(session->param("b", b));
  EXPECT_EQ(a.as<float>()[0], 0);
  EXPECT_EQ(b.as<float>()[15], 1);
}

TEST(MemoryLimit, DeviceMemoryIsKnownAndBoundsTheSession) {
  MemoryLimit m = hostMemory();
  ASSERT_GT(m.bytes, 0u) << "sysconf gave no physical memory";
  EXPECT_FALSE(m.source.empty());
  if (m.bytes >= uint64_t(1) << 42)
    GTEST_SKIP() << "this machine has 4 TiB or more";
  // The largest arena a Program may have is more than this machine has: it
  // is refused before anything is allocated.
  std::unique_ptr<Session> session;
  Status s =
      createSession(reluProgram(4, int64_t(1) << 42), limitedTo(0), session);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message().rfind("arena of 4 TiB (4398046511104 bytes) for "
                              "function 'forward' does not fit: the CPU has ",
                              0),
            0u)
      << s.message();
  EXPECT_NE(s.message().find(m.source), std::string::npos) << s.message();
}
