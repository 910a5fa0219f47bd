//===- NpyTest.cpp - .npy reading and writing -----------------------------===//
//
// Round trips, byte-exact agreement with what NumPy writes (the expected
// headers were produced by numpy 1.24's np.save), header variants NumPy
// accepts, and corrupt files: every truncation and random byte flips must
// give OK or an error, never a crash.
//
//===----------------------------------------------------------------------===//
#include "runtime/io/Npy.h"
#include "runtime/Half.h"

#include "TestFiles.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <random>
#include <string>

using namespace ampc::rt;

namespace {

std::string tempPath(const std::string &leaf) {
  return test::scratchName("npytest") + "-" + leaf;
}

std::vector<uint8_t> toBytes(const std::string &s) {
  return std::vector<uint8_t>(s.begin(), s.end());
}

// A .npy file with the given header text (padded like NumPy) and payload.
std::vector<uint8_t> npyFile(const std::string &dict, const void *data,
                             size_t n, int major = 1) {
  std::string h = dict;
  size_t lenBytes = major == 1 ? 2 : 4;
  size_t total = 8 + lenBytes + h.size() + 1;
  h.append((total + 63) / 64 * 64 - total, ' ');
  h += '\n';
  std::vector<uint8_t> out = {0x93, 'N', 'U', 'M', 'P', 'Y', uint8_t(major), 0};
  for (size_t i = 0; i < lenBytes; ++i)
    out.push_back(uint8_t(h.size() >> (8 * i)));
  out.insert(out.end(), h.begin(), h.end());
  const uint8_t *p = static_cast<const uint8_t *>(data);
  out.insert(out.end(), p, p + n);
  return out;
}

HostTensor tensorOf(DType dtype, Shape shape, uint8_t seed = 1) {
  HostTensor t = makeHostTensor(dtype, std::move(shape));
  for (size_t i = 0; i < t.bytes.size(); ++i)
    t.bytes[i] = uint8_t(seed + i * 37);
  if (dtype == DType::I1)
    for (uint8_t &b : t.bytes)
      b &= 1;
  return t;
}

Status parse(const std::vector<uint8_t> &b, HostTensor &out) {
  return parseNpy(b.data(), b.size(), "mem.npy", out);
}

void expectErrorContains(const Status &s, const std::string &what) {
  ASSERT_FALSE(s.isOk()) << "expected an error containing '" << what << "'";
  EXPECT_NE(s.message().find(what), std::string::npos) << s.message();
}

TEST(Npy, MatchesNumpyBytes) {
  // np.save(f, np.arange(3, dtype='<i8'))
  HostTensor t = makeHostTensor(DType::I64, {3});
  for (int64_t i = 0; i < 3; ++i)
    std::memcpy(&t.bytes[i * 8], &i, 8);
  std::vector<uint8_t> got;
  ASSERT_TRUE(encodeNpy(t, got).isOk());
  std::string header = "{'descr': '<i8', 'fortran_order': False, 'shape': "
                       "(3,), }";
  header.append(117 - header.size(), ' ');
  header += '\n';
  std::vector<uint8_t> want = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, 'v', 0};
  want.insert(want.end(), header.begin(), header.end());
  want.insert(want.end(), t.bytes.begin(), t.bytes.end());
  EXPECT_EQ(got, want);
  EXPECT_EQ(got.size(), 152u); // as np.save wrote it

  // Scalar and bool headers.
  ASSERT_TRUE(encodeNpy(makeHostTensor(DType::F32, {}), got).isOk());
  EXPECT_EQ(got.size(), 132u);
  EXPECT_NE(std::string(got.begin(), got.end()).find("'shape': (), }"),
            std::string::npos);
  ASSERT_TRUE(encodeNpy(makeHostTensor(DType::I1, {2, 3}), got).isOk());
  EXPECT_EQ(got.size(), 134u);
  EXPECT_NE(std::string(got.begin(), got.end())
                .find("{'descr': '|b1', 'fortran_order': False, 'shape': (2, "
                      "3), }"),
            std::string::npos);
}

TEST(Npy, RoundTripsEveryStoredDType) {
  for (DType dt : {DType::F32, DType::F16, DType::F64, DType::I64, DType::I32,
                   DType::I1}) {
    for (Shape shape : {Shape{}, Shape{0}, Shape{5}, Shape{2, 3, 4},
                        Shape{2, 0, 3}, Shape{1, 1, 1, 1, 7}}) {
      HostTensor t = tensorOf(dt, shape);
      std::string path = tempPath("rt.npy");
      ASSERT_TRUE(writeNpy(path, t).isOk());
      HostTensor back;
      Status s = readNpy(path, back);
      ASSERT_TRUE(s.isOk()) << s.message();
      EXPECT_EQ(back.dtype, dt) << name(dt);
      EXPECT_EQ(back.shape, shape);
      EXPECT_EQ(back.bytes, t.bytes);
      std::remove(path.c_str());
    }
  }
}

TEST(Npy, BF16IsWrittenAsF32AndConvertsBackExactly) {
  std::vector<uint16_t> bits = {0x3F80, 0xC040, 0x7F80, 0x0001, 0x7FC1, 0x8000};
  HostTensor t = makeHostTensor(DType::BF16, {2, 3});
  std::memcpy(t.bytes.data(), bits.data(), 12);
  std::vector<uint8_t> enc;
  ASSERT_TRUE(encodeNpy(t, enc).isOk());
  HostTensor back;
  ASSERT_TRUE(parse(enc, back).isOk());
  ASSERT_EQ(back.dtype, DType::F32);
  EXPECT_EQ(back.shape, (Shape{2, 3}));
  for (size_t i = 0; i < bits.size(); ++i) {
    float f;
    std::memcpy(&f, &back.bytes[i * 4], 4);
    EXPECT_EQ(bitsOf(f), bitsOf(bfloatBitsToFloat(bits[i]))) << i;
  }
  ASSERT_TRUE(convertTo(back, DType::BF16).isOk());
  EXPECT_EQ(back.bytes, t.bytes);
}

TEST(Npy, ReadsHeaderVariants) {
  float v[2] = {1.5f, -2.0f};
  for (std::string dict :
       {"{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }",
        "{'shape': (2,), 'fortran_order': False, 'descr': '<f4'}",
        "{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (2L,)}",
        "{ 'descr' : '<f4' , 'fortran_order' : False , 'shape' : ( 2 , ) }"}) {
    for (int major : {1, 2, 3}) {
      HostTensor t;
      Status s = parse(npyFile(dict, v, 8, major), t);
      ASSERT_TRUE(s.isOk()) << dict << " v" << major << ": " << s.message();
      EXPECT_EQ(t.dtype, DType::F32);
      EXPECT_EQ(t.shape, (Shape{2}));
      EXPECT_EQ(std::memcmp(t.bytes.data(), v, 8), 0);
    }
  }
}

TEST(Npy, NormalizesBools) {
  uint8_t v[3] = {0, 1, 7};
  HostTensor t;
  ASSERT_TRUE(parse(npyFile("{'descr': '|b1', 'fortran_order': False, "
                            "'shape': (3,), }",
                            v, 3),
                    t)
                  .isOk());
  EXPECT_EQ(t.bytes, (std::vector<uint8_t>{0, 1, 1}));
}

TEST(Npy, RejectsWhatItCannotRead) {
  float v[6] = {};
  auto hdr = [](const std::string &descr, const std::string &fortran,
                const std::string &shape) {
    return "{'descr': '" + descr + "', 'fortran_order': " + fortran +
           ", 'shape': " + shape + ", }";
  };
  struct Case {
    std::vector<uint8_t> file;
    std::string what;
  } cases[] = {
      {npyFile(hdr("<f4", "True", "(2, 3)"), v, 24), "fortran_order True"},
      {npyFile(hdr(">f4", "False", "(2, 3)"), v, 24), "big-endian dtype '>f4'"},
      {npyFile(hdr("|u1", "False", "(2, 3)"), v, 6),
       "unsupported dtype descr '|u1'"},
      {npyFile(hdr("<c8", "False", "(3,)"), v, 24),
       "unsupported dtype descr '<c8'"},
      {npyFile("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': "
               "(2,), }",
               v, 8),
       "structured dtypes"},
      {npyFile("{'descr': '<f4', 'shape': (2,), }", v, 8),
       "lacks the key 'fortran_order'"},
      {npyFile(hdr("<f4", "False", "(2, 3)") + " 'x': 1}", v, 24),
       "malformed header"},
      {npyFile(hdr("<f4", "False", "(3)"), v, 12), "not a tuple"},
      {npyFile(hdr("<f4", "False", "(-3,)"), v, 12), "non-negative"},
      {npyFile(hdr("<f4", "False", "(2, 3)"), v, 20),
       "data shorter than the shape says"},
      {npyFile(hdr("<f4", "False", "(2, 2)"), v, 24), "8 trailing bytes"},
      {npyFile(hdr("<f4", "False", "(4294967296, 4294967296, 4294967296)"), v,
               24),
       "too large"},
      {npyFile(hdr("<f4", "False", "(99999999999999999999,)"), v, 24),
       "dimension too large"},
      {toBytes("PK\x03\x04 not numpy at all"), "bad magic"},
      {toBytes(""), "too short"},
      {npyFile(hdr("<f4", "False", "(2, 3)"), v, 24, 4), "version 4.0"},
  };
  for (const Case &c : cases) {
    HostTensor t;
    Status s = parse(c.file, t);
    SCOPED_TRACE(c.what);
    expectErrorContains(s, c.what);
    EXPECT_EQ(s.message().rfind("mem.npy: ", 0), 0u) << s.message();
  }
}

TEST(Npy, ErrorsNameTheFile) {
  HostTensor t;
  Status s = readNpy("/nonexistent/dir/x.npy", t);
  expectErrorContains(s, "/nonexistent/dir/x.npy");
  s = writeNpy("/nonexistent/dir/y.npy", makeHostTensor(DType::F32, {2}));
  expectErrorContains(s, "/nonexistent/dir/y.npy");
  // A tensor whose bytes do not match its shape is not written.
  HostTensor bad = makeHostTensor(DType::F32, {2});
  bad.bytes.pop_back();
  std::string path = tempPath("bad.npy");
  expectErrorContains(writeNpy(path, bad), path);
  EXPECT_NE(access(path.c_str(), F_OK), 0);
}

TEST(Npy, WriteReplacesAtomically) {
  std::string path = tempPath("atomic.npy");
  ASSERT_TRUE(writeNpy(path, tensorOf(DType::F32, {100}, 3)).isOk());
  HostTensor second = tensorOf(DType::I32, {4, 5}, 9);
  ASSERT_TRUE(writeNpy(path, second).isOk());
  EXPECT_NE(access((path + ".tmp").c_str(), F_OK), 0) << "temporary left";
  HostTensor back;
  ASSERT_TRUE(readNpy(path, back).isOk());
  EXPECT_EQ(back.bytes, second.bytes);
  std::remove(path.c_str());
}

TEST(Npy, EveryTruncationIsAnError) {
  std::vector<uint8_t> file;
  ASSERT_TRUE(encodeNpy(tensorOf(DType::F16, {3, 5}), file).isOk());
  for (size_t n = 0; n < file.size(); ++n) {
    HostTensor t;
    Status s = parseNpy(file.data(), n, "cut.npy", t);
    EXPECT_FALSE(s.isOk()) << "prefix of " << n << " bytes read as valid";
    EXPECT_FALSE(s.message().empty());
  }
}

TEST(Npy, RandomByteFlipsNeverCrash) {
  std::vector<uint8_t> file;
  ASSERT_TRUE(encodeNpy(tensorOf(DType::I32, {2, 3}), file).isOk());
  std::mt19937 rng(1234);
  int ok = 0, failed = 0;
  for (int iter = 0; iter < 20000; ++iter) {
    std::vector<uint8_t> f = file;
    int flips = 1 + rng() % 3;
    for (int k = 0; k < flips; ++k) {
      // Bias flips toward the header, where the parser works hardest.
      size_t at = rng() % 2 ? rng() % 80 : rng() % f.size();
      f[at] = rng() % 4 ? uint8_t(rng()) : uint8_t(f[at] ^ (1u << rng() % 8));
    }
    HostTensor t;
    Status s = parseNpy(f.data(), f.size(), "flip.npy", t);
    if (s.isOk()) {
      ++ok;
      ASSERT_EQ(t.bytes.size(), size_t(t.numElements()) * sizeOf(t.dtype));
    } else {
      ++failed;
      ASSERT_FALSE(s.message().empty());
    }
  }
  EXPECT_GT(ok, 0);
  EXPECT_GT(failed, 0);
}

} // namespace
