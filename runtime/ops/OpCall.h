//===- OpCall.h - one kernel call, as every backend receives it -----------===//
//
// The call a Session builds for each kernel of a Program: the op, its
// attributes and its operands as views. The checks (Check.h) and every
// backend (runtime/cpu, runtime/cuda) take this type; a backend only adds
// what it builds for a call when it prepares it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_OPCALL_H
#define AMPC_RUNTIME_OPS_OPCALL_H

#include "runtime/Tensor.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace ampc::rt::ops {

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

// What a backend builds once for a call's shapes and dtypes (a oneDNN
// primitive on the CPU), so that running the call builds nothing.
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
  // Set when a backend prepares the call; a call without it builds what it
  // needs each run.
  std::shared_ptr<const PreparedKernel> prepared;
};

// An optional input is there when the call lists it and flags it present.
inline bool hasInput(const OpCall &call, size_t i) {
  return i < call.inputs.size() && i < call.present.size() && call.present[i];
}

// Whether a variadic op's last input is its optional skip: an i1 scalar,
// which none of the float operands before it can be (check_finite).
inline bool endsWithSkip(const OpCall &call) {
  return !call.inputs.empty() && call.inputs.back().dtype == DType::I1 &&
         call.inputs.back().rank() == 0;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_OPCALL_H
