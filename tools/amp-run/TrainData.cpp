//===- TrainData.cpp - the batches a training run feeds its inputs --------===//

#include "tools/amp-run/TrainData.h"

#include "runtime/cpu/TypedIO.h"
#include "runtime/io/Npy.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
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
  // Uniform in (0, 1]: never 0, so log() in Box-Muller is finite.
  double openUniform() { return double((next() >> 11) + 1) * 0x1p-53; }
  // Uniform in [0, n) by the multiply-shift map (bias below 2^-64 * n).
  uint64_t below(uint64_t n) {
    return uint64_t((static_cast<unsigned __int128>(next()) * n) >> 64);
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

} // namespace

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
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    return Status::error("data directory " + dir +
                         " does not exist or is "
                         "not a directory");
  std::unique_ptr<BatchSource> src(new BatchSource());
  src->fromFiles_ = true;
  std::string firstFile;
  std::set<std::string> files;
  for (const InputSpec &spec : specs) {
    std::string leaf = npyFileNameFor(spec.name);
    std::string path = dir + "/" + leaf;
    std::string what = path + " (input " + quoted(spec.name) + ")";
    if (!files.insert(leaf).second)
      return Status::error(what + ": another input also reads " + leaf +
                           "; rename one of the inputs");
    if (!std::filesystem::is_regular_file(path, ec))
      return Status::error("data directory " + dir + " has no file " + leaf +
                           " for input " + quoted(spec.name) +
                           " (every input needs one)");
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
    if (src->data_.empty()) {
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
    t.name = spec.name;
    AMPC_RETURN_IF_ERROR(rt::convertTo(t, spec.dtype).withContext(path));
    src->data_.push_back(std::move(t));
  }
  src->specs_ = std::move(specs);
  out = std::move(src);
  return Status::ok();
}

Status BatchSource::synthetic(uint64_t seed, std::vector<InputSpec> specs,
                              std::unique_ptr<BatchSource> &out) {
  AMPC_RETURN_IF_ERROR(checkSpecs(specs));
  std::unique_ptr<BatchSource> src(new BatchSource());
  src->specs_ = std::move(specs);
  src->seed_ = seed;
  out = std::move(src);
  return Status::ok();
}

Status BatchSource::batch(int64_t step, std::vector<HostTensor> &out) {
  if (step < 0)
    return Status::error("batch: step " + std::to_string(step) +
                         " is negative");
  out.resize(specs_.size());
  for (size_t i = 0; i < specs_.size(); ++i) {
    shapeLike(specs_[i], out[i]);
    if (fromFiles_)
      fillFromFile(step, i, out[i]);
    else
      fillSynthetic(step, i, out[i]);
  }
  return Status::ok();
}

void BatchSource::fillFromFile(int64_t step, size_t input,
                               HostTensor &t) const {
  const HostTensor &all = data_[input];
  int64_t batchSize = specs_[input].shape[0];
  size_t sampleBytes = all.bytes.size() / size_t(samples_);
  // (step * B) mod S without overflow for any step.
  int64_t sample = int64_t((static_cast<unsigned __int128>(step) *
                            static_cast<unsigned __int128>(batchSize)) %
                           static_cast<unsigned __int128>(samples_));
  uint8_t *dst = t.bytes.data();
  for (int64_t left = batchSize; left > 0;) {
    int64_t run = std::min(left, samples_ - sample);
    if (sampleBytes)
      std::memcpy(dst, all.bytes.data() + size_t(sample) * sampleBytes,
                  size_t(run) * sampleBytes);
    dst += size_t(run) * sampleBytes;
    left -= run;
    sample = 0;
  }
}

void BatchSource::fillSynthetic(int64_t step, size_t input,
                                HostTensor &t) const {
  const InputSpec &spec = specs_[input];
  // One independent stream per (seed, step, input).
  SplitMix64 rng(mix64(mix64(mix64(seed_) ^ uint64_t(step)) ^ input));
  int64_t n = t.numElements();
  // Values are drawn in double (labels in int64) and stored rounded once.
  rt::TensorView view = t.view();
  if (rt::isFloat(t.dtype)) {
    constexpr double kTwoPi = 6.283185307179586476925286766559;
    for (int64_t i = 0; i < n; i += 2) {
      double r = std::sqrt(-2.0 * std::log(rng.openUniform()));
      double theta = kTwoPi * (double(rng.next() >> 11) * 0x1p-53);
      double pair[2] = {r * std::cos(theta), r * std::sin(theta)};
      rt::cpu::storeF64(pair, std::min<int64_t>(2, n - i), view, i);
    }
  } else if (spec.classes > 0) {
    for (int64_t i = 0; i < n; ++i) {
      int64_t label = int64_t(rng.below(uint64_t(spec.classes)));
      rt::cpu::storeI64(&label, 1, view, i);
    }
  } else {
    std::memset(t.bytes.data(), 0, t.bytes.size());
  }
}

} // namespace ampc::tools
