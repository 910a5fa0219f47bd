//===- ComputeType.cuh - the CPU backend's compute type per storage type --===//
//
// The CPU kernels compute in f32 for f32/f16/bf16 tensors and in f64 for
// f64 ones (KernelHelpers.h's computeView). Compute<T> gives that type and
// the exact conversions in and (rounding to nearest even) out, and mul/add
// round each operation so that nvcc does not contract a * b + c into an FMA
// the CPU code does not perform.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_COMPUTETYPE_CUH
#define AMPC_RUNTIME_CUDA_KERNELS_COMPUTETYPE_CUH

#include "runtime/cuda/kernels/Common.cuh"

namespace ampc_cuda {

template <typename T> struct Compute { using C = float; };
template <> struct Compute<double> { using C = double; };

// Storage -> compute type C (exact).
template <typename C, typename T> __device__ __forceinline__ C toC(T v) {
  return static_cast<C>(toF32(v));
}
template <> __device__ __forceinline__ double toC<double, double>(double v) {
  return v;
}
template <> __device__ __forceinline__ float toC<float, double>(double v) {
  return static_cast<float>(v);
}

// Compute type -> storage (one rounding, nearest even).
template <typename T> __device__ __forceinline__ T fromC(float v) {
  return fromF32<T>(v);
}
template <> __device__ __forceinline__ double fromC<double>(float v) {
  return v;
}
template <typename T> __device__ __forceinline__ T fromC(double v);
template <> __device__ __forceinline__ float fromC<float>(double v) {
  return static_cast<float>(v);
}
template <> __device__ __forceinline__ __half fromC<__half>(double v) {
  return __double2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 fromC<__nv_bfloat16>(double v) {
  return __double2bfloat16(v);
}
template <> __device__ __forceinline__ double fromC<double>(double v) {
  return v;
}

__device__ __forceinline__ float mulRn(float a, float b) {
  return __fmul_rn(a, b);
}
__device__ __forceinline__ double mulRn(double a, double b) {
  return __dmul_rn(a, b);
}
__device__ __forceinline__ float addRn(float a, float b) {
  return __fadd_rn(a, b);
}
__device__ __forceinline__ double addRn(double a, double b) {
  return __dadd_rn(a, b);
}
__device__ __forceinline__ float subRn(float a, float b) {
  return __fsub_rn(a, b);
}
__device__ __forceinline__ double subRn(double a, double b) {
  return __dsub_rn(a, b);
}

// Warp-wide sum; every lane gets the result.
template <typename C> __device__ __forceinline__ C warpSum(C v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_COMPUTETYPE_CUH
