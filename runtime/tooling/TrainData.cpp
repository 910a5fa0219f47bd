//===- TrainData.cpp - the batches a training run feeds its inputs --------===//

#include "runtime/tooling/TrainData.h"

#include "runtime/Checksum.h"
#include "runtime/TypedIO.h"
#include "runtime/io/Npy.h"
#include "runtime/tooling/NonFinite.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <optional>
#include <set>

namespace ampc::tools {
namespace {

using rt::DType;
using rt::HostTensor;
using rt::Status;

std::string quoted(const std::string &s) { return "'" + s + "'"; }

// Checks what both sources need from the specs.
Status checkSpecs(const std::vector<InputSpec> &specs) {
  std::set<std::string> names;
  for (const InputSpec &s : specs) {
    std::string what = "input " + quoted(s.name);
    if (s.name.empty())
      return Status::error("an input has no name");
    if (!names.insert(s.name).second)
      return Status::error(what + " is listed twice");
    if (s.shape.empty())
      return Status::error(what + " is a scalar; a batched input needs the "
                                  "batch size as its first dimension");
    for (int64_t d : s.shape)
      if (d < 0)
        return Status::error(what + " has a negative dimension in " +
                             rt::str(s.shape));
    if (s.shape[0] < 1)
      return Status::error(what + " has batch size " +
                           std::to_string(s.shape[0]) + "; it must be >= 1");
    if (s.classes < 0)
      return Status::error(what + " has a negative class count " +
                           std::to_string(s.classes));
    if (s.classes > 0 && !rt::isInt(s.dtype))
      return Status::error(what + " has a class count but is " +
                           std::string(rt::name(s.dtype)) +
                           "; labels are i32 or i64");
    if (s.classes > (int64_t(1) << 31) && s.dtype == DType::I32)
      return Status::error(what + " is i32 but has " +
                           std::to_string(s.classes) + " classes");
  }
  return Status::ok();
}

// Whether a .npy file of dtype `file` may feed an input of dtype `input`.
bool convertible(DType file, DType input) {
  if (file == input)
    return true;
  if (file == DType::F32 || file == DType::F64)
    return rt::isFloat(input);
  if (rt::isInt(file))
    return rt::isInt(input);
  return false;
}

std::string acceptedFor(DType input) {
  switch (input) {
  case DType::F16:
    return "f16, f32 or f64";
  case DType::BF16:
    return "f32 or f64 (NumPy has no bf16)";
  case DType::F32:
  case DType::F64:
    return "f32 or f64";
  case DType::I32:
  case DType::I64:
    return "i32 or i64";
  default:
    return std::string(rt::name(input));
  }
}

// splitmix64 (Steele, Lea, Flood 2014): a counter-based generator whose
// output is fully specified, unlike the <random> distributions.
uint64_t mix64(uint64_t z) {
  z += 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

class SplitMix64 {
public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t next() {
    state_ += 0x9E3779B97F4A7C15ull;
    uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in (0, 1] on 24 bits: never 0, so log() in Box-Muller is
  // finite; exact in f32.
  float openUniform() { return float((next() >> 40) + 1) * 0x1p-24f; }
  // Uniform in [0, 1) on 24 bits, exact in f32.
  float uniform() { return float(next() >> 40) * 0x1p-24f; }
  // Uniform in [0, n) by the multiply-shift map (bias below 2^-64 * n).
  uint64_t below(uint64_t n) {
    return uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  // Exactly uniform in [0, n), n >= 1: Lemire's multiply-shift, redrawing
  // the 2^64 mod n products whose low half falls below that remainder.
  uint64_t unbiasedBelow(uint64_t n) {
    unsigned __int128 m = static_cast<unsigned __int128>(next()) * n;
    if (uint64_t(m) < n) {
      uint64_t threshold = (0 - n) % n;
      while (uint64_t(m) < threshold)
        m = static_cast<unsigned __int128>(next()) * n;
    }
    return uint64_t(m >> 64);
  }

private:
  uint64_t state_;
};

// Sizes `t` for `spec`, reusing its buffer across steps.
void shapeLike(const InputSpec &spec, HostTensor &t) {
  t.name = spec.name;
  t.dtype = spec.dtype;
  t.shape = spec.shape;
  t.bytes.resize(size_t(rt::numElements(spec.shape)) * rt::sizeOf(spec.dtype));
}

int64_t elementsPerSample(const InputSpec &spec) {
  int64_t n = 1;
  for (size_t i = 1; i < spec.shape.size(); ++i)
    n *= spec.shape[i];
  return n;
}

// File sources walk all inputs through the same samples, so they share
// one batch size.
Status commonBatchSize(const std::vector<InputSpec> &specs) {
  for (const InputSpec &s : specs)
    if (s.shape[0] != specs[0].shape[0])
      return Status::error(
          "input " + quoted(s.name) + " has batch size " +
          std::to_string(s.shape[0]) + " but input " + quoted(specs[0].name) +
          " has " + std::to_string(specs[0].shape[0]) +
          "; inputs read from files share one batch size (their first "
          "dimension)");
  return Status::ok();
}

std::string describeInputs(const std::vector<InputSpec> &specs) {
  std::string s;
  for (const InputSpec &spec : specs)
    s += (s.empty() ? "" : ", ") + quoted(spec.name) + " (" +
         std::string(rt::name(spec.dtype)) + " " + rt::str(spec.shape) + ")";
  return s.empty() ? "none" : s;
}

// Finds which input takes Fashion-MNIST's images and which its labels.
Status matchFashionMnist(const std::vector<InputSpec> &specs, int &image,
                         int &label) {
  std::vector<int> images, labels;
  std::string problem;
  for (size_t i = 0; i < specs.size(); ++i) {
    const InputSpec &s = specs[i];
    int64_t n = elementsPerSample(s);
    if (rt::isFloat(s.dtype) && n == kFashionMnistPixels)
      images.push_back(int(i));
    else if (rt::isInt(s.dtype) && n == 1)
      labels.push_back(int(i));
    else if (problem.empty())
      problem = "input " + quoted(s.name) +
                " takes neither the images nor the labels";
  }
  auto both = [&](const std::vector<int> &v) {
    return "inputs " + quoted(specs[v[0]].name) + " and " +
           quoted(specs[v[1]].name);
  };
  if (problem.empty() && images.size() != 1)
    problem = images.empty() ? "no input takes the images"
                             : both(images) + " could both take the images";
  if (problem.empty() && labels.size() != 1)
    problem = labels.empty() ? "no input takes the labels"
                             : both(labels) + " could both take the labels";
  if (!problem.empty())
    return Status::error(
        problem +
        "; Fashion-MNIST (--data fashion-mnist) feeds exactly one float input "
        "of 784 elements per sample (the 28x28 images: [B, 784], "
        "[B, 1, 28, 28], ...) and one i32 or i64 input of one element per "
        "sample (the labels), and the model's inputs are " +
        describeInputs(specs));
  image = images[0];
  label = labels[0];
  const InputSpec &l = specs[label];
  if (l.classes > 0 && l.classes < kFashionMnistClasses)
    return Status::error("input " + quoted(l.name) + " has " +
                         std::to_string(l.classes) +
                         " classes but Fashion-MNIST has " +
                         std::to_string(kFashionMnistClasses));
  return Status::ok();
}

// The 256 values a byte code stands for, in `dtype`.
Status makeLut(DType dtype, bool normalisedPixel, std::vector<uint8_t> &lut) {
  HostTensor t =
      rt::makeHostTensor(normalisedPixel ? DType::F64 : DType::I64, {256});
  for (int v = 0; v < 256; ++v) {
    if (normalisedPixel) {
      double x = (v / 255.0 - kFashionMnistMean) / kFashionMnistStd;
      std::memcpy(t.bytes.data() + v * sizeof(double), &x, sizeof(double));
    } else {
      int64_t x = v;
      std::memcpy(t.bytes.data() + v * sizeof(int64_t), &x, sizeof(int64_t));
    }
  }
  AMPC_RETURN_IF_ERROR(rt::convertTo(t, dtype));
  lut = std::move(t.bytes);
  return Status::ok();
}

} // namespace

std::vector<int64_t> epochOrder(uint64_t seed, int64_t epoch, int64_t samples) {
  std::vector<int64_t> order(size_t(std::max<int64_t>(samples, 0)));
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = int64_t(i);
  SplitMix64 rng(mix64(mix64(seed) ^ uint64_t(epoch)));
  for (size_t i = order.size(); i-- > 1;)
    std::swap(order[i], order[rng.unbiasedBelow(uint64_t(i) + 1)]);
  return order;
}

std::string npyFileNameFor(const std::string &inputName) {
  std::string s = inputName;
  for (char &c : s) {
    bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                 (c >= '0' && c <= '9');
    if (!alnum && c != '.' && c != '_' && c != '-')
      c = '_';
  }
  if (s.empty() || s == "." || s == "..")
    s = "_" + s;
  return s + ".npy";
}

Status BatchSource::openDirectory(const std::string &dir,
                                  std::vector<InputSpec> specs,
                                  std::unique_ptr<BatchSource> &out) {
  AMPC_RETURN_IF_ERROR(checkSpecs(specs));
  AMPC_RETURN_IF_ERROR(commonBatchSize(specs));
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::error("data directory " + dir +
                         " does not exist or is "
                         "not a directory");
  std::unique_ptr<BatchSource> src(new BatchSource());
  src->fromFiles_ = true;
  src->batchSize_ = specs[0].shape[0];
  std::string firstFile;
  std::set<std::string> files;
  for (const InputSpec &spec : specs) {
    std::string leaf = npyFileNameFor(spec.name);
    std::string path = dir + "/" + leaf;
    std::string what = path + " (input " + quoted(spec.name) + ")";
    if (!files.insert(leaf).second)
      return Status::error(what + ": another input also reads " + leaf +
                           "; rename one of the inputs");
    if (!std::filesystem::exists(path, ec))
      return Status::error("data directory " + dir + " has no file " + leaf +
                           " for input " + quoted(spec.name) +
                           " (every input needs one)");
    if (!std::filesystem::is_regular_file(path, ec))
      return Status::error(what + ": is not a regular file");
    HostTensor t;
    AMPC_RETURN_IF_ERROR(
        rt::readNpy(path, t).withContext("input " + quoted(spec.name)));
    std::string want = "[S";
    for (size_t i = 1; i < spec.shape.size(); ++i)
      want += ", " + std::to_string(spec.shape[i]);
    want += "]";
    if (t.shape.size() != spec.shape.size() ||
        !std::equal(t.shape.begin() + 1, t.shape.end(), spec.shape.begin() + 1))
      return Status::error(what + ": has shape " + rt::str(t.shape) +
                           ", expected " + want +
                           " (samples on axis 0, then the input's shape " +
                           rt::str(spec.shape) + " without its batch size)");
    if (t.shape[0] < 1)
      return Status::error(what + ": holds no samples (shape " +
                           rt::str(t.shape) + ")");
    if (src->columns_.empty()) {
      src->samples_ = t.shape[0];
      firstFile = path;
    } else if (t.shape[0] != src->samples_) {
      return Status::error(what + ": holds " + std::to_string(t.shape[0]) +
                           " samples but " + firstFile + " holds " +
                           std::to_string(src->samples_) +
                           "; every file needs the same number");
    }
    if (!convertible(t.dtype, spec.dtype))
      return Status::error(what + ": holds " + std::string(rt::name(t.dtype)) +
                           " data but the input is " +
                           std::string(rt::name(spec.dtype)) +
                           "; accepted: " + acceptedFor(spec.dtype));
    // A batch copies whole samples, so checking each sample once here checks
    // every batch, and stops a run before it compiles. Rounding to a
    // narrower dtype may overflow: the file's value says so.
    std::optional<HostTensor> before;
    if (t.dtype != spec.dtype && rt::isFloat(spec.dtype))
      before = t;
    AMPC_RETURN_IF_ERROR(rt::convertTo(t, spec.dtype).withContext(path));
    rt::TensorView beforeView;
    if (before)
      beforeView = before->view();
    if (Status s = checkFinite(t.view(), /*samples=*/true,
                               before ? &beforeView : nullptr);
        !s)
      return Status::error(what + ": " + s.message() +
                           "; the data must be finite");
    before.reset();
    Column column;
    column.sampleBytes = t.bytes.size() / size_t(src->samples_);
    column.bytes = std::move(t.bytes);
    column.source = what;
    src->columns_.push_back(std::move(column));
  }
  src->specs_ = std::move(specs);
  AMPC_RETURN_IF_ERROR(src->checkSampleCount("data directory " + dir));
  out = std::move(src);
  return Status::ok();
}

Status BatchSource::openFashionMnist(const std::string &dir, Split split,
                                     std::vector<InputSpec> specs,
                                     std::unique_ptr<BatchSource> &out) {
  AMPC_RETURN_IF_ERROR(checkSpecs(specs));
  int image = -1, label = -1;
  AMPC_RETURN_IF_ERROR(matchFashionMnist(specs, image, label));
  AMPC_RETURN_IF_ERROR(commonBatchSize(specs));
  FashionMnist data;
  AMPC_RETURN_IF_ERROR(readFashionMnist(dir, split, data));

  std::unique_ptr<BatchSource> src(new BatchSource());
  src->fromFiles_ = true;
  src->batchSize_ = specs[0].shape[0];
  src->samples_ = data.samples;
  src->columns_.resize(2);
  Column &pixels = src->columns_[image];
  pixels.sampleBytes = size_t(kFashionMnistPixels);
  pixels.bytes = std::move(data.images);
  AMPC_RETURN_IF_ERROR(makeLut(specs[image].dtype, true, pixels.lut));
  Column &labels = src->columns_[label];
  labels.source = "Fashion-MNIST's " + std::string(splitName(split)) +
                  " labels in " + dir + " (input '" + specs[label].name + "')";
  labels.sampleBytes = 1;
  labels.bytes = std::move(data.labels);
  AMPC_RETURN_IF_ERROR(makeLut(specs[label].dtype, false, labels.lut));
  if (specs[label].classes == 0)
    specs[label].classes = kFashionMnistClasses;
  src->specs_ = std::move(specs);
  AMPC_RETURN_IF_ERROR(src->checkSampleCount(
      "Fashion-MNIST's " + std::string(splitName(split)) + " split in " + dir));
  out = std::move(src);
  return Status::ok();
}

Status BatchSource::checkSampleCount(const std::string &source) const {
  if (samples_ < batchSize_)
    return Status::error(source + " holds " + std::to_string(samples_) +
                         " samples, fewer than one batch of " +
                         std::to_string(batchSize_) + " (the batch size of " +
                         describeInputs(specs_) + ")");
  return Status::ok();
}

Status BatchSource::synthetic(uint64_t seed, std::vector<InputSpec> specs,
                              std::unique_ptr<BatchSource> &out,
                              int64_t batches) {
  if (batches < 0)
    return Status::error("synthetic data: " + std::to_string(batches) +
                         " batches to cycle through; give at least 1, or 0 "
                         "for a fresh batch every step");
  AMPC_RETURN_IF_ERROR(checkSpecs(specs));
  std::unique_ptr<BatchSource> src(new BatchSource());
  src->specs_ = std::move(specs);
  src->seed_ = seed;
  // Drawn here, once: a step then only hands out a batch it holds, so the
  // host does not keep a fast device waiting between steps.
  src->cycle_.resize(size_t(batches));
  for (int64_t k = 0; k < batches; ++k) {
    std::vector<HostTensor> &b = src->cycle_[size_t(k)];
    b.resize(src->specs_.size());
    for (size_t i = 0; i < src->specs_.size(); ++i) {
      shapeLike(src->specs_[i], b[i]);
      src->fillSynthetic(k, i, b[i]);
    }
  }
  out = std::move(src);
  return Status::ok();
}

void BatchSource::shuffleEachEpoch(uint64_t seed) {
  shuffle_ = true;
  shuffleSeed_ = seed;
  orderEpoch_ = -1;
}

int64_t BatchSource::stepsPerEpoch() const {
  return fromFiles_ ? samples_ / batchSize_ : 0;
}

uint32_t BatchSource::checksum() const {
  if (!checksum_) {
    uint32_t crc = 0;
    for (const Column &c : columns_) {
      crc = rt::crc32Of(c.bytes.data(), c.bytes.size(), crc);
      crc = rt::crc32Of(c.lut.data(), c.lut.size(), crc);
    }
    checksum_ = crc;
  }
  return *checksum_;
}

int64_t BatchSource::evalBatches() const {
  return fromFiles_ ? (samples_ + batchSize_ - 1) / batchSize_ : 0;
}

Status BatchSource::checkLabels(const std::string &input, int64_t classes,
                                std::optional<int64_t> ignoreIndex) const {
  auto spec = std::find_if(specs_.begin(), specs_.end(),
                           [&](const InputSpec &s) { return s.name == input; });
  if (!fromFiles_ || spec == specs_.end() || !rt::isInt(spec->dtype))
    return Status::ok();
  const Column &column = columns_[size_t(spec - specs_.begin())];
  int64_t perSample = elementsPerSample(*spec);
  // A byte-coded column holds indices into its lut, in the input's dtype.
  rt::TensorView values{spec->dtype,
                        {int64_t(column.lut.empty() ? 0 : 256)},
                        const_cast<uint8_t *>(column.lut.data())};
  rt::TensorView direct{spec->dtype,
                        {samples_ * perSample},
                        const_cast<uint8_t *>(column.bytes.data())};
  int64_t bad = 0, badSamples = 0, firstSample = -1, firstElement = 0,
          firstValue = 0;
  for (int64_t s = 0; s < samples_; ++s) {
    bool sampleBad = false;
    for (int64_t e = 0; e < perSample; ++e) {
      int64_t i = s * perSample + e;
      int64_t v = column.lut.empty()
                      ? rt::elementAsInt(direct, i)
                      : rt::elementAsInt(values, column.bytes[size_t(i)]);
      if ((v >= 0 && v < classes) || v == ignoreIndex)
        continue;
      if (firstSample < 0) {
        firstSample = s;
        firstElement = e;
        firstValue = v;
      }
      ++bad;
      sampleBad = true;
    }
    badSamples += sampleBad;
  }
  if (!bad)
    return Status::ok();
  std::string range = "[0, " + std::to_string(classes) + ")";
  return Status::error(
      column.source + ": sample " + std::to_string(firstSample) +
      (perSample > 1 ? ", element " + std::to_string(firstElement) : "") +
      " has label " + std::to_string(firstValue) + ", outside the " +
      std::to_string(classes) + " classes " + range + " of the loss" +
      (ignoreIndex ? " and not its ignore_index " + std::to_string(*ignoreIndex)
                   : std::string()) +
      " (" + std::to_string(bad) + (bad == 1 ? " label" : " labels") + " in " +
      std::to_string(badSamples) + " of the " + std::to_string(samples_) +
      " samples)");
}

int BatchSource::labelInput() const {
  int found = -1;
  for (size_t i = 0; i < specs_.size(); ++i) {
    if (specs_[i].classes <= 0)
      continue;
    if (found >= 0)
      return -1;
    found = int(i);
  }
  return found;
}

const std::vector<HostTensor> *BatchSource::heldBatch(int64_t step) const {
  if (step < 0 || cycle_.empty())
    return nullptr;
  return &cycle_[size_t(step % int64_t(cycle_.size()))];
}

Status BatchSource::batch(int64_t step, std::vector<HostTensor> &scratch,
                          const std::vector<HostTensor> *&out) {
  if ((out = heldBatch(step)))
    return Status::ok();
  out = &scratch;
  return batch(step, scratch);
}

Status BatchSource::batch(int64_t step, std::vector<HostTensor> &out) {
  if (step < 0)
    return Status::error("batch: step " + std::to_string(step) +
                         " is negative");
  if (const std::vector<HostTensor> *held = heldBatch(step)) {
    out = *held;
    return Status::ok();
  }
  out.resize(specs_.size());
  if (!fromFiles_) {
    for (size_t i = 0; i < specs_.size(); ++i) {
      shapeLike(specs_[i], out[i]);
      fillSynthetic(step, i, out[i]);
    }
    return Status::ok();
  }
  int64_t perEpoch = stepsPerEpoch();
  int64_t epoch = step / perEpoch;
  int64_t first = (step % perEpoch) * batchSize_;
  if (shuffle_ && orderEpoch_ != epoch) {
    order_ = epochOrder(shuffleSeed_, epoch, samples_);
    orderEpoch_ = epoch;
  }
  rows_.resize(size_t(batchSize_));
  for (int64_t k = 0; k < batchSize_; ++k)
    rows_[k] = shuffle_ ? order_[first + k] : first + k;
  fillRows(out);
  return Status::ok();
}

Status BatchSource::evalBatch(int64_t i, std::vector<HostTensor> &out,
                              int64_t &valid) {
  if (!fromFiles_)
    return Status::error("evalBatch: synthetic data has no evaluation "
                         "batches");
  if (i < 0 || i >= evalBatches())
    return Status::error("evalBatch: batch " + std::to_string(i) +
                         " is outside [0, " + std::to_string(evalBatches()) +
                         ")");
  int64_t first = i * batchSize_;
  valid = std::min(batchSize_, samples_ - first);
  rows_.resize(size_t(batchSize_));
  for (int64_t k = 0; k < batchSize_; ++k)
    rows_[k] = k < valid ? first + k : 0;
  out.resize(specs_.size());
  fillRows(out);
  return Status::ok();
}

void BatchSource::fillRows(std::vector<HostTensor> &out) const {
  for (size_t i = 0; i < specs_.size(); ++i) {
    shapeLike(specs_[i], out[i]);
    const Column &c = columns_[i];
    uint8_t *dst = out[i].bytes.data();
    size_t elementBytes = rt::sizeOf(specs_[i].dtype);
    for (int64_t sample : rows_) {
      const uint8_t *src = c.bytes.data() + size_t(sample) * c.sampleBytes;
      if (c.lut.empty()) {
        if (c.sampleBytes)
          std::memcpy(dst, src, c.sampleBytes);
        dst += c.sampleBytes;
        continue;
      }
      for (size_t e = 0; e < c.sampleBytes; ++e, dst += elementBytes)
        std::memcpy(dst, c.lut.data() + size_t(src[e]) * elementBytes,
                    elementBytes);
    }
  }
}

void BatchSource::fillSynthetic(int64_t batch, size_t input,
                                HostTensor &t) const {
  const InputSpec &spec = specs_[input];
  // One independent stream per (seed, batch, input).
  SplitMix64 rng(mix64(mix64(mix64(seed_) ^ uint64_t(batch)) ^ input));
  int64_t n = t.numElements();
  // Values are drawn in f32 (labels in int64), the precision the steps
  // take, and stored rounded once.
  rt::TensorView view = t.view();
  if (rt::isFloat(t.dtype)) {
    constexpr float kTwoPi = 6.28318530717958647692f;
    for (int64_t i = 0; i < n; i += 2) {
      float r = std::sqrt(-2.0f * std::log(rng.openUniform()));
      float theta = kTwoPi * rng.uniform();
      float pair[2] = {r * std::cos(theta), r * std::sin(theta)};
      rt::storeF32(pair, std::min<int64_t>(2, n - i), view, i);
    }
  } else if (spec.classes > 0) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t label = int64_t(rng.below(uint64_t(spec.classes)));
      rt::storeI64(&label, 1, view, i);
    }
  } else {
    std::memset(t.bytes.data(), 0, t.bytes.size());
  }
}

bool isIdxDirectory(const std::string &dir) {
  std::filesystem::path p =
      std::filesystem::path(dir) / fashionMnistImagesFile(Split::Train);
  std::error_code ec;
  return std::filesystem::exists(p, ec) ||
         std::filesystem::exists(p.string() + ".gz", ec);
}

Status openFileData(const std::string &data, const std::string &testData,
                    std::optional<bool> shuffle, uint64_t seed,
                    const std::vector<InputSpec> &specs, FileData &d,
                    bool openTest) {
  auto train = [](Status s) { return s.withContext("--data"); };
  std::string dir = data == "fashion-mnist" ? kFashionMnistDir : data;
  bool idx = isIdxDirectory(dir);
  if (data == "fashion-mnist" && !idx)
    return train(Status::error(
        "fashion-mnist: no train-images-idx3-ubyte.gz in " + dir +
        " (Debian's dataset-fashion-mnist installs it; scripts/setup.sh "
        "installs that package)"));
  if (idx) {
    if (!testData.empty())
      return Status::error("--test-data: --data " + dir +
                           " holds IDX files, whose test split (t10k-*) "
                           "is evaluated: leave --test-data out");
    AMPC_RETURN_IF_ERROR(train(
        BatchSource::openFashionMnist(dir, Split::Train, specs, d.train)));
    if (openTest)
      AMPC_RETURN_IF_ERROR(train(
          BatchSource::openFashionMnist(dir, Split::Test, specs, d.test)));
  } else {
    AMPC_RETURN_IF_ERROR(
        train(BatchSource::openDirectory(dir, specs, d.train)));
    if (!testData.empty() && openTest)
      AMPC_RETURN_IF_ERROR(BatchSource::openDirectory(testData, specs, d.test)
                               .withContext("--test-data"));
  }
  d.shuffled = shuffle.value_or(idx);
  if (d.shuffled)
    d.train->shuffleEachEpoch(seed);
  return Status::ok();
}

rt::Status checkDataLabels(const rt::StepInfo &step, const FileData &data) {
  for (const auto &[name, classes] : step.classes) {
    auto ignore = step.ignoreIndex.find(name);
    std::optional<int64_t> ignoreIndex;
    if (ignore != step.ignoreIndex.end())
      ignoreIndex = ignore->second;
    for (auto [flag, source] :
         {std::pair<const char *, BatchSource *>{"--data", data.train.get()},
          {"--test-data", data.test.get()}})
      if (source)
        if (rt::Status s = source->checkLabels(name, classes, ignoreIndex); !s)
          return rt::Status::error(std::string(flag) + ": " + s.message());
  }
  return rt::Status::ok();
}

} // namespace ampc::tools
