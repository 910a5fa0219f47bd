//===- ElementwiseProgram.h - the table the elementwise kernel runs ------===//
//
// The layout shared by the host (runtime/cuda/Elementwise.cpp builds it at
// prepare time and uploads it once) and the device interpreter
// (kernels/Elementwise.cu): a header, one EwInput per kernel input, then one
// EwStep per step of the chain. Plain C++ with fixed-size fields so both
// compilers lay it out alike.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ELEMENTWISEPROGRAM_H
#define AMPC_RUNTIME_CUDA_KERNELS_ELEMENTWISEPROGRAM_H

#include <stdint.h>

namespace ampc_cuda {

constexpr int kEwMaxRank = 8;   // output dims after merging contiguous runs
constexpr int kEwMaxSlots = 16; // step results alive at once
constexpr int kEwMaxVecInputs = 8;
constexpr int kEwVec = 8; // elements per thread on the vectorized path

// Step op codes: ops::ew::Kind's values (runtime/ops/Elementwise.def).
enum EwOp : int32_t {
#define AMPC_EW(name, kind, sig, expr) kEw##kind,
#include "runtime/ops/Elementwise.def"
};

// Where a value is held while computing: f32 registers for f32/f16/bf16,
// f64 for f64, int64 for i64/i32/i1 (the CPU's compute domains).
enum EwDom : int32_t { kDomF = 0, kDomD = 1, kDomI = 2 };

// How an input's element for output element i is found.
enum EwMode : int32_t {
  kModeUnused = 0,
  kModeContig = 1, // same shape as the output: element i
  kModeScalar = 2, // one element: element 0
  kModeStrided = 3 // sum over the header's dims of index * strides[d]
};

struct EwHeader {
  int64_t n;                // output elements
  int64_t dims[kEwMaxRank]; // merged output dims, outermost first
  void *out;
  int32_t rank;
  int32_t outDtype;
  int32_t numInputs;
  int32_t numSteps;
  int32_t resultSlot; // the slot holding the last step's result
  int32_t strided;    // some input is kModeStrided
};

struct EwInput {
  const void *ptr;
  int64_t strides[kEwMaxRank]; // elements, 0 where broadcast
  int32_t dtype;
  int32_t mode;
};

struct EwStep {
  int32_t op;
  int32_t dtype;  // the step's result dtype (DType code)
  int32_t dom;    // EwDom of dtype
  int32_t srcDom; // cast, comparison, logical op: its operands' domain
  // >= 0: kernel input k; < 0: slot -ref - 1.
  int32_t operand[3];
  int32_t result; // slot written
  int32_t arity;  // operands read: 1, 2 or 3
  int32_t geluTanh, hasMin, hasMax;
  double alpha, beta, min, max; // float attributes as ops::ew parses them
  int64_t imin, imax;     // clip bounds of an integer step (intBound)
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_ELEMENTWISEPROGRAM_H
