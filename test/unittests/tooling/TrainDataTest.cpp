//===- TrainDataTest.cpp - batches from .npy directories and from a seed --===//
//
// Directory sources: epochs that drop the remainder (also at huge step
// numbers), shuffling pinned against an independent Python transcription,
// evaluation batches with a padded last one, dtype conversions, and every
// error naming the file and the input. Synthetic sources: determinism, labels
// pinned against an independent splitmix64 (Python, below), and the moments
// of the normals.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/TrainData.h"

#include "TestFiles.h"
#include "runtime/Half.h"
#include "runtime/io/Npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>

using namespace ampc;
using ampc::tools::BatchSource;
using ampc::tools::InputSpec;
using rt::DType;
using rt::HostTensor;
using rt::test::contains;
using rt::test::valuesOf;

namespace {

class TrainData : public rt::test::ScratchDirTest {
protected:
  TrainData() : ScratchDirTest("traindata") {}

  template <typename T>
  void writeFile(const std::string &leaf, DType dtype, rt::Shape shape,
                 const std::vector<T> &values) {
    HostTensor t = rt::makeHostTensor(dtype, std::move(shape));
    ASSERT_EQ(t.bytes.size(), values.size() * sizeof(T));
    std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
    ASSERT_TRUE(rt::writeNpy(dir + "/" + leaf, t).isOk());
  }

  // x.npy and y.npy with n samples: sample k is 10k, 10k+1, 10k+2 in x (f32)
  // and k in y (i64), as expectSamples reads them.
  void writeSamples(int n) {
    std::vector<float> x;
    std::vector<int64_t> y;
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < 3; ++j)
        x.push_back(10.0f * k + j);
      y.push_back(k);
    }
    writeFile("x.npy", DType::F32, {n, 3}, x);
    writeFile("y.npy", DType::I64, {n}, y);
  }
};

std::vector<float> iota(int n, float scale = 1) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = i * scale;
  return v;
}

// Sample k of writeSamples' files holds 10k, 10k+1, 10k+2 in x and k in y.
void expectSamples(const std::vector<HostTensor> &batch,
                   const std::vector<int64_t> &samples, const char *what) {
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), samples) << what;
  std::vector<float> xs = valuesOf<float>(batch[0]);
  ASSERT_EQ(xs.size(), samples.size() * 3);
  for (size_t r = 0; r < samples.size(); ++r)
    for (int j = 0; j < 3; ++j)
      EXPECT_EQ(xs[r * 3 + j], 10.0f * samples[r] + j) << what;
}

TEST_F(TrainData, EpochsRunInFileOrderAndDropTheRemainder) {
  writeSamples(5);
  writeFile("unused.npy", DType::F32, {2}, iota(2)); // not an error
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(
      dir, {{"x", DType::F32, {2, 3}}, {"y", DType::I64, {2}, 10}}, src);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(src->samples(), 5);
  EXPECT_EQ(src->stepsPerEpoch(), 2);
  EXPECT_EQ(src->labelInput(), 1);

  // 5 samples in batches of 2: each epoch is {0, 1}, {2, 3}; sample 4 is
  // dropped.
  std::vector<std::vector<int64_t>> expect = {{0, 1}, {2, 3}, {0, 1},
                                              {2, 3}, {0, 1}, {2, 3}};
  std::vector<HostTensor> batch;
  for (int64_t step = 0; step < 6; ++step) {
    ASSERT_TRUE(src->batch(step, batch).isOk());
    ASSERT_EQ(batch.size(), 2u);
    EXPECT_EQ(batch[0].name, "x");
    EXPECT_EQ(batch[0].dtype, DType::F32);
    EXPECT_EQ(batch[0].shape, (rt::Shape{2, 3}));
    EXPECT_EQ(batch[1].name, "y");
    EXPECT_EQ(batch[1].shape, (rt::Shape{2}));
    expectSamples(batch, expect[step], "train step");
  }
  // Huge steps: 10^18 is batch 0 of its epoch, 2^62 + 1 batch 1.
  ASSERT_TRUE(src->batch(1000000000000000000, batch).isOk());
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{0, 1}));
  ASSERT_TRUE(src->batch((int64_t(1) << 62) + 1, batch).isOk());
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{2, 3}));
  EXPECT_TRUE(contains(src->batch(-1, batch), "negative"));

  // Evaluation sees every sample once; the last batch is padded with
  // sample 0 and says that one row is real.
  ASSERT_EQ(src->evalBatches(), 3);
  int64_t valid = -1;
  std::vector<std::vector<int64_t>> evalExpect = {{0, 1}, {2, 3}, {4, 0}};
  for (int64_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(src->evalBatch(i, batch, valid).isOk());
    EXPECT_EQ(valid, i < 2 ? 2 : 1);
    EXPECT_EQ(batch[0].shape, (rt::Shape{2, 3}));
    expectSamples(batch, evalExpect[i], "eval batch");
  }
  s = src->evalBatch(3, batch, valid);
  EXPECT_TRUE(contains(s, "batch 3 is outside [0, 3)")) << s.message();
  EXPECT_TRUE(contains(src->evalBatch(-1, batch, valid), "outside"));
}

// What data-parallel ranks compare (RankAgreement.h): the samples as the
// steps get them, in file order (the shuffle is the seed's, compared as a
// flag).
TEST_F(TrainData, ChecksumIsOfTheSamples) {
  writeSamples(4);
  std::vector<InputSpec> specs = {{"x", DType::F32, {2, 3}},
                                  {"y", DType::I32, {2}}};
  std::unique_ptr<BatchSource> a, b, c, synthetic;
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, a).isOk());
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, b).isOk());
  b->shuffleEachEpoch(3); // the order is the seed's, compared as a flag
  EXPECT_NE(a->checksum(), 0u);
  EXPECT_EQ(a->checksum(), b->checksum());
  // One label of one sample differs.
  writeFile("y.npy", DType::I64, {4}, std::vector<int64_t>{0, 1, 2, 9});
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, c).isOk());
  EXPECT_NE(a->checksum(), c->checksum());
  ASSERT_TRUE(BatchSource::synthetic(1, specs, synthetic).isOk());
  EXPECT_EQ(synthetic->checksum(), 0u) << "drawn from --seed, a flag";
}

TEST_F(TrainData, EvalBatchesOfAnExactMultipleAreFull) {
  writeFile<int32_t>("y.npy", DType::I32, {6}, {10, 11, 12, 13, 14, 15});
  std::unique_ptr<BatchSource> src;
  ASSERT_TRUE(
      BatchSource::openDirectory(dir, {{"y", DType::I32, {3}}}, src).isOk());
  EXPECT_EQ(src->stepsPerEpoch(), 2);
  EXPECT_EQ(src->labelInput(), -1); // no classes
  ASSERT_EQ(src->evalBatches(), 2);
  std::vector<HostTensor> batch;
  int64_t valid = 0;
  ASSERT_TRUE(src->evalBatch(1, batch, valid).isOk());
  EXPECT_EQ(valid, 3);
  EXPECT_EQ(valuesOf<int32_t>(batch[0]), (std::vector<int32_t>{13, 14, 15}));
  // With B dividing S, step s takes samples (s*B + k) mod S, as before
  // epochs existed.
  for (int64_t step = 0; step < 5; ++step) {
    ASSERT_TRUE(src->batch(step, batch).isOk());
    std::vector<int32_t> want;
    for (int64_t k = 0; k < 3; ++k)
      want.push_back(int32_t(10 + (step * 3 + k) % 6));
    EXPECT_EQ(valuesOf<int32_t>(batch[0]), want) << "step " << step;
  }
}

TEST_F(TrainData, BatchLargerThanTheFileIsAnError) {
  writeFile<int32_t>("y.npy", DType::I32, {3}, {7, 8, 9});
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(dir, {{"y", DType::I32, {7}}}, src);
  EXPECT_TRUE(contains(s, "data directory " + dir +
                              " holds 3 samples, fewer than one batch of 7 "
                              "(the batch size of 'y' (i32 [7]))"))
      << s.message();
  EXPECT_FALSE(src);
  // Exactly one batch is fine: every step is that batch.
  ASSERT_TRUE(
      BatchSource::openDirectory(dir, {{"y", DType::I32, {3}}}, src).isOk());
  EXPECT_EQ(src->stepsPerEpoch(), 1);
}

TEST_F(TrainData, InputsFromFilesShareOneBatchSize) {
  writeFile("x.npy", DType::F32, {4, 3}, iota(12));
  writeFile<int64_t>("y.npy", DType::I64, {4}, {0, 1, 2, 3});
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(
      dir, {{"x", DType::F32, {2, 3}}, {"y", DType::I64, {4}}}, src);
  EXPECT_TRUE(contains(s, "input 'y' has batch size 4 but input 'x' has 2; "
                          "inputs read from files share one batch size"))
      << s.message();
}

// The orders below were computed by this transcription of epochOrder:
//   M, G = 2**64 - 1, 0x9E3779B97F4A7C15
//   def out(z):
//     z = (z ^ z >> 30) * 0xBF58476D1CE4E5B9 & M
//     z = (z ^ z >> 27) * 0x94D049BB133111EB & M
//     return z ^ z >> 31
//   def order(seed, epoch, n):
//     state = out((out(seed + G & M) ^ epoch) + G & M)  # mix(mix(seed) ^ e)
//     def below(b):  # Lemire with rejection
//       nonlocal state
//       state = state + G & M; m = out(state) * b
//       if m & M < b:
//         while m & M < (-b) % b:
//           state = state + G & M; m = out(state) * b
//       return m >> 64
//     p = list(range(n))
//     for i in range(n - 1, 0, -1):
//       j = below(i + 1); p[i], p[j] = p[j], p[i]
//     return p
//   print(order(0, 0, 10), order(0, 1, 10), order(0, 0, 60000)[:8])
TEST(TrainDataShuffle, EpochOrderMatchesPython) {
  EXPECT_EQ(tools::epochOrder(0, 0, 10),
            (std::vector<int64_t>{4, 7, 0, 5, 9, 3, 6, 2, 8, 1}));
  EXPECT_EQ(tools::epochOrder(0, 1, 10),
            (std::vector<int64_t>{0, 8, 6, 1, 7, 9, 3, 4, 5, 2}));
  std::vector<int64_t> big = tools::epochOrder(0, 0, 60000);
  EXPECT_EQ(std::vector<int64_t>(big.begin(), big.begin() + 8),
            (std::vector<int64_t>{39381, 51357, 32171, 19385, 13790, 31104,
                                  29272, 15377}));
  EXPECT_EQ(tools::epochOrder(5, 3, 1), (std::vector<int64_t>{0}));
  EXPECT_TRUE(tools::epochOrder(5, 3, 0).empty());
}

TEST(TrainDataShuffle, EachEpochIsAPermutationOfItsOwn) {
  const int64_t n = 1000;
  std::set<std::vector<int64_t>> seen;
  for (uint64_t seed : {0ull, 1ull, 0xFFFFFFFFFFFFFFFFull})
    for (int64_t epoch : {0, 1, 2, 1000000}) {
      std::vector<int64_t> order = tools::epochOrder(seed, epoch, n);
      std::vector<int64_t> sorted = order;
      std::sort(sorted.begin(), sorted.end());
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(sorted[i], i) << "seed " << seed << " epoch " << epoch;
      EXPECT_EQ(order, tools::epochOrder(seed, epoch, n));
      EXPECT_TRUE(seen.insert(order).second)
          << "seed " << seed << " epoch " << epoch << " repeats an order";
    }
  // Every position is reached: over 200 epochs, sample 0 lands in each
  // tenth of the order (an unshuffled or stuck order would not).
  std::vector<int> where(10);
  for (int64_t epoch = 0; epoch < 200; ++epoch) {
    std::vector<int64_t> order = tools::epochOrder(9, epoch, n);
    ++where[(std::find(order.begin(), order.end(), 0) - order.begin()) / 100];
  }
  for (int count : where)
    EXPECT_GT(count, 5);
}

TEST_F(TrainData, ShuffledBatchesFollowTheEpochOrder) {
  writeSamples(10);
  std::vector<InputSpec> specs = {{"x", DType::F32, {3, 3}},
                                  {"y", DType::I64, {3}}};
  std::unique_ptr<BatchSource> src, resumed, other;
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, src).isOk());
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, resumed).isOk());
  ASSERT_TRUE(BatchSource::openDirectory(dir, specs, other).isOk());
  src->shuffleEachEpoch(0);
  resumed->shuffleEachEpoch(0);
  other->shuffleEachEpoch(1);
  ASSERT_EQ(src->stepsPerEpoch(), 3); // 10 samples, batches of 3

  // epochOrder(0, 0, 10) = 4 7 0 5 9 3 6 2 8 | 1 (dropped);
  // epochOrder(0, 1, 10) = 0 8 6 1 7 9 3 4 5 | 2.
  std::vector<std::vector<int64_t>> expect = {{4, 7, 0}, {5, 9, 3}, {6, 2, 8},
                                              {0, 8, 6}, {1, 7, 9}, {3, 4, 5}};
  std::vector<HostTensor> batch, again;
  for (int64_t step = 0; step < 6; ++step) {
    ASSERT_TRUE(src->batch(step, batch).isOk());
    expectSamples(batch, expect[step], "shuffled step");
  }
  // A run resumed at step 4 sees what the uninterrupted one saw, and going
  // back an epoch recomputes that epoch's order.
  ASSERT_TRUE(resumed->batch(4, again).isOk());
  ASSERT_TRUE(src->batch(4, batch).isOk());
  EXPECT_EQ(again[0].bytes, batch[0].bytes);
  EXPECT_EQ(again[1].bytes, batch[1].bytes);
  ASSERT_TRUE(resumed->batch(1, again).isOk());
  expectSamples(again, expect[1], "back to epoch 0");
  // Another seed, another order.
  ASSERT_TRUE(other->batch(0, batch).isOk());
  EXPECT_NE(valuesOf<int64_t>(batch[1]), expect[0]);

  // Evaluation is never shuffled.
  int64_t valid = 0;
  ASSERT_EQ(src->evalBatches(), 4);
  ASSERT_TRUE(src->evalBatch(0, batch, valid).isOk());
  expectSamples(batch, {0, 1, 2}, "eval batch 0");
  ASSERT_TRUE(src->evalBatch(3, batch, valid).isOk());
  EXPECT_EQ(valid, 1);
  expectSamples(batch, {9, 0, 0}, "eval batch 3");
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
                                             {"b", DType::F64, {2, 2}},
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
  EXPECT_EQ(valuesOf<double>(batch[1]), (std::vector<double>{1.5, 2, 3, 4}));
  EXPECT_EQ(valuesOf<int64_t>(batch[2]), (std::vector<int64_t>{3, 4}));
  EXPECT_EQ(valuesOf<int32_t>(batch[3]), (std::vector<int32_t>{-5, 6}));
}

TEST_F(TrainData, I64ThatDoesNotFitI32IsAnError) {
  writeFile<int64_t>("m.npy", DType::I64, {2}, {1, int64_t(1) << 40});
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openDirectory(dir, {{"m", DType::I32, {1}}}, src);
  EXPECT_TRUE(contains(s, dir + "/m.npy")) << s.message();
  EXPECT_TRUE(contains(s, "does not fit i32")) << s.message();
}

TEST_F(TrainData, LabelsOutOfRangeAreNamedByTheirSampleInTheFile) {
  // Sequence labels [S, 2] in i32: sample 5, element 1 is 7, past 3
  // classes; -100 is the loss's ignore_index, and so are the others after.
  writeFile<int32_t>("y.npy", DType::I32, {6, 2},
                     {0, 1, 2, -100, 1, 1, 0, 0, 2, 2, 1, 7});
  std::unique_ptr<BatchSource> src;
  ASSERT_TRUE(
      BatchSource::openDirectory(dir, {{"y", DType::I32, {2, 2}}}, src).isOk());
  EXPECT_TRUE(src->checkLabels("y", 8, -100).isOk());
  EXPECT_TRUE(src->checkLabels("other", 3, std::nullopt).isOk());
  rt::Status s = src->checkLabels("y", 3, -100);
  ASSERT_FALSE(s.isOk());
  EXPECT_EQ(s.message(), dir + "/y.npy (input 'y'): sample 5, element 1 has "
                               "label 7, outside the 3 classes [0, 3) of the "
                               "loss and not its ignore_index -100 (1 label "
                               "in 1 of the 6 samples)");
  // Without the ignore_index, -100 counts too, and comes first.
  s = src->checkLabels("y", 3, std::nullopt);
  EXPECT_EQ(s.message(), dir + "/y.npy (input 'y'): sample 1, element 1 has "
                               "label -100, outside the 3 classes [0, 3) of "
                               "the loss (2 labels in 2 of the 6 samples)");
  // A synthetic source draws its labels in range: nothing to check.
  ASSERT_TRUE(
      BatchSource::synthetic(0, {{"y", DType::I32, {2, 2}, 3}}, src).isOk());
  EXPECT_TRUE(src->checkLabels("y", 1, std::nullopt).isOk());
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
  EXPECT_EQ(a->stepsPerEpoch(), 0);
  EXPECT_EQ(a->evalBatches(), 0);
  EXPECT_EQ(a->labelInput(), 1);
  std::vector<HostTensor> none;
  int64_t valid = 0;
  rt::Status noEval = a->evalBatch(0, none, valid);
  EXPECT_TRUE(contains(noEval, "synthetic data has no evaluation batches"))
      << noEval.message();
  std::vector<HostTensor> a3, b3, a0, c3, again;
  ASSERT_TRUE(a->batch(3, a3).isOk());
  ASSERT_TRUE(a->batch(0, a0).isOk());
  ASSERT_TRUE(b->batch(3, b3).isOk()); // another source, the same seed
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

TEST_F(TrainData, SyntheticCyclesBatchesDrawnOnce) {
  std::vector<InputSpec> specs = {{"x", DType::F16, {4, 5}},
                                  {"y", DType::I64, {4}, 10}};
  std::unique_ptr<BatchSource> cycled, fresh;
  ASSERT_TRUE(BatchSource::synthetic(9, specs, cycled, 4).isOk());
  ASSERT_TRUE(BatchSource::synthetic(9, specs, fresh, 0).isOk());
  std::vector<HostTensor> c3, c7, c4, f3, f7;
  ASSERT_TRUE(cycled->batch(3, c3).isOk());
  ASSERT_TRUE(cycled->batch(7, c7).isOk());
  ASSERT_TRUE(cycled->batch(4, c4).isOk());
  ASSERT_TRUE(fresh->batch(3, f3).isOk());
  ASSERT_TRUE(fresh->batch(7, f7).isOk());
  for (size_t i = 0; i < specs.size(); ++i) {
    // Step 7 takes batch 7 mod 4 = 3, which is what a fresh source draws
    // for step 3: batch k depends on the seed and k only.
    EXPECT_EQ(c7[i].bytes, c3[i].bytes) << specs[i].name;
    EXPECT_EQ(c3[i].bytes, f3[i].bytes) << specs[i].name;
    EXPECT_NE(c4[i].bytes, c3[i].bytes) << specs[i].name;
    EXPECT_NE(f7[i].bytes, f3[i].bytes) << specs[i].name;
  }
  // The cycled batches are handed out without a copy: the same memory
  // for steps 3 and 7, another batch's for step 4.
  std::vector<HostTensor> scratch;
  const std::vector<HostTensor> *a = nullptr, *b = nullptr, *c = nullptr;
  ASSERT_TRUE(cycled->batch(3, scratch, a).isOk());
  ASSERT_TRUE(cycled->batch(7, scratch, b).isOk());
  ASSERT_TRUE(cycled->batch(4, scratch, c).isOk());
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_NE(a, &scratch);
  EXPECT_EQ((*a)[0].bytes, c3[0].bytes);
  // A fresh source fills the scratch.
  ASSERT_TRUE(fresh->batch(7, scratch, a).isOk());
  EXPECT_EQ(a, &scratch);
  EXPECT_EQ(scratch[0].bytes, f7[0].bytes);

  rt::Status s = BatchSource::synthetic(9, specs, cycled, -1);
  EXPECT_TRUE(contains(s, "-1 batches to cycle through")) << s.message();
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
