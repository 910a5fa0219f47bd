//===- FashionMnist.cpp - the Fashion-MNIST IDX files ---------------------===//
//
// IDX (LeCun's MNIST format): a big-endian magic 0x0000TTNN (TT the element
// type, 0x08 for unsigned bytes; NN the number of dimensions), NN big-endian
// u32 dimensions, then the elements row-major. zlib's gz* functions read
// plain files as they are, so one reader serves both spellings.
//
//===----------------------------------------------------------------------===//

#include "runtime/tooling/FashionMnist.h"

#include "runtime/tooling/Format.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace ampc::tools {
namespace {

using rt::Status;

constexpr uint32_t kImagesMagic = 0x00000803;
constexpr uint32_t kLabelsMagic = 0x00000801;

const char *idxTypeName(uint32_t code) {
  switch (code) {
  case 0x08:
    return "unsigned bytes";
  case 0x09:
    return "signed bytes";
  case 0x0B:
    return "i16";
  case 0x0C:
    return "i32";
  case 0x0D:
    return "f32";
  case 0x0E:
    return "f64";
  default:
    return nullptr;
  }
}

std::string describeMagic(uint32_t magic) {
  const char *type = idxTypeName((magic >> 8) & 0xFF);
  if ((magic >> 16) != 0 || !type)
    return hex32(magic) + " (not an IDX file)";
  uint32_t dims = magic & 0xFF;
  return hex32(magic) + " (" + type + ", " + std::to_string(dims) +
         (dims == 1 ? " dimension)" : " dimensions)");
}

uint32_t bigEndian32(const uint8_t *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         uint32_t(p[3]);
}

class GzReader {
public:
  explicit GzReader(std::string path) : path_(std::move(path)) {}
  ~GzReader() {
    if (file_)
      gzclose(file_);
  }
  GzReader(const GzReader &) = delete;
  GzReader &operator=(const GzReader &) = delete;

  Status open() {
    errno = 0;
    file_ = gzopen(path_.c_str(), "rb");
    if (!file_)
      return Status::error(path_ + ": cannot open: " +
                           (errno ? std::strerror(errno) : "out of memory"));
    gzbuffer(file_, 1 << 17);
    return Status::ok();
  }

  // Appends up to `want` bytes to `out`; fewer only at the end of the data.
  // Corrupt or truncated gzip data is an error.
  Status read(uint64_t want, std::vector<uint8_t> &out) {
    constexpr uint64_t kChunk = 1 << 20;
    while (want > 0) {
      size_t old = out.size();
      unsigned n = unsigned(std::min(want, kChunk));
      out.resize(old + n);
      int got = gzread(file_, out.data() + old, n);
      out.resize(old + size_t(std::max(got, 0)));
      AMPC_RETURN_IF_ERROR(checkStream());
      if (got <= 0)
        break;
      want -= uint64_t(got);
    }
    return Status::ok();
  }

  const std::string &path() const { return path_; }

private:
  Status checkStream() {
    int code = Z_OK;
    const char *message = gzerror(file_, &code);
    if (code == Z_OK)
      return Status::ok();
    if (code == Z_ERRNO)
      return Status::error(path_ + ": cannot read: " + std::strerror(errno));
    // zlib's message starts with the path it was opened with.
    std::string text = message ? message : "unknown error";
    if (text.rfind(path_ + ": ", 0) == 0)
      text.erase(0, path_.size() + 2);
    return Status::error(path_ + ": corrupt gzip data: " + text);
  }

  std::string path_;
  gzFile file_ = nullptr;
};

// NAME.gz if it exists, else NAME.
Status locate(const std::string &dir, const std::string &name,
              std::string &path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::error("Fashion-MNIST directory " + dir +
                         " does not exist or is not a directory (Debian's "
                         "dataset-fashion-mnist installs the files in " +
                         kFashionMnistDir + ")");
  std::string gz = dir + "/" + name + ".gz";
  std::string plain = dir + "/" + name;
  if (std::filesystem::exists(gz, ec))
    path = gz;
  else if (std::filesystem::exists(plain, ec))
    path = plain;
  else
    return Status::error(gz + ": no such file (nor " + plain + ")");
  return Status::ok();
}

// Reads an IDX file of unsigned bytes with `magic`'s dimensions: `dims`
// receives them; `data` the elements, exactly as many as they multiply to.
// `checkDims` vets the dimensions before any element is read and returns
// the element count.
template <typename CheckDims>
Status readIdx(const std::string &path, uint32_t magic, const char *what,
               CheckDims checkDims, std::vector<uint8_t> &data) {
  GzReader in(path);
  AMPC_RETURN_IF_ERROR(in.open());
  uint32_t rank = magic & 0xFF;
  size_t headerBytes = 4 * (1 + rank);
  std::vector<uint8_t> header;
  AMPC_RETURN_IF_ERROR(in.read(4, header));
  if (header.size() == 4 && bigEndian32(header.data()) != magic)
    return Status::error(path + ": magic " +
                         describeMagic(bigEndian32(header.data())) + ", but " +
                         what + " file starts with " + describeMagic(magic));
  AMPC_RETURN_IF_ERROR(in.read(headerBytes - header.size(), header));
  if (header.size() < headerBytes)
    return Status::error(path + ": " + std::to_string(header.size()) +
                         " bytes, too short for the " +
                         std::to_string(headerBytes) + "-byte IDX header of " +
                         what + " file");
  std::vector<uint32_t> dims(rank);
  for (uint32_t i = 0; i < rank; ++i)
    dims[i] = bigEndian32(header.data() + 4 * (i + 1));
  uint64_t elements = 0;
  AMPC_RETURN_IF_ERROR(checkDims(dims, elements));
  data.clear();
  AMPC_RETURN_IF_ERROR(in.read(elements, data));
  if (data.size() < elements)
    return Status::error(path + ": truncated: the header declares " +
                         std::to_string(elements) + " bytes of data but " +
                         std::to_string(data.size()) + " follow it");
  std::vector<uint8_t> extra;
  AMPC_RETURN_IF_ERROR(in.read(1, extra));
  if (!extra.empty())
    return Status::error(path + ": trailing bytes after the " +
                         std::to_string(elements) +
                         " bytes of data the header declares");
  return Status::ok();
}

} // namespace

const char *splitName(Split split) {
  return split == Split::Train ? "train" : "test";
}

std::string fashionMnistImagesFile(Split split) {
  return split == Split::Train ? "train-images-idx3-ubyte"
                               : "t10k-images-idx3-ubyte";
}

std::string fashionMnistLabelsFile(Split split) {
  return split == Split::Train ? "train-labels-idx1-ubyte"
                               : "t10k-labels-idx1-ubyte";
}

Status readFashionMnist(const std::string &dir, Split split,
                        FashionMnist &out) {
  std::string imagesPath, labelsPath;
  AMPC_RETURN_IF_ERROR(locate(dir, fashionMnistImagesFile(split), imagesPath));
  AMPC_RETURN_IF_ERROR(locate(dir, fashionMnistLabelsFile(split), labelsPath));

  FashionMnist result;
  auto imageDims = [&](const std::vector<uint32_t> &d, uint64_t &elements) {
    if (d[1] != kFashionMnistRows || d[2] != kFashionMnistCols)
      return Status::error(imagesPath + ": images are " + std::to_string(d[1]) +
                           "x" + std::to_string(d[2]) +
                           "; Fashion-MNIST's are 28x28");
    if (d[0] == 0)
      return Status::error(imagesPath + ": holds no images");
    result.samples = d[0];
    elements = uint64_t(d[0]) * kFashionMnistPixels;
    return Status::ok();
  };
  AMPC_RETURN_IF_ERROR(
      readIdx(imagesPath, kImagesMagic, "an images", imageDims, result.images));

  auto labelDims = [&](const std::vector<uint32_t> &d, uint64_t &elements) {
    if (d[0] != uint64_t(result.samples))
      return Status::error(labelsPath + ": " + std::to_string(d[0]) +
                           " labels but " + imagesPath + " has " +
                           std::to_string(result.samples) + " images");
    elements = d[0];
    return Status::ok();
  };
  AMPC_RETURN_IF_ERROR(
      readIdx(labelsPath, kLabelsMagic, "a labels", labelDims, result.labels));
  for (size_t i = 0; i < result.labels.size(); ++i)
    if (result.labels[i] >= kFashionMnistClasses)
      return Status::error(labelsPath + ": label " +
                           std::to_string(result.labels[i]) + " of sample " +
                           std::to_string(i) + " is not below " +
                           std::to_string(kFashionMnistClasses));
  out = std::move(result);
  return Status::ok();
}

} // namespace ampc::tools
