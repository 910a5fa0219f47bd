//===- TrainData.h - the batches a training run feeds its inputs ----------===//
//
// `amp-run --mode train` (and amp-exec) feed one batch per step to the
// train_step's data inputs, from .npy files, from Fashion-MNIST, or drawn
// from a seed; file sources also give evaluation batches. This library links
// the runtime only (no MLIR), so both tools share it.
//
// Every source is deterministic: the batch of step s depends only on the
// data (or the seed), the shuffle seed and s, so a run resumed from a
// checkpoint at step s sees the same data as an uninterrupted one.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_TRAINDATA_H
#define AMPC_RUNTIME_TOOLING_TRAINDATA_H

#include "runtime/Program.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/FashionMnist.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ampc::tools {

// One data input of the train step. shape[0] is the batch size. `classes` > 0
// marks an integer label input whose synthetic values are drawn in
// [0, classes); labels read from files are checked by checkLabels once the
// compiled step tells their range.
struct InputSpec {
  std::string name;
  rt::DType dtype = rt::DType::F32;
  rt::Shape shape;
  int64_t classes = 0;
};

// The file an input is read from in a data directory: the input name with
// every character outside [A-Za-z0-9._-] replaced by '_' (the rule amp-run
// uses for the .npy files it writes), plus ".npy".
std::string npyFileNameFor(const std::string &inputName);

// The order in which epoch `epoch` of a shuffled source visits `samples`
// samples: a permutation of [0, samples) that depends on (seed, epoch) only.
// Fisher-Yates (for i = S-1 down to 1, swap order[i] with order[j], j
// uniform in [0, i]) over a splitmix64 stream whose state starts at
// mix(mix(seed) ^ epoch), mix(z) being splitmix64's output for state
// z + 0x9E3779B97F4A7C15; j is drawn by Lemire's multiply-shift with
// rejection, so it is unbiased and the same on every platform.
std::vector<int64_t> epochOrder(uint64_t seed, int64_t epoch, int64_t samples);

class BatchSource {
public:
  // DIR holds one npyFileNameFor(name) per input, samples on axis 0: a file
  // of shape [S, shape[1:]...], the same S in every file. The file's dtype
  // must be the input's, except that f32/f64 files convert to a float
  // input's type (rounding once) and i32/i64 files to an integer input's
  // type (an i64 value that does not fit i32 is an error). Files for no
  // input are ignored. The files are read and converted once here, and every
  // float value must then be finite: the first NaN or inf (or value that
  // rounds to inf in the input's dtype) is an error naming the file, input,
  // sample and element. Every input has the same batch size B (shape[0]),
  // and S >= B.
  static rt::Status openDirectory(const std::string &dir,
                                  std::vector<InputSpec> specs,
                                  std::unique_ptr<BatchSource> &out);

  // One split of Fashion-MNIST, read from DIR (normally kFashionMnistDir) by
  // readFashionMnist. The model must have exactly two inputs of one batch
  // size B <= S: a float input of 784 elements per sample ([B, 784],
  // [B, 1, 28, 28], [B, 28, 28], ...), which gets the images row-major,
  // normalised as (pixel / 255 - kFashionMnistMean) / kFashionMnistStd and
  // rounded once to its dtype; and an i32 or i64 input of one element per
  // sample, which gets the labels. A label input's `classes` must be 0 or at
  // least 10; 0 becomes 10 in specs(). Both splits are normalised with the
  // train split's mean and standard deviation (see FashionMnist.h), so every
  // value is finite.
  static rt::Status openFashionMnist(const std::string &dir, Split split,
                                     std::vector<InputSpec> specs,
                                     std::unique_ptr<BatchSource> &out);

  // Batches drawn from `seed`: floats ~ N(0, 1), labels uniform in
  // [0, classes), other integers (and i1) 0. Batch k is a function of the
  // seed and k only. With `batches` = K > 0, batches 0..K-1 are drawn here,
  // once, and step s takes batch s mod K (a benchmark's host then only
  // hands out memory it holds); with 0, step s takes batch s, drawn when
  // asked for. The uniform bits come from splitmix64, so they are the
  // same on every platform; the normals go through Box-Muller in f32 (log,
  // sqrt, cos, sin), so they agree across C libraries to within their
  // rounding; their magnitude stays below 6, finite in every float dtype.
  // Inputs may have different batch sizes. A negative `batches` is an
  // error.
  static constexpr int64_t kDefaultSyntheticBatches = 4;
  static rt::Status synthetic(uint64_t seed, std::vector<InputSpec> specs,
                              std::unique_ptr<BatchSource> &out,
                              int64_t batches = kDefaultSyntheticBatches);

  // From now on, each epoch of a file source visits the samples in
  // epochOrder(seed, epoch, S) instead of file order. No effect on a
  // synthetic source.
  void shuffleEachEpoch(uint64_t seed);

  // Fills `out` with one tensor per spec, in spec order, with the spec's
  // name, dtype and shape, holding the batch of `step` (>= 0). From files,
  // an epoch is stepsPerEpoch() = floor(S / B) steps and the last S mod B
  // samples of its order are left out (PyTorch's DataLoader with
  // drop_last=True): step s is batch i = s mod stepsPerEpoch() of epoch
  // e = s / stepsPerEpoch() and holds samples order_e[i*B + k], k in [0, B),
  // where order_e is the identity (file order) or, after shuffleEachEpoch,
  // epochOrder(seed, e, S), computed once per epoch.
  rt::Status batch(int64_t step, std::vector<rt::HostTensor> &out);
  // The same batch without a copy where the source holds it (the cycled
  // synthetic batches): `out` points at it, or else at `scratch`, filled
  // by batch(). Valid until the next call.
  rt::Status batch(int64_t step, std::vector<rt::HostTensor> &scratch,
                   const std::vector<rt::HostTensor> *&out);

  // floor(S / B) for a file source; 0 for a synthetic one, which has no
  // epochs.
  int64_t stepsPerEpoch() const;

  // Evaluation batches of a file source: every sample once, in file order,
  // never shuffled. There are evalBatches() = ceil(S / B) of them; batch i
  // (in [0, evalBatches())) holds samples [i*B, min((i+1)*B, S)) in its first
  // `valid` rows, and the rows after them (in the last batch only) repeat
  // sample 0, so they must not be counted. A synthetic source has none.
  int64_t evalBatches() const;
  rt::Status evalBatch(int64_t i, std::vector<rt::HostTensor> &out,
                       int64_t &valid);

  // Checks every label of `input` read from files: each must be in
  // [0, classes) or be `ignoreIndex`. The first that is not is an error
  // naming the file, the sample (its index in the file, which the loss
  // kernel, seeing one batch, cannot give) and the value, with how many
  // there are. A synthetic source, or an input it does not feed, passes.
  rt::Status checkLabels(const std::string &input, int64_t classes,
                         std::optional<int64_t> ignoreIndex) const;

  // The index in specs() of the input holding class labels: Fashion-MNIST's
  // label input, or else the integer input with `classes` > 0; -1 when no
  // input, or more than one, has classes.
  int labelInput() const;

  // S for a file source; 0 for a synthetic one.
  int64_t samples() const { return samples_; }
  // The CRC-32 of the samples as the steps get them (converted to the
  // inputs' types), in file order; 0 for a synthetic source. Data-parallel
  // ranks compare it (RankAgreement.h).
  uint32_t checksum() const;
  const std::vector<InputSpec> &specs() const { return specs_; }

private:
  // The S samples of one input, converted once. A sample is either
  // `sampleBytes` bytes in the input's dtype, or (when `lut` is set) one byte
  // per element indexing `lut`, 256 values in the input's dtype: how
  // Fashion-MNIST's pixels and labels are kept without widening 60000 images
  // to f32.
  struct Column {
    std::vector<uint8_t> bytes;
    size_t sampleBytes = 0;
    std::vector<uint8_t> lut;
    std::string source; // for messages: "DIR/x.npy (input 'x')"
  };

  BatchSource() = default;
  // Checks S >= B once the samples are read; `source` names the data.
  rt::Status checkSampleCount(const std::string &source) const;
  void fillSynthetic(int64_t batch, size_t input, rt::HostTensor &t) const;
  // The cycled synthetic batch of `step`; null when the source holds none.
  const std::vector<rt::HostTensor> *heldBatch(int64_t step) const;
  // Fills every input with the samples `rows_` lists.
  void fillRows(std::vector<rt::HostTensor> &out) const;

  std::vector<InputSpec> specs_;
  std::vector<Column> columns_; // file sources only
  // checksum()'s, made once: the columns do not change, and a program's
  // ranks compare it at every load of a checkpoint or state.
  mutable std::optional<uint32_t> checksum_;
  int64_t samples_ = 0;
  int64_t batchSize_ = 0; // file sources only
  uint64_t seed_ = 0;
  bool fromFiles_ = false;
  bool shuffle_ = false;
  uint64_t shuffleSeed_ = 0;
  // The epoch whose order_ is cached (-1: none), and the sample of each row
  // of the batch being filled.
  int64_t orderEpoch_ = -1;
  std::vector<int64_t> order_;
  std::vector<int64_t> rows_;
  // A synthetic source's batches drawn once and cycled (empty: drawn per
  // step).
  std::vector<std::vector<rt::HostTensor>> cycle_;
};

// The training and test splits of --data DIR|fashion-mnist and --test-data,
// as amp-run and amp-exec open them.
struct FileData {
  std::unique_ptr<BatchSource> train, test;
  bool shuffled = false;
};

// A directory holds IDX data when it has the train images, compressed or
// not (the names readFashionMnist reads).
bool isIdxDirectory(const std::string &dir);

// Opens `data` (fashion-mnist or a directory: IDX files, whose test split is
// evaluated, or .npy files) and `testData` (.npy files, not with IDX data);
// the training split is shuffled each epoch from `seed` when `shuffle` says
// so (default: for IDX data). An error starts with the flag it is about.
// With `openTest` false the test split is not read (a data-parallel rank
// other than 0, which does not evaluate).
rt::Status openFileData(const std::string &data, const std::string &testData,
                        std::optional<bool> shuffle, uint64_t seed,
                        const std::vector<InputSpec> &specs, FileData &d,
                        bool openTest = true);

// Checks the labels of `data` against the classes of the losses they feed
// (the step's), once, before any step: a bad one is named by its sample
// and the flag of its split (--data, --test-data).
rt::Status checkDataLabels(const rt::StepInfo &step, const FileData &data);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_TRAINDATA_H
