//===- OptimizerTables.h - tables the multi-tensor kernels read -----------===//
//
// Shared by runtime/cuda/Optimizers.cpp, which fills and uploads them when a
// kernel is prepared, and kernels/Optimizers.cu, which reads them: plain
// fixed-width fields only, so host and device agree on the layout.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_OPTIMIZERTABLES_H
#define AMPC_RUNTIME_CUDA_KERNELS_OPTIMIZERTABLES_H

#include <stdint.h>

namespace ampc_cuda {

// Elements one block takes at a time: a multiple of every vector width (2,
// 4 and 8 elements), so a chunk of an aligned tensor starts aligned.
constexpr int64_t kOptChunk = 4096;
constexpr unsigned kOptThreads = 256;

// One parameter of a multi-tensor update. in[]: param, grad, then the
// state tensors; out[]: new param, then the new state tensors. Each out[k]
// is exactly the input it replaces or disjoint from every input. The
// gradient has the parameter's dtype or, for an f32 parameter, f16/bf16.
struct UpdateEntry {
  uint64_t in[4];
  uint64_t out[3];
  uint64_t workingCopy; // 0: none
  int64_t n;
  int64_t firstChunk; // chunks of the entries before this one
  int32_t vec;        // every pointer 16-byte aligned: 16-byte accesses
  int32_t scalars;    // its ScalarSet
  int32_t gradDtype;  // DTypeCode of in[1]
  int32_t pad;
};

// The scalar inputs of one update call: lr (f32 or f64), step (i64; 0 when
// the op has none), skip (i1; 0 when absent) and loss_scale (f32; 0 when
// absent: the gradient is read as grad * (1 / loss_scale)). Calls of a
// group usually share one set.
struct ScalarSet {
  uint64_t lr, step, skip, lossScale;
  int32_t lrDtype; // DTypeCode
  int32_t pad;
};

// One gradient that check_finite reads.
struct FiniteEntry {
  uint64_t g;
  int64_t n;
  int64_t firstChunk;
  int32_t dtype; // DTypeCode
  int32_t vec;
};

// The attribute-derived constants of each update, in double: the kernel
// rounds them to its compute type as the CPU kernel does.
struct SgdParams {
  double weightDecay;
};
struct MomentumParams {
  double alpha, beta, normCoefficient;
  int32_t nesterov;
};
struct AdamParams {
  double alpha, beta, oneMinusAlpha, oneMinusBeta, epsilon, normCoefficient,
      normCoefficientPost, weightDecay;
  int32_t pytorch;
};
struct AdagradParams {
  double decayFactor, epsilon, normCoefficient;
};
struct ScheduleParams {
  double baseLr, gamma, minLr;
  int64_t stepSize, totalSteps;
  int32_t kind; // 0 constant, 1 step, 2 cosine
};
struct ScaleParams {
  double growth, backoff, minScale, maxScale;
  int64_t growthInterval, decrEveryN;
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_OPTIMIZERTABLES_H
