//===- Accumulate.cuh - the compute type of a dtype's sums and scans ------===//
//
// Shared by Reduction.cu and Scan.cu, as the CPU's compute types: floats in
// f32 (f64 for f64), integers in int64.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ACCUMULATE_CUH
#define AMPC_RUNTIME_CUDA_KERNELS_ACCUMULATE_CUH

#include "runtime/cuda/kernels/Common.cuh"

#include <type_traits>

namespace ampc_cuda {

template <typename T> struct AccOf { using type = float; };
template <> struct AccOf<double> { using type = double; };
template <> struct AccOf<int64_t> { using type = int64_t; };
template <> struct AccOf<int32_t> { using type = int64_t; };

// a + b in the compute type; int64 wraps (two's complement), as the CPU's
// kh::wrappingAdd.
template <typename Acc>
__device__ __forceinline__ Acc wrappingAdd(Acc a, Acc b) {
  if constexpr (std::is_integral<Acc>::value)
    return static_cast<Acc>(static_cast<unsigned long long>(a) +
                            static_cast<unsigned long long>(b));
  else
    return a + b;
}

template <typename Acc, typename T> __device__ __forceinline__ Acc load(T v) {
  if constexpr (sizeof(Acc) == 4)
    return toF32(v);
  else
    return static_cast<Acc>(v);
}
template <typename T, typename Acc> __device__ __forceinline__ T store(Acc v) {
  if constexpr (sizeof(Acc) == 4)
    return fromF32<T>(v);
  else
    return static_cast<T>(v);
}

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_ACCUMULATE_CUH
