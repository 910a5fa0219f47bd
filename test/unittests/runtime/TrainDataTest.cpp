//===- TrainDataTest.cpp - batches from .npy directories and from a seed --===//
//
// Directory sources: batch order, wrap-around (also within one batch and at
// huge step numbers), dtype conversions, and every error naming the file and
// the input. Synthetic sources: determinism, labels pinned against an
// independent splitmix64 (Python, below), and the moments of the normals.
//
//===----------------------------------------------------------------------===//
#include "tools/amp-run/TrainData.h"

#include "runtime/Half.h"
#include "runtime/io/Npy.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <unistd.h>

using namespace ampc;
using ampc::tools::BatchSource;
using ampc::tools::InputSpec;
using rt::DType;
using rt::HostTensor;

namespace {

// A fresh directory per test, removed afterwards.
class TrainData : public ::testing::Test {
protected:
  void SetUp() override {
    dir = ::testing::TempDir() + "ampc-traindata-" + std::to_string(getpid()) +
          "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  template <typename T>
  void writeFile(const std::string &leaf, DType dtype, rt::Shape shape,
                 const std::vector<T> &values) {
    HostTensor t = rt::makeHostTensor(dtype, std::move(shape));
    ASSERT_EQ(t.bytes.size(), values.size() * sizeof(T));
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    ASSERT_TRUE(rt::writeNpy(dir + "/" + leaf, t).isOk());
  }

  std::string dir;
};

template <typename T> std::vector<T> valuesOf(const HostTensor &t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

std::vector<float> iota(int n, float scale = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i * scale;
  return v;
}

bool contains(const rt::Status &s, const std::string &text) {
  return !s.isOk() && s.message().find(text) != std::string::npos;
}

TEST_F(TrainData, BatchesRunInOrderAndWrapAround) {
  // 5 samples of 3 features: sample k holds 10k, 10k+1, 10k+2.
  std::vector<float> x;
  for (int k = 0; k < 5; ++k)
    for (int j = 0; j < 3; ++j)
      x.push_back(10.0f * k + j);
  writeFile("x.npy", DType::F32, {5, 3}, x);
  writeFile<int64_t>("y.npy", DType::I64, {5}, {0, 1, 2, 3, 4});
  writeFile("unused.npy", DType::F32, {2}, iota(2)); // not an error
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(
      dir, {{"x", DType::F32, {2, 3}}, {"y", DType::I64, {2}, 10}}, src);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(src->samples(), 5);

  // Step s starts at sample (2s) mod 5.
  std::vector<std::vector<int64_t>> expect = {{0, 1}, {2, 3}, {4, 0},
                                              {1, 2}, {3, 4}, {0, 1}};
  std::vector<HostTensor> batch;
  for (int64_t step = 0; step < 6; ++step) {
    ASSERT_TRUE(src->batch(step, batch).isOk());
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].name, "x");
    EXPECT_EQ(batch[0].dtype, DType::F32);
    EXPECT_EQ(batch[0].shape, (rt::Shape{2, 3}));
    EXPECT_EQ(batch[1].name, "y");
    EXPECT_EQ(batch[1].shape, (rt::Shape{2}));
    EXPECT_EQ(valuesOf<int64_t>(batch[1]), expect[step]) << "step " << step;
    std::vector<float> xs = valuesOf<float>(batch[0]);
    for (int r = 0; r < 2; ++r)
      for (int j = 0; j < 3; ++j)
        EXPECT_EQ(xs[r * 3 + j], 10.0f * expect[step][r] + j);
  }
  // (step * B) mod S without overflow: 2 * 10^18 mod 5 = 0, and
  // (2^62 + 1) * 2 mod 5 = 0.
  ASSERT_TRUE(src->batch(1000000000000000000, batch).isOk());
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(src->batch((int64_t(1) << 62) + 1, batch).isOk());
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{0, 1}));
  EXPECT_TRUE(contains(src->batch(-1, batch), "negative"));
}

TEST_F(TrainData, BatchLargerThanTheFileWrapsWithinTheBatch) {
  writeFile<int32_t>("y.npy", DType::I32, {3}, {7, 8, 9});
  std::unique_ptr<BatchSource> src;
  ASSERT_TRUE(
      BatchSource::openDirectory(dir, {{"y", DType::I32, {7}}}, src).isOk());
  std::vector<HostTensor> batch;
  ASSERT_TRUE(src->batch(1, batch).isOk()); // starts at 7 mod 3 = 1
  EXPECT_EQ(valuesOf<int32_t>(batch[0]),
            (std::vector<int32_t>{8, 9, 7, 8, 9, 7, 8}));
}

TEST_F(TrainData, FileNamesKeepSafeCharacters) {
  EXPECT_EQ(tools::npyFileNameFor("input.1"), "input.1.npy");
  EXPECT_EQ(tools::npyFileNameFor("x:0/a b"), "x_0_a_b.npy");
  EXPECT_EQ(tools::npyFileNameFor(".."), "_...npy");
  writeFile("x_0.npy", DType::F32, {1, 2}, iota(2));
  std::unique_ptr<BatchSource> src;
  EXPECT_TRUE(
      BatchSource::openDirectory(dir, {{"x:0", DType::F32, {1, 2}}}, src)
          .isOk());
  rt::Status s = BatchSource::openDirectory(
      dir, {{"x:0", DType::F32, {1, 2}}, {"x/0", DType::F32, {1, 2}}}, src);
  EXPECT_TRUE(contains(s, "another input also reads x_0.npy")) << s.message();
}

TEST_F(TrainData, FloatAndIntegerFilesConvert) {
  writeFile<double>("a.npy", DType::F64, {2, 2}, {0.5, -1.0, 3.0, 1.0 / 3});
  writeFile<float>("b.npy", DType::F32, {2, 2}, {1.5f, 2, 3, 4});
  writeFile<int32_t>("l.npy", DType::I32, {2}, {3, 4});
  writeFile<int64_t>("m.npy", DType::I64, {2}, {-5, 6});
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(dir,
                                            {{"a", DType::F16, {2, 2}},
                                             {"b", DType::F64, {1, 2}},
                                             {"l", DType::I64, {2}},
                                             {"m", DType::I32, {2}}},
                                            src);
  ASSERT_TRUE(s.isOk()) << s.message();
  std::vector<HostTensor> batch;
  ASSERT_TRUE(src->batch(0, batch).isOk());
  std::vector<uint16_t> a = valuesOf<uint16_t>(batch[0]);
  EXPECT_EQ(a[0], rt::floatToHalfBits(0.5f));
  EXPECT_EQ(a[1], rt::floatToHalfBits(-1.0f));
  EXPECT_EQ(a[3], rt::doubleToHalfBits(1.0 / 3)); // rounded once
  EXPECT_EQ(valuesOf<double>(batch[1]), (std::vector<double>{1.5, 2}));
  EXPECT_EQ(valuesOf<int64_t>(batch[2]), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(valuesOf<int32_t>(batch[3]), (std::vector<int32_t>{-5, 6}));
  ASSERT_TRUE(src->batch(1, batch).isOk());
  EXPECT_EQ(valuesOf<double>(batch[1]), (std::vector<double>{3, 4}));
}

TEST_F(TrainData, I64ThatDoesNotFitI32IsAnError) {
  writeFile<int64_t>("m.npy", DType::I64, {2}, {1, int64_t(1) << 40});
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(dir, {{"m", DType::I32, {1}}}, src);
  EXPECT_TRUE(contains(s, dir + "/m.npy")) << s.message();
  EXPECT_TRUE(contains(s, "does not fit i32")) << s.message();
}

TEST_F(TrainData, DirectoryErrorsNameTheFileAndTheInput) {
  writeFile("x.npy", DType::F32, {4, 3}, iota(12));
  writeFile("short.npy", DType::F32, {3, 3}, iota(9));
  writeFile("half.npy", DType::F16, {4, 3}, std::vector<uint16_t>(12));
  writeFile<int64_t>("ints.npy", DType::I64, {4, 3}, std::vector<int64_t>(12));
  writeFile<float>("scalar.npy", DType::F32, {}, {1.0f});
  std::unique_ptr<BatchSource> src;
  auto open = [&](std::vector<InputSpec> specs) {
    return BatchSource::openDirectory(dir, std::move(specs), src);
  };

  rt::Status s = open({{"x", DType::F32, {2, 3}}, {"y", DType::I64, {2}, 3}});
  EXPECT_TRUE(contains(s, "has no file y.npy for input 'y'")) << s.message();

  s = open({{"x", DType::F32, {2, 4}}});
  EXPECT_TRUE(contains(s, dir + "/x.npy (input 'x'): has shape [4, 3], "
                                "expected [S, 4]"))
      << s.message();
  s = open({{"x", DType::F32, {2, 3, 1}}});
  EXPECT_TRUE(contains(s, "expected [S, 3, 1]")) << s.message();
  s = open({{"scalar", DType::F32, {2}}});
  EXPECT_TRUE(contains(s, "scalar.npy (input 'scalar'): has shape []"))
      << s.message();

  s = open({{"x", DType::F32, {2, 3}}, {"short", DType::F32, {2, 3}}});
  EXPECT_TRUE(contains(s, "short.npy (input 'short'): holds 3 samples but " +
                              dir + "/x.npy holds 4"))
      << s.message();

  s = open({{"half", DType::F32, {2, 3}}});
  EXPECT_TRUE(contains(s, "half.npy (input 'half'): holds f16 data but the "
                          "input is f32; accepted: f32 or f64"))
      << s.message();
  s = open({{"ints", DType::BF16, {2, 3}}});
  EXPECT_TRUE(contains(s, "holds i64 data but the input is bf16; accepted: "
                          "f32 or f64 (NumPy has no bf16)"))
      << s.message();
  s = open({{"x", DType::I32, {2, 3}}});
  EXPECT_TRUE(contains(s, "accepted: i32 or i64")) << s.message();

  std::filesystem::path missing = dir + "/nope";
  s = BatchSource::openDirectory(missing, {{"x", DType::F32, {2, 3}}}, src);
  EXPECT_TRUE(contains(s, "nope does not exist")) << s.message();

  // A corrupt file: the reader's error, with the input named.
  {
    FILE *f = std::fopen((dir + "/bad.npy").c_str(), "wb");
    std::fputs("not numpy", f);
    std::fclose(f);
  }
  s = open({{"bad", DType::F32, {2}}});
  EXPECT_TRUE(contains(s, "input 'bad'")) << s.message();
  EXPECT_TRUE(contains(s, "bad.npy")) << s.message();
}

TEST_F(TrainData, SpecErrors) {
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::synthetic(0, {{"x", DType::F32, {}}}, src);
  EXPECT_TRUE(contains(s, "input 'x' is a scalar")) << s.message();
  s = BatchSource::synthetic(0, {{"x", DType::F32, {0, 3}}}, src);
  EXPECT_TRUE(contains(s, "batch size 0")) << s.message();
  s = BatchSource::synthetic(0, {{"x", DType::F32, {2, -1}}}, src);
  EXPECT_TRUE(contains(s, "negative dimension")) << s.message();
  s = BatchSource::synthetic(0, {{"x", DType::F32, {2}, 10}}, src);
  EXPECT_TRUE(contains(s, "has a class count but is f32")) << s.message();
  s = BatchSource::synthetic(
      0, {{"x", DType::F32, {2}}, {"x", DType::F32, {2}}}, src);
  EXPECT_TRUE(contains(s, "input 'x' is listed twice")) << s.message();
  s = BatchSource::synthetic(0, {{"", DType::F32, {2}}}, src);
  EXPECT_TRUE(contains(s, "no name")) << s.message();
}

TEST_F(TrainData, SyntheticIsAFunctionOfSeedAndStep) {
  std::vector<InputSpec> specs = {
      {"x", DType::F32, {4, 5}}, {"y", DType::I64, {8}, 10},
      {"h", DType::F16, {3}},    {"b", DType::BF16, {3}},
      {"i", DType::I32, {3}},    {"m", DType::I1, {3}}};
  std::unique_ptr<BatchSource> a, b, c;
  ASSERT_TRUE(BatchSource::synthetic(42, specs, a).isOk());
  ASSERT_TRUE(BatchSource::synthetic(42, specs, b).isOk());
  ASSERT_TRUE(BatchSource::synthetic(43, specs, c).isOk());
  EXPECT_EQ(a->samples(), 0);
  std::vector<HostTensor> a3, b3, a0, c3, again;
  ASSERT_TRUE(a->batch(3, a3).isOk());
  ASSERT_TRUE(a->batch(0, a0).isOk());
  ASSERT_TRUE(b->batch(3, b3).isOk()); // b never drew step 0
  ASSERT_TRUE(c->batch(3, c3).isOk());
  ASSERT_TRUE(a->batch(3, again).isOk());
  ASSERT_EQ(a3.size(), specs.size());
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(a3[i].name, specs[i].name);
    EXPECT_EQ(a3[i].dtype, specs[i].dtype);
    EXPECT_EQ(a3[i].shape, specs[i].shape);
    EXPECT_EQ(a3[i].bytes, b3[i].bytes) << specs[i].name;
    EXPECT_EQ(a3[i].bytes, again[i].bytes) << specs[i].name;
  }
  for (size_t i : {0, 1, 2, 3}) {
    EXPECT_NE(a3[i].bytes, a0[i].bytes) << specs[i].name;
    EXPECT_NE(a3[i].bytes, c3[i].bytes) << specs[i].name;
  }
  // Integers without classes, and i1, are zero.
  EXPECT_EQ(valuesOf<int32_t>(a3[4]), (std::vector<int32_t>{0, 0, 0}));
  EXPECT_EQ(a3[5].bytes, (std::vector<uint8_t>{0, 0, 0}));

  // Labels pinned against splitmix64 written out in Python:
  //   stream = mix(mix(mix(seed) ^ step) ^ input); label = next() * C >> 64
  // (mix(z) = the splitmix64 output for state z + golden ratio).
  EXPECT_EQ(valuesOf<int64_t>(a0[1]),
            (std::vector<int64_t>{4, 7, 2, 7, 2, 3, 7, 6}));
  EXPECT_EQ(valuesOf<int64_t>(a3[1]),
            (std::vector<int64_t>{5, 3, 4, 4, 6, 8, 8, 4}));
}

TEST_F(TrainData, SyntheticMoments) {
  const int n = 200001; // odd: the last Box-Muller pair is half used
  std::unique_ptr<BatchSource> src;
  ASSERT_TRUE(BatchSource::synthetic(7,
                                     {{"x", DType::F64, {n}},
                                      {"y", DType::I32, {n}, 7},
                                      {"b", DType::BF16, {1000}}},
                                     src)
                  .isOk());
  std::vector<HostTensor> batch;
  ASSERT_TRUE(src->batch(0, batch).isOk());
  std::vector<double> x = valuesOf<double>(batch[0]);
  double mean = 0, var = 0, within1 = 0;
  for (double v : x) {
    ASSERT_TRUE(std::isfinite(v));
    mean += v;
    within1 += std::fabs(v) < 1;
  }
  mean /= n;
  for (double v : x)
    var += (v - mean) * (v - mean);
  var /= n - 1;
  // Standard errors: mean 0.0022, variance 0.0032; P(|z| < 1) = 0.6827.
  EXPECT_NEAR(mean, 0, 0.012);
  EXPECT_NEAR(var, 1, 0.016);
  EXPECT_NEAR(within1 / n, 0.6827, 0.005);

  std::vector<int64_t> counts(7);
  for (int32_t v : valuesOf<int32_t>(batch[1])) {
    ASSERT_GE(v, 0);
    ASSERT_LT(v, 7);
    ++counts[v];
  }
  for (int64_t c : counts) // expected n/7 = 28572, sd 156
    EXPECT_NEAR(double(c), n / 7.0, 1000);

  std::set<uint16_t> distinct;
  for (uint16_t v : valuesOf<uint16_t>(batch[2])) {
    ASSERT_TRUE(std::isfinite(rt::bfloatBitsToFloat(v)));
    distinct.insert(v);
  }
  EXPECT_GT(distinct.size(), 200u);
}

} // namespace
