//===- Common.cuh - what every kernels/*.cu shares ------------------------===//
//
// Element loads and stores that convert through f32 with round-to-nearest-
// even (the rounding the CPU backend's TypedIO uses, so results agree to the
// last bit wherever the arithmetic is the same), the dtype codes of
// runtime/DType.h, and grid-stride loops.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_COMMON_CUH
#define AMPC_RUNTIME_CUDA_KERNELS_COMMON_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace ampc_cuda {

// runtime/DType.h's enum class DType values.
enum DTypeCode : int {
  kF32 = 0,
  kF16 = 1,
  kBF16 = 2,
  kF64 = 3,
  kI64 = 4,
  kI32 = 5,
  kI1 = 6
};

__device__ __forceinline__ float toF32(float v) { return v; }
__device__ __forceinline__ float toF32(__half v) { return __half2float(v); }
__device__ __forceinline__ float toF32(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T> __device__ __forceinline__ T fromF32(float v);
template <> __device__ __forceinline__ float fromF32<float>(float v) {
  return v;
}
template <> __device__ __forceinline__ __half fromF32<__half>(float v) {
  return __float2half_rn(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromF32<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}

// Reads element i of a tensor of any dtype as f64 / f32 (ints and bools
// converted; i1 is one byte, 0 or 1).
__device__ __forceinline__ double loadAsF64(const void *p, int dtype,
                                            int64_t i) {
  switch (dtype) {
  case kF32:
    return static_cast<const float *>(p)[i];
  case kF16:
    return __half2float(static_cast<const __half *>(p)[i]);
  case kBF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  case kF64:
    return static_cast<const double *>(p)[i];
  case kI64:
    return static_cast<double>(static_cast<const int64_t *>(p)[i]);
  case kI32:
    return static_cast<const int32_t *>(p)[i];
  default:
    return static_cast<const uint8_t *>(p)[i] != 0;
  }
}
__device__ __forceinline__ float loadAsF32(const void *p, int dtype,
                                           int64_t i) {
  switch (dtype) {
  case kF32:
    return static_cast<const float *>(p)[i];
  case kF16:
    return __half2float(static_cast<const __half *>(p)[i]);
  case kBF16:
    return __bfloat162float(static_cast<const __nv_bfloat16 *>(p)[i]);
  default:
    return static_cast<float>(loadAsF64(p, dtype, i));
  }
}

// Stores v into element i, rounding to the dtype (nearest even for floats,
// truncation toward zero for ints as a C++ cast does, != 0 for i1).
__device__ __forceinline__ void storeFromF64(void *p, int dtype, int64_t i,
                                             double v) {
  switch (dtype) {
  case kF32:
    static_cast<float *>(p)[i] = static_cast<float>(v);
    break;
  case kF16:
    static_cast<__half *>(p)[i] = __double2half(v);
    break;
  case kBF16:
    static_cast<__nv_bfloat16 *>(p)[i] = __double2bfloat16(v);
    break;
  case kF64:
    static_cast<double *>(p)[i] = v;
    break;
  case kI64:
    static_cast<int64_t *>(p)[i] = static_cast<int64_t>(v);
    break;
  case kI32:
    static_cast<int32_t *>(p)[i] = static_cast<int32_t>(v);
    break;
  default:
    static_cast<uint8_t *>(p)[i] = v != 0;
    break;
  }
}
__device__ __forceinline__ void storeFromF32(void *p, int dtype, int64_t i,
                                             float v) {
  switch (dtype) {
  case kF32:
    static_cast<float *>(p)[i] = v;
    break;
  case kF16:
    static_cast<__half *>(p)[i] = __float2half_rn(v);
    break;
  case kBF16:
    static_cast<__nv_bfloat16 *>(p)[i] = __float2bfloat16_rn(v);
    break;
  default:
    storeFromF64(p, dtype, i, v);
    break;
  }
}

#define AMPC_GRID_STRIDE(i, n)                                                 \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);   \
       i += int64_t(blockDim.x) * gridDim.x)

// Block-wide sum of one float per thread (blockDim.x a multiple of 32, at
// most 1024); every thread gets the result. `scratch` holds 32 floats.
__device__ __forceinline__ float blockSum(float v, float *scratch) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads(); // scratch may still be read by a previous call
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? scratch[lane] : 0.f;
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

__device__ __forceinline__ float blockMax(float v, float *scratch) {
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? scratch[lane] : -INFINITY;
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_COMMON_CUH
