//===- CheckpointTest.cpp - the checkpoint file of amp-run ----------------===//
//
// Round trips of every dtype and the history; a version-1 file built here by
// hand from the documented layout, with a CRC-32 written here, so the format
// cannot drift unnoticed; every truncation and every flipped byte refused;
// corrupt counts refused without allocating (the global operator new is
// replaced below to watch); the atomic write keeping the old checkpoint when
// the new one fails; and checkConfig's messages.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/Checkpoint.h"

#include "TestFiles.h"
#include "runtime/Checksum.h"
#include "runtime/Half.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <sstream>
#include <sys/resource.h>

using namespace ampc::rt;
using ampc::tools::checkConfig;
using ampc::tools::Checkpoint;
using ampc::tools::checkpointPath;
using ampc::tools::decodeCheckpoint;
using ampc::tools::encodeCheckpoint;
using ampc::tools::readCheckpoint;
using ampc::tools::writeCheckpoint;

//===----------------------------------------------------------------------===//
// Allocation watch: outside a watch the replacement only forwards to malloc.
//===----------------------------------------------------------------------===//

namespace {
std::atomic<bool> gWatching{false};
std::atomic<size_t> gLargest{0}, gTotal{0};

// Records the largest single allocation and the total while it lives.
struct AllocationWatch {
  AllocationWatch() {
    gLargest = 0;
    gTotal = 0;
    gWatching = true;
  }
  ~AllocationWatch() { gWatching = false; }
  size_t largest() const { return gLargest; }
  size_t total() const { return gTotal; }
};
} // namespace

void *operator new(size_t n) {
  if (gWatching.load(std::memory_order_relaxed)) {
    gTotal += n;
    size_t seen = gLargest.load();
    while (n > seen && !gLargest.compare_exchange_weak(seen, n)) {
    }
  }
  if (void *p = std::malloc(n ? n : 1))
    return p;
  throw std::bad_alloc();
}
// Not inlined: GCC would otherwise see free() meet a pointer from operator
// new at every delete and warn (-Wmismatched-new-delete).
__attribute__((noinline)) void operator delete(void *p) noexcept {
  std::free(p);
}
__attribute__((noinline)) void operator delete(void *p, size_t) noexcept {
  std::free(p);
}

namespace {

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

// CRC-32 (ISO-HDLC), bit by bit: independent of the zlib the code uses.
uint32_t crc32Ref(const uint8_t *p, size_t n) {
  uint32_t c = 0xFFFFFFFFu;
  for (size_t i = 0; i < n; ++i) {
    c ^= p[i];
    for (int k = 0; k < 8; ++k)
      c = (c >> 1) ^ (0xEDB88320u & (0u - (c & 1u)));
  }
  return ~c;
}

void put32(std::vector<uint8_t> &b, size_t at, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    b[at + i] = uint8_t(v >> (8 * i));
}
void put64(std::vector<uint8_t> &b, size_t at, uint64_t v) {
  put32(b, at, uint32_t(v));
  put32(b, at + 4, uint32_t(v >> 32));
}

// Makes both checksums right again after a test has patched the bytes.
void fixChecksums(std::vector<uint8_t> &b) {
  put32(b, 20, crc32Ref(b.data(), 20));
  put32(b, b.size() - 4, crc32Ref(b.data(), b.size() - 4));
}

// Appends fields in the documented layout and remembers where each went.
struct FileBuilder {
  std::vector<uint8_t> b;
  std::map<std::string, size_t> at;

  FileBuilder &mark(const std::string &name) {
    at[name] = b.size();
    return *this;
  }
  FileBuilder &raw(const void *p, size_t n) {
    auto *c = static_cast<const uint8_t *>(p);
    b.insert(b.end(), c, c + n);
    return *this;
  }
  FileBuilder &u8(uint8_t v) { return raw(&v, 1); }
  FileBuilder &u32(uint32_t v) {
    b.resize(b.size() + 4);
    put32(b, b.size() - 4, v);
    return *this;
  }
  FileBuilder &u64(uint64_t v) {
    b.resize(b.size() + 8);
    put64(b, b.size() - 8, v);
    return *this;
  }
  FileBuilder &f64(double v) {
    uint64_t bits;
    std::memcpy(&bits, &v, 8);
    return u64(bits);
  }
  FileBuilder &str(const std::string &s) {
    return u64(s.size()).raw(s.data(), s.size());
  }
  FileBuilder &header(uint32_t version = 1) {
    return raw("AMPCCKPT", 8).u32(version).u64(0).u32(0);
  }
  // Fills in the length and both checksums.
  std::vector<uint8_t> finish() {
    u32(0);
    put64(b, 12, b.size());
    fixChecksums(b);
    return b;
  }
};

// A small version-1 file: step 3, config {amp: O1}, one i64 scalar "s" = 7,
// a step history with one column and one row, an empty eval history.
FileBuilder smallFile() {
  FileBuilder f;
  f.header().mark("step").u64(3);
  f.mark("config count").u64(1).mark("key length").str("amp").str("O1");
  f.mark("tensor count").u64(1).mark("name length").str("s");
  f.mark("dtype").u8(5).mark("rank").u64(0).mark("byte count").u64(8);
  f.mark("data").u64(7);
  f.mark("step columns").u64(1).str("loss").mark("step rows").u64(1).f64(0.5);
  f.mark("eval columns").u64(0).mark("eval rows").u64(0);
  return f;
}

Checkpoint smallCheckpoint() {
  Checkpoint c;
  c.step = 3;
  c.config = {{"amp", "O1"}};
  HostTensor s = makeHostTensor(DType::I64, {}, "s");
  int64_t seven = 7;
  std::memcpy(s.bytes.data(), &seven, 8);
  c.params.push_back(s);
  c.stepColumns = {"loss"};
  c.stepRows = {{0.5}};
  return c;
}

// A tensor whose bytes are a pattern that differs per tensor and element.
HostTensor patterned(DType dtype, Shape shape, std::string name, int seed) {
  HostTensor t = makeHostTensor(dtype, std::move(shape), std::move(name));
  for (size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = uint8_t(seed * 31 + i * 7 + 1);
  if (dtype == DType::I1)
    for (size_t i = 0; i < t.bytes.size(); ++i)
      t.bytes[i] = uint8_t((i + seed) % 2);
  return t;
}

// Every dtype, scalars, a zero-size tensor, and history with non-finite
// values and -0.
Checkpoint fullCheckpoint() {
  Checkpoint c;
  c.step = 1234;
  c.config = {{"amp", "O2"},
              {"program", "9f86d081884c7d65"},
              {"seed", "7"},
              {"optimizer", "adam"}};
  c.params.push_back(patterned(DType::F32, {2, 3}, "fc1.weight", 1));
  HostTensor f16 = makeHostTensor(DType::F16, {3}, "fc1.weight.f16");
  const float f16Values[] = {1.5f, -65504.0f, 0.000061035156f};
  for (int i = 0; i < 3; ++i) {
    uint16_t h = floatToHalfBits(f16Values[i]);
    std::memcpy(&f16.bytes[2 * i], &h, 2);
  }
  c.params.push_back(f16);
  c.params.push_back(patterned(DType::BF16, {2, 2}, "fc2.weight.bf16", 2));
  c.params.push_back(patterned(DType::F64, {2}, "norm.running_var", 3));
  c.params.push_back(patterned(DType::I64, {}, "ampc.step", 4));
  c.params.push_back(patterned(DType::I64, {}, "ampc.micro_step", 5));
  c.params.push_back(patterned(DType::I32, {}, "loss_scale.good_steps", 6));
  c.params.push_back(patterned(DType::I32, {}, "loss_scale.bad_steps", 7));
  c.params.push_back(patterned(DType::F32, {}, "loss_scale", 8));
  c.params.push_back(patterned(DType::I1, {5}, "mask", 9));
  c.params.push_back(patterned(DType::F32, {0, 3}, "empty", 10));
  c.params.push_back(patterned(DType::F32, {2, 3}, "fc1.weight.adam_m", 11));
  double nan = std::numeric_limits<double>::quiet_NaN();
  double inf = std::numeric_limits<double>::infinity();
  c.stepColumns = {"step", "loss", "loss_scale", "skipped"};
  c.stepRows = {{0, 2.302585092994046, 65536, 0},
                {1, nan, 32768, 1},
                {2, inf, -0.0, 0},
                {3, 1e-310, 32768, 0}};
  c.evalColumns = {"step", "accuracy"};
  c.evalRows = {{4, 0.8125}};
  return c;
}

bool sameBits(double a, double b) { return std::memcmp(&a, &b, 8) == 0; }

void expectSameTable(const std::vector<std::vector<double>> &a,
                     const std::vector<std::vector<double>> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t r = 0; r < a.size(); ++r) {
    ASSERT_EQ(a[r].size(), b[r].size()) << "row " << r;
    for (size_t k = 0; k < a[r].size(); ++k)
      EXPECT_TRUE(sameBits(a[r][k], b[r][k]))
          << "row " << r << " column " << k << ": " << a[r][k]
          << " != " << b[r][k];
  }
}

void expectSame(const Checkpoint &a, const Checkpoint &b) {
  EXPECT_EQ(a.step, b.step);
  EXPECT_EQ(a.config, b.config);
  ASSERT_EQ(a.params.size(), b.params.size());
  for (size_t i = 0; i < a.params.size(); ++i) {
    SCOPED_TRACE("tensor " + a.params[i].name);
    EXPECT_EQ(a.params[i].name, b.params[i].name);
    EXPECT_EQ(a.params[i].dtype, b.params[i].dtype);
    EXPECT_EQ(a.params[i].shape, b.params[i].shape);
    EXPECT_EQ(a.params[i].bytes, b.params[i].bytes);
  }
  EXPECT_EQ(a.stepColumns, b.stepColumns);
  expectSameTable(a.stepRows, b.stepRows);
  EXPECT_EQ(a.evalColumns, b.evalColumns);
  expectSameTable(a.evalRows, b.evalRows);
}

// What `out` holds before a read that must fail: any change shows.
Checkpoint sentinel() {
  Checkpoint c;
  c.step = 99;
  c.config = {{"sentinel", "yes"}};
  c.params.push_back(patterned(DType::F32, {1}, "sentinel", 42));
  c.stepColumns = {"x"};
  c.stepRows = {{42}};
  return c;
}

std::vector<uint8_t> encoded(const Checkpoint &c) {
  std::vector<uint8_t> b;
  Status s = encodeCheckpoint(c, b);
  EXPECT_TRUE(s) << s.message();
  return b;
}

// The decoder's message for `bytes`; also checks that `out` was left alone.
std::string decodeError(const std::vector<uint8_t> &bytes) {
  Checkpoint out = sentinel();
  Status s = decodeCheckpoint(bytes.data(), bytes.size(), "ckpt", out);
  EXPECT_FALSE(s) << "decoded a bad file";
  expectSame(out, sentinel());
  return s.message();
}

class CheckpointFile : public test::ScratchDirTest {
protected:
  CheckpointFile() : ScratchDirTest("checkpoint") {}
  void SetUp() override {
    ScratchDirTest::SetUp();
    path = dir + "/checkpoint.ampc";
  }

  void writeBytes(const std::vector<uint8_t> &b, size_t n) {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char *>(b.data()), std::streamsize(n));
  }
  std::vector<uint8_t> fileBytes() { return test::slurpBytes(path); }
  // readCheckpoint's message; also checks that `out` was left alone.
  std::string readError() {
    Checkpoint out = sentinel();
    Status s = readCheckpoint(dir, out);
    EXPECT_FALSE(s) << "read a bad file";
    expectSame(out, sentinel());
    return s.message();
  }

  std::string path;
};

//===----------------------------------------------------------------------===//
// The format
//===----------------------------------------------------------------------===//

TEST(CheckpointFormat, ReferenceCrcIsCrc32) {
  const char *check = "123456789";
  EXPECT_EQ(crc32Ref(reinterpret_cast<const uint8_t *>(check), 9), 0xCBF43926u);
}

// crc32Of continues a CRC over pieces (the ranks' data and weights,
// RankAgreement.h), empty ones included.
TEST(CheckpointFormat, Crc32OfContinuesOverPieces) {
  const char *check = "123456789";
  EXPECT_EQ(crc32Of(check, 9), 0xCBF43926u);
  uint32_t crc = crc32Of(check, 4);
  crc = crc32Of(nullptr, 0, crc);
  EXPECT_EQ(crc32Of(check + 4, 5, crc), 0xCBF43926u);
}

TEST(CheckpointFormat, HandBuiltVersion1FileDecodes) {
  std::vector<uint8_t> file = smallFile().finish();
  Checkpoint c;
  Status s = decodeCheckpoint(file.data(), file.size(), "hand", c);
  ASSERT_TRUE(s) << s.message();
  expectSame(c, smallCheckpoint());
}

TEST(CheckpointFormat, EncoderWritesTheDocumentedBytes) {
  EXPECT_EQ(encoded(smallCheckpoint()), smallFile().finish());
}

TEST(CheckpointFormat, RoundTripInMemory) {
  Checkpoint full = fullCheckpoint(), back = sentinel();
  std::vector<uint8_t> bytes = encoded(full);
  Status s = decodeCheckpoint(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(s) << s.message();
  expectSame(back, full);
  // The NaN is a NaN, bit for bit.
  EXPECT_TRUE(std::isnan(back.stepRows[1][1]));
  EXPECT_TRUE(std::signbit(back.stepRows[2][2]));
}

TEST(CheckpointFormat, EmptyCheckpointRoundTrips) {
  Checkpoint empty, back = sentinel();
  std::vector<uint8_t> bytes = encoded(empty);
  EXPECT_EQ(bytes.size(), 24u + 8 + 8 + 8 + 16 + 16 + 4);
  Status s = decodeCheckpoint(bytes.data(), bytes.size(), "mem", back);
  ASSERT_TRUE(s) << s.message();
  expectSame(back, empty);
}

//===----------------------------------------------------------------------===//
// Damaged and foreign files
//===----------------------------------------------------------------------===//

TEST_F(CheckpointFile, RoundTrip) {
  Checkpoint full = fullCheckpoint(), back = sentinel();
  ASSERT_TRUE(writeCheckpoint(dir, full));
  Status s = readCheckpoint(dir, back);
  ASSERT_TRUE(s) << s.message();
  expectSame(back, full);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
}

TEST_F(CheckpointFile, TruncatedAtEveryByteIsRefused) {
  std::vector<uint8_t> whole = encoded(fullCheckpoint());
  for (size_t n = 0; n < whole.size(); ++n) {
    SCOPED_TRACE("truncated to " + std::to_string(n) + " bytes");
    writeBytes(whole, n);
    std::string msg = readError();
    EXPECT_NE(msg.find(path + ": truncated: " + std::to_string(n) + " of "),
              std::string::npos)
        << msg;
    if (n >= 24)
      EXPECT_NE(msg.find("truncated: " + std::to_string(n) + " of " +
                         std::to_string(whole.size()) + " bytes"),
                std::string::npos)
          << msg;
    else
      EXPECT_NE(msg.find("of at least 28 bytes (the header is incomplete)"),
                std::string::npos)
          << msg;
  }
}

TEST_F(CheckpointFile, EveryFlippedByteIsRefused) {
  std::vector<uint8_t> whole = encoded(fullCheckpoint());
  for (uint8_t mask : {uint8_t(0x01), uint8_t(0x80), uint8_t(0xFF)}) {
    for (size_t i = 0; i < whole.size(); ++i) {
      SCOPED_TRACE("byte " + std::to_string(i) + " ^ " + std::to_string(mask));
      std::vector<uint8_t> bad = whole;
      bad[i] ^= mask;
      writeBytes(bad, bad.size());
      std::string msg = readError();
      const char *expected = i < 8    ? "not an ampc checkpoint"
                             : i < 24 ? "corrupt header (checksum mismatch)"
                                      : "checksum mismatch (stored 0x";
      EXPECT_NE(msg.find(expected), std::string::npos) << msg;
      EXPECT_EQ(msg.rfind(path + ": ", 0), 0u) << msg;
    }
  }
}

TEST(CheckpointDamage, NewerVersionIsRefusedNamingBoth) {
  std::vector<uint8_t> b = encoded(smallCheckpoint());
  put32(b, 8, 2);
  fixChecksums(b);
  EXPECT_EQ(decodeError(b), "ckpt: format version 2 is newer than this ampc "
                            "reads (version 1): written by a newer ampc");
  // A newer format may lay out its payload differently: only the header and
  // the final CRC are fixed, so the version is checked before the rest.
  FileBuilder newerFile;
  std::vector<uint8_t> newer = newerFile.header(7).u64(1).finish();
  newer.resize(24); // even truncated: the version is named
  put32(newer, 20, crc32Ref(newer.data(), 20));
  EXPECT_NE(decodeError(newer).find("format version 7 is newer"),
            std::string::npos);
  put32(b, 8, 0);
  fixChecksums(b);
  EXPECT_EQ(decodeError(b),
            "ckpt: unknown format version 0 (this ampc reads version 1)");
}

TEST(CheckpointDamage, ForeignFilesAreNotCheckpoints) {
  std::string npy = "\x93NUMPY\x01\x00{'descr': '<f4', ...";
  EXPECT_EQ(decodeError(std::vector<uint8_t>(npy.begin(), npy.end())),
            "ckpt: not an ampc checkpoint (it does not start with "
            "\"AMPCCKPT\")");
  std::string text = "step,loss\n0,2.3\n";
  EXPECT_NE(decodeError(std::vector<uint8_t>(text.begin(), text.end()))
                .find("not an ampc checkpoint"),
            std::string::npos);
  // One wrong byte is enough, even in a short file.
  EXPECT_NE(decodeError({'A', 'M', 'P', 'X'}).find("not an ampc checkpoint"),
            std::string::npos);
  EXPECT_EQ(decodeError({}), "ckpt: truncated: 0 of at least 28 bytes (the "
                             "header is incomplete)");
}

TEST(CheckpointDamage, AppendedBytesAreRefused) {
  std::vector<uint8_t> b = encoded(smallCheckpoint());
  size_t size = b.size();
  b.push_back(0);
  EXPECT_EQ(decodeError(b), "ckpt: " + std::to_string(size + 1) +
                                " bytes, but the header says " +
                                std::to_string(size) +
                                ": something was appended to it");
}

TEST(CheckpointDamage, HeaderLengthBelowMinimumIsRefused) {
  std::vector<uint8_t> b = encoded(Checkpoint());
  put64(b, 12, 27);
  put32(b, 20, crc32Ref(b.data(), 20));
  EXPECT_NE(decodeError(b).find("corrupt header: a length of 27 bytes"),
            std::string::npos);
}

// Counts and lengths set to absurd values, with both checksums made right
// again, as a file that is corrupt by design rather than by accident.
TEST(CheckpointDamage, CorruptCountsAreRefusedWithoutAllocating) {
  FileBuilder f = smallFile();
  std::vector<uint8_t> good = f.finish();
  const uint64_t kHuge = uint64_t(1) << 62;
  struct Case {
    const char *field;
    uint64_t value;
    const char *expected;
  } cases[] = {
      {"config count", kHuge, "the config entry count at offset 32 is "},
      {"key length", kHuge, "the length of config key 0 at offset 40 is "},
      {"tensor count", kHuge, "the tensor count at offset 61 is "},
      {"tensor count", 2, "unknown dtype code 0 at offset 112"},
      // Large enough to allocate for, were the count believed.
      {"tensor count", 1 << 20, "the tensor count at offset 61 is 1048576"},
      {"rank", 1 << 20, "the rank of tensor 0 ('s') at offset 79 is 1048576"},
      {"name length", 1 << 20, "at offset 69 is 1048576"},
      {"step columns", 1 << 20, "the step history column count at offset 103"},
      {"step rows", 1 << 20, "the step history row count at offset 123"},
      {"name length", kHuge, "the length of the name of tensor 0"},
      {"rank", kHuge, "the rank of tensor 0 ('s')"},
      {"rank", 1, "shape [8] of i64 needs 64 bytes, the file says 7"},
      {"byte count", kHuge, "needs 8 bytes, the file says 4611686018427387904"},
      {"step columns", kHuge, "the step history column count"},
      {"step rows", kHuge, "the step history row count"},
      {"step rows", 2, "the payload ends inside the eval history row count"},
      {"eval columns", kHuge, "the eval history column count"},
      {"eval rows", kHuge,
       "the eval history has 4611686018427387904 rows but "
       "no columns"},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(std::string(c.field) + " = " + std::to_string(c.value));
    std::vector<uint8_t> bad = good;
    put64(bad, f.at.at(c.field), c.value);
    fixChecksums(bad);
    Checkpoint out;
    Status s;
    size_t largest, total;
    {
      AllocationWatch watch;
      s = decodeCheckpoint(bad.data(), bad.size(), "ckpt", out);
      largest = watch.largest();
      total = watch.total();
    }
    ASSERT_FALSE(s);
    EXPECT_EQ(s.message().rfind("ckpt: corrupt payload: ", 0), 0u)
        << s.message();
    EXPECT_NE(s.message().find(c.expected), std::string::npos) << s.message();
    // The file has 159 bytes: a count it cannot hold gets no allocation.
    EXPECT_LT(largest, 1024u);
    EXPECT_LT(total, 16384u);
  }
}

TEST(CheckpointDamage, ChecksummedButInvalidContentIsRefused) {
  FileBuilder f = smallFile();
  std::vector<uint8_t> good = f.finish();
  auto patched = [&](const char *field, auto patch) {
    std::vector<uint8_t> b = good;
    patch(b, f.at.at(field));
    fixChecksums(b);
    return decodeError(b);
  };
  EXPECT_EQ(patched("dtype", [](auto &b, size_t at) { b[at] = 9; }),
            "ckpt: corrupt payload: tensor 0 ('s'): unknown dtype code 9 at "
            "offset 78");
  EXPECT_EQ(patched("step", [](auto &b, size_t at) { put64(b, at, -1); }),
            "ckpt: corrupt payload: negative step -1");
  // i1 holds 0 or 1: dtype i1, shape [8] over the 8 data bytes.
  std::string msg = patched("dtype", [&](auto &b, size_t at) {
    b[at] = 7;
    b[f.at.at("rank")] = 1;
    std::vector<uint8_t> dim(8);
    put64(dim, 0, 8);
    b.insert(b.begin() + f.at.at("byte count"), dim.begin(), dim.end());
    put64(b, 12, b.size());
  });
  EXPECT_EQ(msg, "ckpt: corrupt payload: tensor 0 ('s'): i1 element 0 holds "
                 "byte 7, not 0 or 1");
  // Two tensors named alike.
  FileBuilder twice;
  twice.header().u64(0).u64(0).u64(2);
  for (int i = 0; i < 2; ++i)
    twice.str("w").u8(1).u64(0).u64(4).u32(0);
  twice.u64(0).u64(0).u64(0).u64(0);
  EXPECT_EQ(decodeError(twice.finish()),
            "ckpt: corrupt payload: tensor 1 ('w'): the name appears twice");
  FileBuilder keys;
  keys.header().u64(0).u64(2).str("a").str("1").str("a").str("2").u64(0);
  keys.u64(0).u64(0).u64(0).u64(0);
  EXPECT_EQ(decodeError(keys.finish()),
            "ckpt: corrupt payload: config key 'a' appears twice");
  FileBuilder columns;
  columns.header().u64(0).u64(0).u64(0).u64(2).str("x").str("x").u64(0);
  columns.u64(0).u64(0);
  EXPECT_EQ(decodeError(columns.finish()),
            "ckpt: corrupt payload: step history column 'x' appears twice");
  FileBuilder trailing = smallFile();
  trailing.u8(0);
  EXPECT_EQ(decodeError(trailing.finish()),
            "ckpt: corrupt payload: 1 unexpected bytes after the eval "
            "history at offset 155");
}

//===----------------------------------------------------------------------===//
// Writing
//===----------------------------------------------------------------------===//

TEST_F(CheckpointFile, InvalidCheckpointsAreNotWritten) {
  struct Case {
    const char *what;
    void (*mutate)(Checkpoint &);
    const char *expected;
  } cases[] = {
      {"duplicate name",
       [](Checkpoint &c) { c.params[1].name = c.params[0].name; },
       "tensor 1 ('fc1.weight'): the name appears twice"},
      {"no name", [](Checkpoint &c) { c.params[2].name.clear(); },
       "tensor 2 ('') has no name"},
      {"unknown dtype", [](Checkpoint &c) { c.params[0].dtype = DType(42); },
       "tensor 0 ('fc1.weight'): unknown dtype 42"},
      {"bytes", [](Checkpoint &c) { c.params[0].bytes.pop_back(); },
       "tensor 0 ('fc1.weight'): shape [2, 3] of f32 needs 24 bytes, it "
       "holds 23"},
      {"shape",
       [](Checkpoint &c) {
         c.params[0].shape = {-2, -3};
       },
       "tensor 0 ('fc1.weight'): shape [-2, -3] has a negative or too large "
       "dimension"},
      {"i1", [](Checkpoint &c) { c.params[9].bytes[3] = 2; },
       "tensor 9 ('mask'): i1 element 3 holds byte 2, not 0 or 1"},
      {"row width", [](Checkpoint &c) { c.stepRows[2].push_back(1); },
       "step history row 2 has 5 values for 4 columns"},
      {"eval row width", [](Checkpoint &c) { c.evalRows[0].clear(); },
       "eval history row 0 has 0 values for 2 columns"},
      {"column twice", [](Checkpoint &c) { c.evalColumns[1] = "step"; },
       "eval history column 'step' appears twice"},
      {"step", [](Checkpoint &c) { c.step = -1; }, "negative step -1"},
      {"config key", [](Checkpoint &c) { c.config[""] = "x"; },
       "a config key is empty"},
  };
  std::string sub = dir + "/new";
  for (const Case &c : cases) {
    SCOPED_TRACE(c.what);
    Checkpoint bad = fullCheckpoint();
    c.mutate(bad);
    Status s = writeCheckpoint(sub, bad);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.message(), sub + "/checkpoint.ampc: not written: " +
                               std::string(c.expected));
    EXPECT_FALSE(std::filesystem::exists(sub));
  }
}

TEST_F(CheckpointFile, CreatesTheDirectory) {
  std::string nested = dir + "/a/b/c/";
  ASSERT_TRUE(writeCheckpoint(nested, smallCheckpoint()));
  EXPECT_TRUE(std::filesystem::is_regular_file(dir + "/a/b/c/checkpoint.ampc"));
  Checkpoint back;
  ASSERT_TRUE(readCheckpoint(dir + "/a/b/c", back));
  expectSame(back, smallCheckpoint());
}

TEST_F(CheckpointFile, DirectoryThatIsAFileIsAnError) {
  std::string file = dir + "/plain";
  std::ofstream(file) << "x";
  Status s = writeCheckpoint(file, smallCheckpoint());
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message().rfind(file + ": cannot create the checkpoint "
                                     "directory: ",
                              0),
            0u)
      << s.message();
}

TEST_F(CheckpointFile, MissingCheckpointNamesThePath) {
  std::string msg = readError();
  EXPECT_EQ(msg.rfind(path + ": cannot open", 0), 0u) << msg;
}

// The temporary cannot be created: the old checkpoint stays, whole.
TEST_F(CheckpointFile, FailedWriteKeepsThePreviousCheckpoint) {
  Checkpoint first = smallCheckpoint(), second = fullCheckpoint();
  ASSERT_TRUE(writeCheckpoint(dir, first));
  std::vector<uint8_t> before = fileBytes();
  std::filesystem::create_directory(path + ".tmp");
  Status s = writeCheckpoint(dir, second);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(path + ".tmp: cannot open for writing"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(fileBytes(), before);
  Checkpoint back;
  ASSERT_TRUE(readCheckpoint(dir, back));
  expectSame(back, first);
  // Once the obstacle is gone, the next write replaces it.
  std::filesystem::remove(path + ".tmp");
  ASSERT_TRUE(writeCheckpoint(dir, second));
  ASSERT_TRUE(readCheckpoint(dir, back));
  expectSame(back, second);
}

// Sets the file-size limit for the test and restores it, with SIGXFSZ
// ignored so that a write past it fails with EFBIG instead of killing us.
struct FileSizeLimit {
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved);
    oldHandler = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lim = saved;
    lim.rlim_cur = bytes;
    ok = setrlimit(RLIMIT_FSIZE, &lim) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved);
    std::signal(SIGXFSZ, oldHandler);
  }
  rlimit saved;
  void (*oldHandler)(int);
  bool ok;
};

// The disk fills up halfway through the new checkpoint: the old one stays,
// and no half-written file is left behind, at the final path or the
// temporary one.
TEST_F(CheckpointFile, WriteFailingMidFileKeepsThePreviousCheckpoint) {
  Checkpoint first = smallCheckpoint(), second = fullCheckpoint();
  second.params.push_back(patterned(DType::F32, {64, 1024}, "big", 12));
  ASSERT_TRUE(writeCheckpoint(dir, first));
  std::vector<uint8_t> before = fileBytes();
  Status s;
  {
    FileSizeLimit limit(100000);
    ASSERT_TRUE(limit.ok);
    s = writeCheckpoint(dir, second);
  }
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find(path + ".tmp: write failed: "), std::string::npos)
      << s.message();
  EXPECT_EQ(fileBytes(), before);
  EXPECT_FALSE(std::filesystem::exists(path + ".tmp"));
  Checkpoint back;
  ASSERT_TRUE(readCheckpoint(dir, back));
  expectSame(back, first);
}

//===----------------------------------------------------------------------===//
// checkConfig
//===----------------------------------------------------------------------===//

TEST(CheckpointConfig, SameConfigResumes) {
  Checkpoint c = fullCheckpoint();
  EXPECT_TRUE(checkConfig(c, c.config, "run"));
  EXPECT_TRUE(checkConfig(Checkpoint(), {}, "run"));
}

TEST(CheckpointConfig, DifferentValueNamesBoth) {
  Checkpoint c = fullCheckpoint();
  auto now = c.config;
  now["amp"] = "O1";
  Status s = checkConfig(c, now, "run");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "run/checkpoint.ampc: cannot resume: the checkpoint "
                         "was written with amp=O2, this run has amp=O1");
}

TEST(CheckpointConfig, MissingKeysOnEitherSide) {
  Checkpoint c = fullCheckpoint();
  auto now = c.config;
  now.erase("seed");
  Status s = checkConfig(c, now, "run/");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "run/checkpoint.ampc: cannot resume: the checkpoint "
                         "was written with seed=7, this run has no seed");
  now = c.config;
  now["dtype"] = "bf16";
  s = checkConfig(c, now, "run");
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "run/checkpoint.ampc: cannot resume: the checkpoint "
                         "was written without dtype, this run has dtype=bf16");
}

TEST(CheckpointConfig, FirstDifferenceInKeyOrderIsNamed) {
  Checkpoint c = fullCheckpoint();
  auto now = c.config;
  now["seed"] = "8";
  now["amp"] = "O3";
  now["zzz"] = "1";
  Status s = checkConfig(c, now, "run");
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("with amp=O2, this run has amp=O3"),
            std::string::npos)
      << s.message();
}

} // namespace
