//===- TrainData.h - the batches a training run feeds its inputs ----------===//
//
// `amp-run --mode train` (and amp-exec) feed one batch per step to the
// train_step's data inputs, either from .npy files or drawn from a seed.
// This library links the runtime only (no MLIR), so both tools share it.
//
// Both sources are deterministic: the batch of step s depends only on the
// files (or the seed) and s, so a run resumed from a checkpoint at step s sees
// the same data as an uninterrupted one.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_TRAINDATA_H
#define AMPC_TOOLS_AMPRUN_TRAINDATA_H

#include "runtime/io/TensorFile.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ampc::tools {

// One data input of the train step. shape[0] is the batch size. `classes` > 0
// marks an integer label input whose synthetic values are drawn in
// [0, classes); labels read from files are not range-checked here (a loss
// may have an ignore_index; its kernel checks the values).
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

class BatchSource {
public:
  // DIR holds one npyFileNameFor(name) per input, samples on axis 0: a file
  // of shape [S, shape[1:]...] with S >= 1, the same S in every file. The
  // file's dtype must be the input's, except that f32/f64 files convert to a
  // float input's type (rounding once) and i32/i64 files to an integer
  // input's type (an i64 value that does not fit i32 is an error). Files
  // for no input are ignored. The files are read and converted once here.
  static rt::Status openDirectory(const std::string &dir,
                                  std::vector<InputSpec> specs,
                                  std::unique_ptr<BatchSource> &out);

  // Batches drawn from `seed`: floats ~ N(0, 1), labels uniform in
  // [0, classes), other integers (and i1) 0. Step s is a function of the
  // seed and s only. The uniform bits come from splitmix64, so they are the
  // same on every platform; the normals go through Box-Muller (log, sqrt,
  // cos, sin), so they agree across C libraries to within their rounding.
  static rt::Status synthetic(uint64_t seed, std::vector<InputSpec> specs,
                              std::unique_ptr<BatchSource> &out);

  // Fills `out` with one tensor per spec, in spec order, with the spec's
  // name, dtype and shape, holding the batch of `step` (>= 0). From files,
  // step s takes samples (s*B + k) mod S for k in [0, B): batches run through
  // the files in order and wrap around, so S need not be a multiple of B.
  rt::Status batch(int64_t step, std::vector<rt::HostTensor> &out);

  // S for a directory source; 0 for a synthetic one.
  int64_t samples() const { return samples_; }
  const std::vector<InputSpec> &specs() const { return specs_; }

private:
  BatchSource() = default;
  void fillSynthetic(int64_t step, size_t input, rt::HostTensor &t) const;
  void fillFromFile(int64_t step, size_t input, rt::HostTensor &t) const;

  std::vector<InputSpec> specs_;
  // Per input, all S samples converted to the input's dtype (file sources).
  std::vector<rt::HostTensor> data_;
  int64_t samples_ = 0;
  uint64_t seed_ = 0;
  bool fromFiles_ = false;
};

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_TRAINDATA_H
