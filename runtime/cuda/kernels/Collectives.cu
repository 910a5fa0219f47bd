//===- Collectives.cu - a bucket's gradients into and out of NCCL ---------===//
//
// all_reduce_start / all_reduce_wait on the GPU (runtime/cuda/
// Collectives.cpp): NCCL sums the bucket in f32, so gradients are widened
// into an f32 buffer before the sum, and each mean is that sum times
// 1/world_size rounded once into its gradient's type after it, as the CPU
// backend does. With the step's skip flag set (gradient accumulation's
// steps that only add) a mean is the rank's own gradient instead: the flag
// is read here, on the device, as everything of the step is.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KernelNames.def"

namespace ampc_cuda {
namespace {

template <typename T>
__device__ void widen(const T *in, float *out, int64_t n) {
  AMPC_GRID_STRIDE(i, n) { out[i] = toF32(in[i]); }
}

// out = skip ? own : sum * inverse, rounded once to T; `own` is the
// rank's own gradient as the exchange buffer holds it, f32 or (a 16-bit
// buffer) T.
template <typename T>
__device__ void finish(const float *sum, const void *own, int ownIsF32,
                       const uint8_t *skip, float inverse, T *out,
                       int64_t n) {
  const bool mine = skip && *skip != 0;
  AMPC_GRID_STRIDE(i, n) {
    float v;
    if (!mine)
      v = sum[i] * inverse;
    else if (ownIsF32)
      v = static_cast<const float *>(own)[i];
    else
      v = toF32(static_cast<const T *>(own)[i]);
    out[i] = fromF32<T>(v);
  }
}

} // namespace
} // namespace ampc_cuda

#define AMPC_EXCHANGE(SUF, T)                                                  \
  extern "C" __global__ void ampc_exchange_widen_##SUF(const T *in,            \
                                                       float *out, int64_t n) { \
    ampc_cuda::widen<T>(in, out, n);                                           \
  }                                                                            \
  extern "C" __global__ void ampc_exchange_finish_##SUF(                       \
      const float *sum, const void *own, int ownIsF32, const uint8_t *skip,    \
      float inverse, T *out, int64_t n) {                                      \
    ampc_cuda::finish<T>(sum, own, ownIsF32, skip, inverse, out, n);           \
  }

AMPC_VARIANTS_ROW(AMPC_EXCHANGE)
