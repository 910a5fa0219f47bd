//===- Rows.cuh - rows held by a warp or a block, 16-byte loads -----------===//
//
// The row kernels (softmax, layer norm) keep a row of up to 1024 elements in
// the registers of one warp: lane l holds K elements. With `vec` (the row
// length a multiple of V = 16 / sizeof(T) and the base 16-byte aligned, so
// every row is) lane l holds the V-element vectors (c * 32 + l) for
// c < K / V, loaded with one 16-byte access each; otherwise elements
// c * 32 + l. Elements past the row's end hold `fill`.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_ROWS_CUH
#define AMPC_RUNTIME_CUDA_KERNELS_ROWS_CUH

#include "runtime/cuda/kernels/Common.cuh"

namespace ampc_cuda {

template <typename T> struct VecWidth {
  static constexpr int value = 16 / sizeof(T);
};

// Element index of register k of lane `lane`.
template <typename T, int K>
__device__ __forceinline__ int64_t warpRowIndex(int k, int lane, bool vec) {
  constexpr int V = VecWidth<T>::value;
  return vec ? (int64_t(k / V) * 32 + lane) * V + k % V
             : int64_t(k) * 32 + lane;
}

template <typename T, int K>
__device__ __forceinline__ void warpLoad(float (&v)[K], const T *row,
                                         int64_t len, bool vec, float fill) {
  constexpr int V = VecWidth<T>::value;
  const int lane = threadIdx.x & 31;
  if (vec && K >= V) {
#pragma unroll
    for (int c = 0; c < K / V; ++c) {
      int64_t i0 = (int64_t(c) * 32 + lane) * V;
      if (i0 < len) {
        uint4 u = *reinterpret_cast<const uint4 *>(row + i0);
        const T *e = reinterpret_cast<const T *>(&u);
#pragma unroll
        for (int j = 0; j < V; ++j)
          v[c * V + j] = toF32(e[j]);
      } else {
#pragma unroll
        for (int j = 0; j < V; ++j)
          v[c * V + j] = fill;
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int64_t i = int64_t(k) * 32 + lane;
    v[k] = i < len ? toF32(row[i]) : fill;
  }
}

template <typename T, int K>
__device__ __forceinline__ void warpStore(const float (&v)[K], T *row,
                                          int64_t len, bool vec) {
  constexpr int V = VecWidth<T>::value;
  const int lane = threadIdx.x & 31;
  if (vec && K >= V) {
#pragma unroll
    for (int c = 0; c < K / V; ++c) {
      int64_t i0 = (int64_t(c) * 32 + lane) * V;
      if (i0 < len) {
        uint4 u;
        T *e = reinterpret_cast<T *>(&u);
#pragma unroll
        for (int j = 0; j < V; ++j)
          e[j] = fromF32<T>(v[c * V + j]);
        *reinterpret_cast<uint4 *>(row + i0) = u;
      }
    }
    return;
  }
#pragma unroll
  for (int k = 0; k < K; ++k) {
    int64_t i = int64_t(k) * 32 + lane;
    if (i < len)
      row[i] = fromF32<T>(v[k]);
  }
}

__device__ __forceinline__ float warpSum(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
__device__ __forceinline__ float warpMax(float v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ double warpSumD(double v) {
#pragma unroll
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Block-wide double sum (blockDim.x a multiple of 32); every thread gets it.
// `scratch` holds 32 doubles.
__device__ __forceinline__ double blockSumD(double v, double *scratch) {
  v = warpSumD(v);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  __syncthreads();
  if (lane == 0)
    scratch[warp] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) >> 5;
  v = lane < warps ? scratch[lane] : 0.0;
  return warpSumD(v);
}

// Block loops over one row of `len` elements: f(i, value) for each
// element a thread owns, or out[i] = f(i, a[i] [, b[i]]); 16-byte accesses
// when `vec`.
template <typename T, typename F>
__device__ __forceinline__ void blockEach(const T *a, int64_t len, bool vec,
                                          F f) {
  constexpr int V = VecWidth<T>::value;
  if (vec) {
    for (int64_t i0 = int64_t(threadIdx.x) * V; i0 < len;
         i0 += int64_t(blockDim.x) * V) {
      uint4 u = *reinterpret_cast<const uint4 *>(a + i0);
      const T *e = reinterpret_cast<const T *>(&u);
#pragma unroll
      for (int j = 0; j < V; ++j)
        f(i0 + j, toF32(e[j]));
    }
    return;
  }
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    f(i, toF32(a[i]));
}

template <typename T, typename F>
__device__ __forceinline__ void blockEach2(const T *a, const T *b, int64_t len,
                                           bool vec, F f) {
  constexpr int V = VecWidth<T>::value;
  if (vec) {
    for (int64_t i0 = int64_t(threadIdx.x) * V; i0 < len;
         i0 += int64_t(blockDim.x) * V) {
      uint4 ua = *reinterpret_cast<const uint4 *>(a + i0);
      uint4 ub = *reinterpret_cast<const uint4 *>(b + i0);
      const T *ea = reinterpret_cast<const T *>(&ua);
      const T *eb = reinterpret_cast<const T *>(&ub);
#pragma unroll
      for (int j = 0; j < V; ++j)
        f(i0 + j, toF32(ea[j]), toF32(eb[j]));
    }
    return;
  }
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    f(i, toF32(a[i]), toF32(b[i]));
}

template <typename T, typename F>
__device__ __forceinline__ void blockMap(const T *a, T *out, int64_t len,
                                         bool vec, F f) {
  constexpr int V = VecWidth<T>::value;
  if (vec) {
    for (int64_t i0 = int64_t(threadIdx.x) * V; i0 < len;
         i0 += int64_t(blockDim.x) * V) {
      uint4 u = *reinterpret_cast<const uint4 *>(a + i0), o;
      const T *e = reinterpret_cast<const T *>(&u);
      T *r = reinterpret_cast<T *>(&o);
#pragma unroll
      for (int j = 0; j < V; ++j)
        r[j] = fromF32<T>(f(i0 + j, toF32(e[j])));
      *reinterpret_cast<uint4 *>(out + i0) = o;
    }
    return;
  }
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    out[i] = fromF32<T>(f(i, toF32(a[i])));
}

template <typename T, typename F>
__device__ __forceinline__ void blockMap2(const T *a, const T *b, T *out,
                                          int64_t len, bool vec, F f) {
  constexpr int V = VecWidth<T>::value;
  if (vec) {
    for (int64_t i0 = int64_t(threadIdx.x) * V; i0 < len;
         i0 += int64_t(blockDim.x) * V) {
      uint4 ua = *reinterpret_cast<const uint4 *>(a + i0);
      uint4 ub = *reinterpret_cast<const uint4 *>(b + i0), o;
      const T *ea = reinterpret_cast<const T *>(&ua);
      const T *eb = reinterpret_cast<const T *>(&ub);
      T *r = reinterpret_cast<T *>(&o);
#pragma unroll
      for (int j = 0; j < V; ++j)
        r[j] = fromF32<T>(f(i0 + j, toF32(ea[j]), toF32(eb[j])));
      *reinterpret_cast<uint4 *>(out + i0) = o;
    }
    return;
  }
  for (int64_t i = threadIdx.x; i < len; i += blockDim.x)
    out[i] = fromF32<T>(f(i, toF32(a[i]), toF32(b[i])));
}

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_ROWS_CUH
