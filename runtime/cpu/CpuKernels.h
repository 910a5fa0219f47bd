//===- CpuKernels.h - the CPU backend's kernels ---------------------------===//
//
// One entry per graph op (by its name without the dialect prefix: "gemm",
// "conv2d", ...) plus "fused": a chain of elementwise graph ops run as one
// pass over memory. Every kernel can be checked without data (at Program
// load time) and then run any number of times.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_CPUKERNELS_H
#define AMPC_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <memory>
#include <string>
#include <vector>

namespace ampc::rt::cpu {

class ThreadPool;

// One step of a fused elementwise kernel. Operand k refers to kernel input
// `operands[k]` when >= 0, and to the result of step `-operands[k] - 1`
// when < 0. Every step's result has the kernel output's shape and its own
// dtype; inputs broadcast (numpy rules) to that shape. Intermediate results
// are rounded to their dtype exactly as if they had been stored, so a fused
// chain gives bit-identical results to the same ops run one by one.
struct FusedStep {
  std::string op; // "add", "relu", "cast", "where", ...
  Attrs attrs;
  std::vector<int> operands;
  DType dtype = DType::F32;
};

// What a kernel builds once for a call's shapes and dtypes (a oneDNN
// primitive) when a session prepares its kernels, so that running the call
// builds nothing.
struct PreparedKernel {
  virtual ~PreparedKernel() = default;
};

struct OpCall {
  std::string op;                 // graph op name, or "fused"
  const Attrs *attrs = nullptr;   // never null
  std::vector<TensorView> inputs; // an absent optional input has rank -1:
                                  // see `present`
  std::vector<bool> present;      // one per input
  std::vector<TensorView> outputs;
  const std::vector<FusedStep> *steps = nullptr; // for "fused" only
  // Dropout's random stream: the seed attribute is combined with this
  // counter (the step number), so each step draws a fresh mask.
  uint64_t rngCounter = 0;
  // Set by prepareKernel; a call without it builds what it needs each run.
  std::shared_ptr<const PreparedKernel> prepared;
};

struct CpuContext {
  ThreadPool *pool = nullptr; // may be null: run on the calling thread
};

// Checks that the op exists and that its inputs, outputs, dtypes, shapes and
// attributes are consistent. Data pointers are not looked at. The message
// names the op and the mismatch.
Status checkKernel(const OpCall &call);

// Builds, for a call that passed checkKernel, what its kernel would
// otherwise build on every run (nothing for most kernels).
Status prepareKernel(OpCall &call);

// Runs a call that passed checkKernel. Outputs never alias inputs, except
// for elementwise kernels ("fused" and the ops isElementwiseKernel names),
// whose output may be exactly one of their inputs, and the optimizer
// updates (isInPlaceUpdateKernel), whose outputs may each be exactly the
// input they replace (same address, shape and dtype: updated in place).
Status runKernel(const OpCall &call, CpuContext &ctx);

// True for "fused" and the elementwise ops: kernels that read element i of
// each input before writing element i, so their output may be an input.
bool isElementwiseKernel(const std::string &op);

// True for the optimizer updates (sgd_update, momentum_update, ...): each
// reads element i of every input before writing element i of any output,
// so every output may overlay the input it replaces.
bool isInPlaceUpdateKernel(const std::string &op);

// The op names this backend implements (for docs and for tests).
std::vector<std::string> kernelNames();

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_CPUKERNELS_H
