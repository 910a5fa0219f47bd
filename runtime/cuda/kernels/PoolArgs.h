//===- PoolArgs.h - pooling geometry passed to the pooling kernels --------===//
//
// Plain int64 fields only, so host code (Pooling.cpp) and device code
// (kernels/Pooling.cu) lay the struct out identically; it is passed to the
// kernels by value. The fields are those of ops::PoolPlan.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_POOLARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_POOLARGS_H

#include <stdint.h>

namespace ampc_cuda {

struct PoolArgs {
  int64_t n, c, h, w;
  int64_t kh, kw, sh, sw, dh, dw;
  int64_t pt, pl, pb, pr;
  int64_t oh, ow;
  int64_t countIncludePad; // 0 or 1
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_POOLARGS_H
