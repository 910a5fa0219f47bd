//===- CudaTestUtil.h - running one op on the CPU and on CUDA -------------===//
//
// A kernel test builds an OpCase (op, attributes, host inputs, output
// types), and expectCudaMatchesCpu runs it through cpu::runKernel and
// through the CUDA backend's prepare + launch, then compares every output
// element: integers and i1 exactly, floats within a tolerance for the
// output's dtype, inf and NaN at the same places. Tests start with
// AMPC_SKIP_WITHOUT_GPU(), which skips them with the reason on machines
// without a usable GPU, or with AMPC_REQUIRE_GPU=1 (the GPU machine's runs,
// where an all-skipped suite must not pass) fails them with that reason.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H
#define AMPC_TEST_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H

#include "../../TestDevice.h"
#include "../KernelAttrs.h"
#include "runtime/Tensor.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cuda/CudaDevice.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt::cuda::test {

// The GPU the tests share (device 0), opened once; null without one, and
// then `why` says what is missing.
CudaDevice *testDevice(std::string *why = nullptr);

#define AMPC_SKIP_WITHOUT_GPU()                                                \
  do {                                                                         \
    std::string ampcWhy_;                                                      \
    if (!::ampc::rt::cuda::test::testDevice(&ampcWhy_)) {                      \
      if (::ampc::unittest::gpuRequired())                                     \
        GTEST_FAIL() << "no usable CUDA GPU: " << ampcWhy_                     \
                     << " (AMPC_REQUIRE_GPU=1: a failure, not a skip)";        \
      GTEST_SKIP() << "no usable CUDA GPU: " << ampcWhy_;                      \
    }                                                                          \
  } while (0)

// Sets (or, with nullopt, unsets) an environment variable for one scope.
class ScopedEnv {
public:
  ScopedEnv(const char *name, std::optional<std::string> value) : name_(name) {
    if (const char *old = std::getenv(name))
      old_ = old;
    if (value)
      setenv(name, value->c_str(), 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }

private:
  const char *name_;
  std::optional<std::string> old_;
};

struct HostTensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint8_t> bytes;
  bool present = true; // false: an absent optional input

  static HostTensor absent();
  // Shape and dtype only (outputs): bytes are zero.
  static HostTensor empty(DType dtype, Shape shape);
  // Uniform in [lo, hi), rounded to the dtype; ints uniform in [lo, hi]
  // truncated, i1 0/1. Deterministic in `seed`.
  static HostTensor random(DType dtype, Shape shape, uint64_t seed,
                           double lo = -1, double hi = 1);
  // From values given as doubles, rounded to the dtype as the CPU backend
  // stores them.
  static HostTensor fromValues(DType dtype, Shape shape,
                               const std::vector<double> &values);
  int64_t numElements() const { return rt::numElements(shape); }
  double at(int64_t i) const; // element i as f64
  TensorView view() const;    // data points at bytes (null if empty)
};

using rt::test::gemmAttrs;

struct OpCase {
  std::string op;
  Attrs attrs;
  std::vector<ops::FusedStep> steps; // "fused" only
  std::vector<HostTensor> inputs;
  std::vector<HostTensor> outputs; // dtype and shape; the bytes are ignored
  uint64_t rngCounter = 0;         // dropout: the step number
  // Output o overlays input inPlace[o] (optimizer updates, elementwise ops
  // run in place); -1 or missing: its own memory.
  std::vector<int> inPlace;
  // Every tensor starts this many bytes past a 256-byte boundary (on both
  // backends). 8 keeps every dtype naturally aligned but no tensor 16-byte
  // aligned, so kernels with 16-byte vector accesses take their scalar path.
  size_t misalign = 0;
};

// Absolute and relative tolerance: |cuda - cpu| <= atol + rtol * |cpu|.
// Negative: the default for the output's dtype (f64 1e-12, f32 1e-5,
// f16 2e-3, bf16 1.6e-2 relative; atol the same).
struct Tolerance {
  double atol = -1, rtol = -1;
};

Status runCpu(const OpCase &c, std::vector<HostTensor> &outputs);
// Prepares the op as a group of one (or, with several cases, as one group
// of consecutive calls, which the op's canGroup must accept), launches it
// on a fresh stream, synchronizes and copies the outputs back.
Status runCuda(CudaDevice &device, const std::vector<OpCase> &group,
               std::vector<std::vector<HostTensor>> &outputs,
               bool allowTf32 = false);

// Runs `c` on both and compares; a failure names the op, the output, the
// element index and both values (at most 10 elements are listed).
void expectCudaMatchesCpu(const OpCase &c, Tolerance tol = {});
// The same for a group (optimizer updates): each case against its own CPU
// run.
void expectCudaGroupMatchesCpu(const std::vector<OpCase> &group,
                               Tolerance tol = {});
// "add f16 [2, 3]": names a case in a failure message.
std::string caseLabel(const std::string &op, DType dtype, const Shape &shape);

// Compares two host tensors of the same type; `what` prefixes failures.
void expectClose(const HostTensor &expected, const HostTensor &actual,
                 Tolerance tol, const std::string &what);

} // namespace ampc::rt::cuda::test

#endif // AMPC_TEST_UNITTESTS_RUNTIME_CUDA_CUDATESTUTIL_H
