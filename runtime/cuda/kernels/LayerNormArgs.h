//===- LayerNormArgs.h - layer norm kernel arguments, host and device -----===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_LAYERNORMARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_LAYERNORMARGS_H

#include <stdint.h>

namespace ampc_cuda {

// scale and bias (bias may be null), each element k of the normalized
// shape read at idx[k] (null idx: at k); dtypes as runtime/DType.h codes.
struct LnParams {
  const void *scale, *bias;
  const int32_t *scaleIdx, *biasIdx;
  int32_t scaleType, biasType;
};

// The saved per-row statistics layer_norm_grad reads.
struct LnStats {
  const void *mean, *invStd;
  int32_t meanType, invStdType;
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_LAYERNORMARGS_H
