//===- FashionMnistTest.cpp - Fashion-MNIST's IDX files and batches -------===//
//
// The IDX reader on small files written here (gzip and plain), each of its
// errors with its message, the Fashion-MNIST BatchSource (normalisation in
// every float dtype, labels, which inputs it accepts), and the real data set
// where Debian's dataset-fashion-mnist is installed.
//
//===----------------------------------------------------------------------===//
#include "runtime/tooling/FashionMnist.h"
#include "runtime/tooling/TrainData.h"

#include "TestFiles.h"
#include "runtime/Half.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>

using namespace ampc;
using ampc::tools::BatchSource;
using ampc::tools::FashionMnist;
using ampc::tools::InputSpec;
using ampc::tools::Split;
using rt::DType;
using rt::HostTensor;
using rt::test::contains;
using rt::test::slurpBytes;
using rt::test::valuesOf;

namespace {

std::vector<uint8_t> idx(uint32_t magic, const std::vector<uint32_t> &dims,
                         const std::vector<uint8_t> &data) {
  std::vector<uint8_t> bytes;
  auto put = [&](uint32_t v) {
    for (int shift = 24; shift >= 0; shift -= 8)
      bytes.push_back(uint8_t(v >> shift));
  };
  put(magic);
  for (uint32_t d : dims)
    put(d);
  bytes.insert(bytes.end(), data.begin(), data.end());
  return bytes;
}

// Image i's pixel p is (i * 7 + p) mod 256; image i's label is i mod 10.
std::vector<uint8_t> pixels(uint32_t images) {
  std::vector<uint8_t> v(images * 784);
  for (size_t k = 0; k < v.size(); ++k)
    v[k] = uint8_t((k / 784) * 7 + k % 784);
  return v;
}
std::vector<uint8_t> labels(uint32_t n) {
  std::vector<uint8_t> v(n);
  for (uint32_t i = 0; i < n; ++i)
    v[i] = uint8_t(i % 10);
  return v;
}

class FashionMnistFiles : public rt::test::ScratchDirTest {
protected:
  FashionMnistFiles() : ScratchDirTest("fmnist") {}

  void writeGz(const std::string &leaf, const std::vector<uint8_t> &bytes) {
    gzFile f = gzopen((dir + "/" + leaf).c_str(), "wb");
    ASSERT_NE(f, nullptr);
    ASSERT_EQ(gzwrite(f, bytes.data(), unsigned(bytes.size())),
              int(bytes.size()));
    ASSERT_EQ(gzclose(f), Z_OK);
  }
  void writePlain(const std::string &leaf, const std::vector<uint8_t> &bytes) {
    std::ofstream f(dir + "/" + leaf, std::ios::binary);
    f.write(reinterpret_cast<const char *>(bytes.data()), bytes.size());
    ASSERT_TRUE(f.good());
  }
  // A good train split of n images, gzip-compressed.
  void writeTrain(uint32_t n) {
    writeGz("train-images-idx3-ubyte.gz", idx(0x803, {n, 28, 28}, pixels(n)));
    writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {n}, labels(n)));
  }
  rt::Status readTrain() {
    return tools::readFashionMnist(dir, Split::Train, data);
  }
  std::string images() const { return dir + "/train-images-idx3-ubyte.gz"; }
  std::string labelsFile() const { return dir + "/train-labels-idx1-ubyte.gz"; }

  FashionMnist data;
};

TEST_F(FashionMnistFiles, ReadsGzipAndPlainFiles) {
  writeTrain(3);
  // The test split uncompressed.
  writePlain("t10k-images-idx3-ubyte", idx(0x803, {2, 28, 28}, pixels(2)));
  writePlain("t10k-labels-idx1-ubyte", idx(0x801, {2}, {9, 4}));
  rt::Status s = readTrain();
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(data.samples, 3);
  EXPECT_EQ(data.images, pixels(3));
  EXPECT_EQ(data.labels, (std::vector<uint8_t>{0, 1, 2}));
  s = tools::readFashionMnist(dir, Split::Test, data);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(data.samples, 2);
  EXPECT_EQ(data.images, pixels(2));
  EXPECT_EQ(data.labels, (std::vector<uint8_t>{9, 4}));

  // NAME.gz wins over NAME.
  writePlain("train-labels-idx1-ubyte", idx(0x801, {3}, {5, 5, 5}));
  ASSERT_TRUE(readTrain().isOk());
  EXPECT_EQ(data.labels, (std::vector<uint8_t>{0, 1, 2}));
  EXPECT_EQ(std::string(tools::splitName(Split::Test)), "test");
}

TEST_F(FashionMnistFiles, MissingFilesAndDirectory) {
  rt::Status s = tools::readFashionMnist(dir + "/nope", Split::Train, data);
  EXPECT_TRUE(contains(s, "Fashion-MNIST directory " + dir +
                              "/nope does not exist or is not a directory "
                              "(Debian's dataset-fashion-mnist installs the "
                              "files in /usr/share/datasets/fashion-mnist)"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {1, 28, 28}, pixels(1)));
  s = readTrain();
  EXPECT_TRUE(contains(s, labelsFile() + ": no such file (nor " + dir +
                              "/train-labels-idx1-ubyte)"))
      << s.message();
}

TEST_F(FashionMnistFiles, BadMagic) {
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {1}, {0}));
  writeGz("train-images-idx3-ubyte.gz", idx(0x801, {1}, {0}));
  rt::Status s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": magic 0x00000801 (unsigned bytes, 1 "
                                     "dimension), but an images file starts "
                                     "with 0x00000803 (unsigned bytes, 3 "
                                     "dimensions)"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x12345678, {}, {}));
  s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": magic 0x12345678 (not an IDX file)"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz",
          idx(0xD03, {1, 28, 28}, std::vector<uint8_t>(4 * 784)));
  s = readTrain();
  EXPECT_TRUE(contains(s, "magic 0x00000d03 (f32, 3 dimensions)"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {1, 28, 28}, pixels(1)));
  writeGz("train-labels-idx1-ubyte.gz", idx(0x803, {1, 28, 28}, pixels(1)));
  s = readTrain();
  EXPECT_TRUE(contains(s, labelsFile() + ": magic 0x00000803 (unsigned "
                                         "bytes, 3 dimensions), but a labels "
                                         "file starts with 0x00000801"))
      << s.message();
}

TEST_F(FashionMnistFiles, WrongDimensionsAndShortHeaders) {
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {1}, {0}));
  writeGz("train-images-idx3-ubyte.gz",
          idx(0x803, {1, 32, 28}, std::vector<uint8_t>(32 * 28)));
  rt::Status s = readTrain();
  EXPECT_TRUE(
      contains(s, images() + ": images are 32x28; Fashion-MNIST's are 28x28"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {0, 28, 28}, {}));
  s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": holds no images")) << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {1, 28}, {}));
  s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": 12 bytes, too short for the 16-byte "
                                     "IDX header of an images file"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", {0, 0, 8});
  s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": 3 bytes, too short")) << s.message();
}

TEST_F(FashionMnistFiles, TruncatedAndTrailingBytes) {
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {2}, {0, 1}));
  std::vector<uint8_t> short1 = pixels(2);
  short1.pop_back();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {2, 28, 28}, short1));
  rt::Status s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": truncated: the header declares 1568 "
                                     "bytes of data but 1567 follow it"))
      << s.message();
  std::vector<uint8_t> long1 = pixels(2);
  long1.push_back(0);
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {2, 28, 28}, long1));
  s = readTrain();
  EXPECT_TRUE(contains(s, images() + ": trailing bytes after the 1568 bytes "
                                     "of data the header declares"))
      << s.message();
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {2, 28, 28}, pixels(2)));
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {2}, {0, 1, 2}));
  s = readTrain();
  EXPECT_TRUE(contains(s, labelsFile() + ": trailing bytes after the 2 bytes"))
      << s.message();
  // Plain files are held to the same lengths.
  std::filesystem::remove(labelsFile());
  writePlain("train-labels-idx1-ubyte", idx(0x801, {2}, {0}));
  s = readTrain();
  EXPECT_TRUE(contains(s, dir + "/train-labels-idx1-ubyte: truncated"))
      << s.message();
}

TEST_F(FashionMnistFiles, CorruptGzip) {
  writeTrain(2);
  std::vector<uint8_t> gz = slurpBytes(images());
  ASSERT_GT(gz.size(), 30u);
  // Cut the stream short: zlib sees the gzip data end early.
  gz.resize(gz.size() / 2);
  writePlain("train-images-idx3-ubyte.gz", gz);
  rt::Status s = readTrain();
  EXPECT_EQ(s.message(),
            images() + ": corrupt gzip data: unexpected end of file");
}

TEST_F(FashionMnistFiles, CountsMustMatchAndLabelsBeBelowTen) {
  writeGz("train-images-idx3-ubyte.gz", idx(0x803, {3, 28, 28}, pixels(3)));
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {2}, {0, 1}));
  rt::Status s = readTrain();
  EXPECT_TRUE(contains(s, labelsFile() + ": 2 labels but " + images() +
                              " has 3 images"))
      << s.message();
  writeGz("train-labels-idx1-ubyte.gz", idx(0x801, {3}, {0, 10, 1}));
  s = readTrain();
  EXPECT_TRUE(
      contains(s, labelsFile() + ": label 10 of sample 1 is not below 10"))
      << s.message();
}

TEST_F(FashionMnistFiles, BatchesNormaliseThePixels) {
  writeTrain(5);
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openFashionMnist(
      dir, Split::Train,
      {{"x", DType::F32, {2, 1, 28, 28}}, {"y", DType::I64, {2}}}, src);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(src->samples(), 5);
  EXPECT_EQ(src->stepsPerEpoch(), 2);
  EXPECT_EQ(src->evalBatches(), 3);
  EXPECT_EQ(src->labelInput(), 1);
  EXPECT_EQ(src->specs()[1].classes, 10);
  std::vector<HostTensor> batch;
  ASSERT_TRUE(src->batch(1, batch).isOk()); // samples 2 and 3
  EXPECT_EQ(batch[0].shape, (rt::Shape{2, 1, 28, 28}));
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{2, 3}));
  std::vector<float> x = valuesOf<float>(batch[0]);
  std::vector<uint8_t> raw = pixels(5);
  for (size_t k = 0; k < x.size(); ++k)
    ASSERT_EQ(x[k], float((raw[2 * 784 + k] / 255.0 - 0.2860) / 0.3530)) << k;
  EXPECT_EQ(x[0], float((14 / 255.0 - 0.2860) / 0.3530));

  // The last evaluation batch: sample 4, then sample 0 as padding.
  int64_t valid = 0;
  ASSERT_TRUE(src->evalBatch(2, batch, valid).isOk());
  EXPECT_EQ(valid, 1);
  EXPECT_EQ(valuesOf<int64_t>(batch[1]), (std::vector<int64_t>{4, 0}));
  x = valuesOf<float>(batch[0]);
  EXPECT_EQ(x[0], float((28 / 255.0 - 0.2860) / 0.3530));
  EXPECT_EQ(x[784], float((0 / 255.0 - 0.2860) / 0.3530));

  // f16, bf16 and f64 images round the normalised double once; i32 labels.
  for (DType dtype : {DType::F16, DType::BF16, DType::F64}) {
    ASSERT_TRUE(BatchSource::openFashionMnist(
                    dir, Split::Train,
                    {{"y", DType::I32, {5, 1}, 10}, {"x", dtype, {5, 784}}},
                    src)
                    .isOk());
    EXPECT_EQ(src->labelInput(), 0);
    ASSERT_TRUE(src->batch(0, batch).isOk());
    EXPECT_EQ(valuesOf<int32_t>(batch[0]),
              (std::vector<int32_t>{0, 1, 2, 3, 4}));
    double want = (255 / 255.0 - 0.2860) / 0.3530; // image 1, pixel 248
    size_t at = 784 + 248;
    if (dtype == DType::F16)
      EXPECT_EQ(valuesOf<uint16_t>(batch[1])[at], rt::doubleToHalfBits(want));
    else if (dtype == DType::BF16)
      EXPECT_EQ(valuesOf<uint16_t>(batch[1])[at], rt::doubleToBFloatBits(want));
    else
      EXPECT_EQ(valuesOf<double>(batch[1])[at], want);
  }
}

TEST_F(FashionMnistFiles, InputsItCannotFeed) {
  writeTrain(4);
  std::unique_ptr<BatchSource> src;
  auto open = [&](std::vector<InputSpec> specs) {
    return BatchSource::openFashionMnist(dir, Split::Train, std::move(specs),
                                         src);
  };
  const std::string feeds =
      "; Fashion-MNIST (--data fashion-mnist) feeds exactly one float input "
      "of 784 elements per sample (the 28x28 images: [B, 784], "
      "[B, 1, 28, 28], ...) and one i32 or i64 input of one element per "
      "sample (the labels), and the model's inputs are ";

  rt::Status s = open({{"x", DType::F32, {2, 3}}, {"y", DType::I64, {2}}});
  EXPECT_TRUE(contains(s, "input 'x' takes neither the images nor the labels" +
                              feeds + "'x' (f32 [2, 3]), 'y' (i64 [2])"))
      << s.message();
  s = open({{"x", DType::F32, {2, 784}}});
  EXPECT_TRUE(
      contains(s, "no input takes the labels" + feeds + "'x' (f32 [2, 784])"))
      << s.message();
  s = open({{"y", DType::I64, {2}}});
  EXPECT_TRUE(contains(s, "no input takes the images")) << s.message();
  s = open({{"x", DType::F32, {2, 28, 28}},
            {"y", DType::I64, {2}},
            {"z", DType::I32, {2}}});
  EXPECT_TRUE(contains(s, "inputs 'y' and 'z' could both take the labels"))
      << s.message();
  s = open({{"a", DType::F16, {2, 784}},
            {"b", DType::F32, {2, 28, 28}},
            {"y", DType::I64, {2}}});
  EXPECT_TRUE(contains(s, "inputs 'a' and 'b' could both take the images"))
      << s.message();
  s = open({{"x", DType::F32, {2, 784}},
            {"y", DType::I64, {2}},
            {"m", DType::I1, {2}}});
  EXPECT_TRUE(contains(s, "input 'm' takes neither")) << s.message();
  EXPECT_TRUE(contains(s, "'m' (i1 [2])")) << s.message();
  s = open({{"x", DType::F32, {2, 784}}, {"y", DType::I64, {2, 2}}});
  EXPECT_TRUE(contains(s, "input 'y' takes neither")) << s.message();

  s = open({{"x", DType::F32, {2, 784}}, {"y", DType::I64, {2}, 5}});
  EXPECT_TRUE(contains(s, "input 'y' has 5 classes but Fashion-MNIST has 10"))
      << s.message();
  s = open({{"x", DType::F32, {2, 784}}, {"y", DType::I64, {3}}});
  EXPECT_TRUE(contains(s, "input 'y' has batch size 3 but input 'x' has 2"))
      << s.message();
  s = open({{"x", DType::F32, {8, 784}}, {"y", DType::I64, {8}}});
  EXPECT_TRUE(contains(s, "Fashion-MNIST's train split in " + dir +
                              " holds 4 samples, fewer than one batch of 8"))
      << s.message();
  // More classes than Fashion-MNIST's is fine (a wider classifier).
  EXPECT_TRUE(
      open({{"x", DType::F32, {2, 784}}, {"y", DType::I64, {2}, 12}}).isOk());
  // The reader's errors come through.
  std::filesystem::remove(labelsFile());
  s = open({{"x", DType::F32, {2, 784}}, {"y", DType::I64, {2}}});
  EXPECT_TRUE(contains(s, "train-labels-idx1-ubyte.gz: no such file"))
      << s.message();
}

// The installed data set. The labels and first-image sums were read with
//   /usr/bin/python3 -c "import gzip; d = gzip.open('/usr/share/datasets/
//   fashion-mnist/train-labels-idx1-ubyte.gz').read(); print(list(d[8:18]))"
// (t10k- for the test split; sum(d[16:16 + 784]) of the images files).
class FashionMnistInstalled : public ::testing::Test {
protected:
  void SetUp() override {
    if (!std::filesystem::exists(tools::kFashionMnistDir))
      GTEST_SKIP() << tools::kFashionMnistDir
                   << " is missing (apt install dataset-fashion-mnist)";
  }
};

TEST_F(FashionMnistInstalled, SplitsHoldBalancedClasses) {
  struct Expect {
    Split split;
    int64_t samples;
    std::vector<uint8_t> firstLabels;
    int64_t firstImageSum;
  };
  for (const Expect &e :
       {Expect{Split::Train, 60000, {9, 0, 0, 3, 0, 2, 7, 2, 5, 5}, 76247},
        Expect{Split::Test, 10000, {9, 2, 1, 1, 6, 1, 4, 6, 5, 7}, 33456}}) {
    SCOPED_TRACE(tools::splitName(e.split));
    FashionMnist data;
    rt::Status s =
        tools::readFashionMnist(tools::kFashionMnistDir, e.split, data);
    ASSERT_TRUE(s.isOk()) << s.message();
    ASSERT_EQ(data.samples, e.samples);
    ASSERT_EQ(data.images.size(), size_t(e.samples) * 784);
    EXPECT_EQ(
        std::vector<uint8_t>(data.labels.begin(), data.labels.begin() + 10),
        e.firstLabels);
    int64_t sum = 0;
    for (int p = 0; p < 784; ++p)
      sum += data.images[p];
    EXPECT_EQ(sum, e.firstImageSum);
    std::vector<int64_t> counts(10);
    for (uint8_t l : data.labels)
      ++counts[l];
    for (int64_t c : counts)
      EXPECT_EQ(c, e.samples / 10);
  }
}

TEST_F(FashionMnistInstalled, NormalisedTrainImagesHaveMeanZeroStdOne) {
  std::unique_ptr<BatchSource> src;
  rt::Status s = BatchSource::openFashionMnist(
      tools::kFashionMnistDir, Split::Train,
      {{"x", DType::F32, {7000, 784}}, {"y", DType::I32, {7000}}}, src);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_EQ(src->stepsPerEpoch(), 8); // 60000 / 7000, 4000 dropped
  ASSERT_EQ(src->evalBatches(), 9);
  double sum = 0, sumSq = 0;
  int64_t n = 0, labelSum = 0;
  std::vector<HostTensor> batch;
  for (int64_t i = 0; i < src->evalBatches(); ++i) {
    int64_t valid = 0;
    ASSERT_TRUE(src->evalBatch(i, batch, valid).isOk());
    std::vector<float> x = valuesOf<float>(batch[0]);
    std::vector<int32_t> y = valuesOf<int32_t>(batch[1]);
    for (int64_t k = 0; k < valid * 784; ++k) {
      sum += x[k];
      sumSq += double(x[k]) * x[k];
    }
    for (int64_t k = 0; k < valid; ++k)
      labelSum += y[k];
    n += valid;
  }
  ASSERT_EQ(n, 60000);
  EXPECT_EQ(labelSum, 6000 * 45); // every sample counted once
  double count = double(n) * 784;
  double mean = sum / count;
  double std = std::sqrt(sumSq / count - mean * mean);
  EXPECT_NEAR(mean, 0, 1e-3);
  EXPECT_NEAR(std, 1, 1e-3);
}

} // namespace
