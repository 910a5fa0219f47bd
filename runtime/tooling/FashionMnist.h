//===- FashionMnist.h - the Fashion-MNIST IDX files -----------------------===//
//
// Reads Fashion-MNIST (Xiao, Rasul, Vollgraf 2017) from the four IDX files
// Debian's dataset-fashion-mnist installs. The files are untrusted input:
// every malformed one gives an error Status naming the file and the problem,
// and the buffers grow with the bytes actually read, never to a size taken
// from a header.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_FASHIONMNIST_H
#define AMPC_RUNTIME_TOOLING_FASHIONMNIST_H

#include "runtime/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::tools {

// Where Debian's dataset-fashion-mnist package puts the files.
constexpr const char *kFashionMnistDir = "/usr/share/datasets/fashion-mnist";
constexpr int64_t kFashionMnistRows = 28;
constexpr int64_t kFashionMnistCols = 28;
constexpr int64_t kFashionMnistPixels = kFashionMnistRows * kFashionMnistCols;
constexpr int64_t kFashionMnistClasses = 10;

// The mean and standard deviation of the train split's pixels scaled to
// [0, 1], to four places: the normalisation most Fashion-MNIST training code
// uses. The test split is normalised with the same constants, not its own:
// a model must see its inputs as it was trained on them. Reproduced (to five
// places, 0.28604 and 0.35302) by
//   x = numpy.frombuffer(gzip.open(kFashionMnistDir +
//       "/train-images-idx3-ubyte.gz").read()[16:], numpy.uint8) / 255
//   print(x.mean(), x.std())
constexpr double kFashionMnistMean = 0.2860;
constexpr double kFashionMnistStd = 0.3530;

enum class Split { Train, Test };

// "train" or "test".
const char *splitName(Split split);

// The file of a split inside DIR, without ".gz": train-images-idx3-ubyte,
// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte.
std::string fashionMnistImagesFile(Split split);
std::string fashionMnistLabelsFile(Split split);

struct FashionMnist {
  int64_t samples = 0;
  // samples x 28 x 28 pixels, row-major, 0 (background) to 255.
  std::vector<uint8_t> images;
  // samples labels in [0, 10).
  std::vector<uint8_t> labels;
};

// Reads one split from DIR. Each file is read as NAME.gz (gzip) when that
// exists, else as NAME. Checked: the IDX magic (0x00000803, unsigned bytes in
// 3 dimensions, for images; 0x00000801, unsigned bytes in 1 dimension, for
// labels), 28x28 images, at least one image, a file length that is exactly
// the header's (truncated data and trailing bytes are both errors), as many
// labels as images, and every label below 10.
rt::Status readFashionMnist(const std::string &dir, Split split,
                            FashionMnist &out);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_FASHIONMNIST_H
