//===- LossArgs.h - what a loss kernel needs of its labels ----------------===//
//
// Passed by value to the kernels of Softmax.cu and Losses.cu, so host and
// device see the same layout: plain C types only.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_LOSSARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_LOSSARGS_H

#include <stdint.h>

namespace ampc_cuda {

struct LossArgs {
  const void *labels;  // [samples], i64 or i32
  const void *weights; // [classes] class weights, or null
  void *loss;          // reduction "none": the [samples] loss, else null
  double *perSample;   // otherwise: [2 * samples] losses then weights
  int64_t samples;     // N * D
  int64_t classes;     // C
  int64_t ignoreIndex;
  int32_t hasIgnore;
  int32_t labelType; // runtime/DType.h codes
  int32_t weightType;
  int32_t lossType;
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_LOSSARGS_H
