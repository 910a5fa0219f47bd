//===- Losses.cuh - one sample's label and loss, as the CPU forms them ----===//
//
// A label equal to ignore_index contributes loss 0 and weight 0. A label
// outside [0, C) that is not ignore_index is a run-time error on the CPU;
// a kernel cannot fail mid-graph, so here it contributes NaN loss and NaN
// weight: its own loss (reduction "none"), the summed and mean loss, and
// the gradients it reaches are NaN, which the loss-scale overflow check
// then reports as a skipped step.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_LOSSES_CUH
#define AMPC_RUNTIME_CUDA_KERNELS_LOSSES_CUH

#include "runtime/cuda/kernels/LossArgs.h"
#include "runtime/cuda/kernels/Rows.cuh"

namespace ampc_cuda {

// Element i of an integer label tensor (i64 or i32; anything else by
// value through f64).
__device__ __forceinline__ int64_t loadLabel(const void *p, int dtype,
                                             int64_t i) {
  if (dtype == kI64)
    return static_cast<const int64_t *>(p)[i];
  if (dtype == kI32)
    return static_cast<const int32_t *>(p)[i];
  return static_cast<int64_t>(loadAsF64(p, dtype, i));
}

enum LabelKind : int { kLabelValid = 0, kLabelIgnored = 1, kLabelBad = 2 };

__device__ __forceinline__ int labelKind(const LossArgs &la, int64_t s,
                                         int64_t &label) {
  label = loadLabel(la.labels, la.labelType, s);
  if (la.hasIgnore && label == la.ignoreIndex)
    return kLabelIgnored;
  if (label < 0 || label >= la.classes)
    return kLabelBad;
  return kLabelValid;
}

__device__ __forceinline__ double classWeight(const LossArgs &la,
                                              int64_t label) {
  return la.weights ? loadAsF64(la.weights, la.weightType, label) : 1.0;
}

// Sample s: -lp * weight, into la.loss ("none") or la.perSample.
__device__ __forceinline__ void sampleLoss(const LossArgs &la, int64_t s,
                                           int kind, int64_t label, double lp) {
  double v = 0.0, w = 0.0;
  if (kind == kLabelBad) {
    v = w = __longlong_as_double(0x7ff8000000000000LL);
  } else if (kind == kLabelValid) {
    w = classWeight(la, label);
    v = -lp * w;
  }
  if (la.perSample) {
    la.perSample[s] = v;
    la.perSample[la.samples + s] = w;
  } else {
    storeFromF64(la.loss, la.lossType, s, v);
  }
}

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_LOSSES_CUH
