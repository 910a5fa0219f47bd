//===- Reduction.cu - reduce_sum/mean/max and reduce_max_grad -------------===//
//
// Device side of runtime/cuda/Reduction.cpp. The host merges the input's
// dims into kept and reduced groups (as runtime/ops/ReducePlan.h does).
// When the last dim is reduced, a warp reduces each output's contiguous
// rows ("row" kernel); when it is kept, a thread per output walks its
// column, neighbouring threads reading neighbouring elements ("column"
// kernel). Few outputs over many elements are split into chunks whose
// partial results a second kernel combines in chunk order, so the result
// never depends on scheduling. Floats accumulate in f32 (f64 for f64),
// integers in int64 with wrapping adds, as on the CPU.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Accumulate.cuh"
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/ReduceArgs.h"

#include <type_traits>

namespace ampc_cuda {


template <typename Acc> __device__ __forceinline__ Acc identity(int kind) {
  if (kind != kMax)
    return Acc(0);
  if constexpr (std::is_integral<Acc>::value)
    return static_cast<Acc>(0x8000000000000000ull); // int64 min
  else
    return -static_cast<Acc>(INFINITY);
}

// max with NaN propagation (once NaN, stays NaN), as the CPU's maxT.
template <typename Acc> __device__ __forceinline__ Acc maxT(Acc acc, Acc v) {
  return (v > acc || v != v) ? v : acc;
}
template <typename Acc>
__device__ __forceinline__ Acc combine(int kind, Acc a, Acc b) {
  return kind == kMax ? maxT(a, b) : wrappingAdd(a, b);
}
template <typename Acc>
__device__ __forceinline__ Acc finish(int kind, Acc v, int64_t count) {
  if (kind != kMean)
    return v;
  if constexpr (std::is_integral<Acc>::value)
    return count == 0 ? 0 : v / count; // truncates toward zero
  else
    return v / static_cast<Acc>(count);
}

// The input offset of row-major index i over `rank` dims with `strides`.
__device__ __forceinline__ int64_t offsetOf(const int64_t *dims,
                                            const int64_t *strides, int rank,
                                            int64_t i) {
  int64_t off = 0;
#pragma unroll
  for (int k = kMaxReduceRank - 1; k >= 0; --k) {
    if (k >= rank)
      continue;
    int64_t n = dims[k], q = i / n;
    off += (i - q * n) * strides[k];
    i = q;
  }
  return off;
}
__device__ __forceinline__ int64_t keptBase(const ReduceArgs &a, int64_t o) {
  return offsetOf(a.keptDims, a.keptStrides, a.keptRank, o);
}
__device__ __forceinline__ int64_t redOffset(const ReduceArgs &a, int64_t q) {
  if (a.redRank == 1)
    return q * a.redStrides[0];
  return offsetOf(a.redDims, a.redStrides, a.redRank, q);
}

// Element r (< count) of output o's reduction in the row layout.
__device__ __forceinline__ int64_t rowOffset(const ReduceArgs &a, int64_t r) {
  if (a.redRank == 0)
    return r;
  int64_t q = r / a.len;
  return redOffset(a, q) + (r - q * a.len);
}

template <typename Acc>
__device__ __forceinline__ Acc warpCombine(int kind, Acc v) {
  for (int o = 16; o > 0; o >>= 1)
    v = combine(kind, v, static_cast<Acc>(__shfl_xor_sync(0xffffffffu, v, o)));
  return v;
}

// Unit u = o * splits + s; one warp per unit.
template <typename T>
__device__ __forceinline__ void
reduceRows(const ReduceArgs a, const T *__restrict__ x, T *__restrict__ out,
           typename AccOf<T>::type *partial) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x & 31;
  const int64_t units = a.outN * a.splits;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t u = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       u < units; u += warps) {
    const int64_t o = u / a.splits, s = u - o * a.splits;
    const int64_t b = s * a.chunk, e = min(a.count, b + a.chunk);
    const T *xo = x + keptBase(a, o);
    Acc acc = identity<Acc>(a.kind);
    for (int64_t r = b + lane; r < e; r += 32)
      acc = combine(a.kind, acc, load<Acc>(xo[rowOffset(a, r)]));
    acc = warpCombine(a.kind, acc);
    if (lane == 0) {
      if (a.splits == 1)
        out[o] = store<T>(finish(a.kind, acc, a.count));
      else
        partial[u] = acc;
    }
  }
}

// Unit u = s * outN + o; one thread per unit.
template <typename T>
__device__ __forceinline__ void
reduceColumns(const ReduceArgs a, const T *__restrict__ x, T *__restrict__ out,
              typename AccOf<T>::type *partial) {
  using Acc = typename AccOf<T>::type;
  const int64_t units = a.outN * a.splits;
  AMPC_GRID_STRIDE(u, units) {
    const int64_t s = u / a.outN, o = u - s * a.outN;
    const int64_t b = s * a.chunk, e = min(a.count, b + a.chunk);
    const T *xo = x + keptBase(a, o);
    Acc acc = identity<Acc>(a.kind);
    for (int64_t r = b; r < e; ++r)
      acc = combine(a.kind, acc, load<Acc>(xo[redOffset(a, r)]));
    if (a.splits == 1)
      out[o] = store<T>(finish(a.kind, acc, a.count));
    else
      partial[u] = acc;
  }
}

// Second pass: output o combines its chunks in order (rowLayout: partial
// o * splits + s, else s * outN + o).
template <typename T>
__device__ __forceinline__ void
reduceFinish(const ReduceArgs a,
             const typename AccOf<T>::type *__restrict__ partial,
             T *__restrict__ out, int rowLayout) {
  using Acc = typename AccOf<T>::type;
  AMPC_GRID_STRIDE(o, a.outN) {
    Acc acc = identity<Acc>(a.kind);
    for (int64_t s = 0; s < a.splits; ++s)
      acc = combine(a.kind, acc,
                    partial[rowLayout ? o * a.splits + s : s * a.outN + o]);
    out[o] = store<T>(finish(a.kind, acc, a.count));
  }
}

//===----------------------------------------------------------------------===//
// reduce_max_grad: each group's grad shared evenly by the elements equal to
// its maximum (NaN equal to a NaN maximum); the rest get 0.
//===----------------------------------------------------------------------===//

template <typename Acc> __device__ __forceinline__ bool isMax(Acc v, Acc m) {
  return v == m || (m != m && v != v);
}

template <typename T>
__device__ __forceinline__ void
maxGradRows(const ReduceArgs a, const T *__restrict__ g,
            const T *__restrict__ x, const T *__restrict__ m,
            T *__restrict__ dx) {
  using Acc = typename AccOf<T>::type;
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t o = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       o < a.outN; o += warps) {
    const int64_t base = keptBase(a, o);
    const Acc mo = load<Acc>(m[o]);
    int64_t n = 0;
    for (int64_t r = lane; r < a.count; r += 32)
      n += isMax(load<Acc>(x[base + rowOffset(a, r)]), mo);
    for (int k = 16; k > 0; k >>= 1)
      n += __shfl_xor_sync(0xffffffffu, n, k);
    const Acc share = n ? load<Acc>(g[o]) / static_cast<Acc>(n) : Acc(0);
    for (int64_t r = lane; r < a.count; r += 32) {
      const int64_t off = base + rowOffset(a, r);
      dx[off] = store<T>(isMax(load<Acc>(x[off]), mo) ? share : Acc(0));
    }
  }
}

template <typename T>
__device__ __forceinline__ void
maxGradColumns(const ReduceArgs a, const T *__restrict__ g,
               const T *__restrict__ x, const T *__restrict__ m,
               T *__restrict__ dx) {
  using Acc = typename AccOf<T>::type;
  AMPC_GRID_STRIDE(o, a.outN) {
    const int64_t base = keptBase(a, o);
    const Acc mo = load<Acc>(m[o]);
    int64_t n = 0;
    for (int64_t r = 0; r < a.count; ++r)
      n += isMax(load<Acc>(x[base + redOffset(a, r)]), mo);
    const Acc share = n ? load<Acc>(g[o]) / static_cast<Acc>(n) : Acc(0);
    for (int64_t r = 0; r < a.count; ++r) {
      const int64_t off = base + redOffset(a, r);
      dx[off] = store<T>(isMax(load<Acc>(x[off]), mo) ? share : Acc(0));
    }
  }
}

} // namespace ampc_cuda

using namespace ampc_cuda;

#define AMPC_REDUCE(NAME, T)                                                   \
  extern "C" __global__ void __launch_bounds__(256) ampc_reduce_rows_##NAME(   \
      ReduceArgs a, const T *x, T *out, AccOf<T>::type *partial) {             \
    reduceRows<T>(a, x, out, partial);                                         \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_reduce_columns_##NAME(ReduceArgs a, const T *x, T *out,             \
                                 AccOf<T>::type *partial) {                    \
    reduceColumns<T>(a, x, out, partial);                                      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256) ampc_reduce_finish_##NAME( \
      ReduceArgs a, const AccOf<T>::type *partial, T *out, int rowLayout) {    \
    reduceFinish<T>(a, partial, out, rowLayout);                               \
  }
AMPC_VARIANTS_REDUCE(AMPC_REDUCE)

#define AMPC_MAX_GRAD(NAME, T)                                                 \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_reduce_max_grad_rows_##NAME(ReduceArgs a, const T *g, const T *x,   \
                                       const T *m, T *dx) {                    \
    maxGradRows<T>(a, g, x, m, dx);                                            \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_reduce_max_grad_columns_##NAME(ReduceArgs a, const T *g,            \
                                          const T *x, const T *m, T *dx) {     \
    maxGradColumns<T>(a, g, x, m, dx);                                         \
  }
AMPC_VARIANTS_FLOAT(AMPC_MAX_GRAD)
