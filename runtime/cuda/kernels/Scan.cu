//===- Scan.cu - arg_max, cumsum and top_k along one axis -----------------===//
//
// Device side of runtime/cuda/Scan.cpp, with the CPU's semantics
// (runtime/cpu/Scan.cpp): a running sum per column, accumulated in the
// compute type (Accumulate.cuh) with each output rounded once and
// integers wrapping; the first (or last) maximum; the k largest or
// smallest in order, ties by index, a NaN largest (ops/SelectOrder.h).
// cumsum and arg_max give a thread each column of `len` elements `inner`
// apart. top_k gives a thread each input element, which counts the
// elements of its column that come before it and writes itself at that
// rank when it is below k: exact and order-free, but quadratic in the
// axis length.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Accumulate.cuh"
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/ScanArgs.h"
#include "runtime/ops/SelectOrder.h"

#include <type_traits>

namespace ampc_cuda {

using ampc::rt::ops::selectsBefore;

template <typename T>
__device__ __forceinline__ void cumsum(const ScanArgs a, const T *__restrict__ x,
                                       T *__restrict__ y) {
  using Acc = typename AccOf<T>::type;
  AMPC_GRID_STRIDE(c, a.outer * a.inner) {
    const int64_t base = (c / a.inner) * a.len * a.inner + c % a.inner;
    Acc acc = Acc(0);
    for (int64_t s = 0; s < a.len; ++s) {
      const int64_t off = base + (a.flag1 ? a.len - 1 - s : s) * a.inner;
      const Acc next = wrappingAdd(acc, load<Acc>(x[off]));
      y[off] = store<T>(a.flag0 ? acc : next);
      acc = next;
    }
  }
}

template <typename T>
__device__ __forceinline__ void argMax(const ScanArgs a,
                                       const T *__restrict__ x,
                                       int64_t *__restrict__ out) {
  using Acc = typename AccOf<T>::type;
  AMPC_GRID_STRIDE(c, a.outer * a.inner) {
    const int64_t base = (c / a.inner) * a.len * a.inner + c % a.inner;
    int64_t bi = 0;
    Acc best = load<Acc>(x[base]);
    for (int64_t r = 1; r < a.len; ++r) {
      const Acc v = load<Acc>(x[base + r * a.inner]);
      if (a.flag0 ? !selectsBefore(best, v, true) : selectsBefore(v, best, true)) {
        bi = r;
        best = v;
      }
    }
    out[c] = bi;
  }
}

template <typename T>
__device__ __forceinline__ void topK(const ScanArgs a, const T *__restrict__ x,
                                     T *__restrict__ values,
                                     int64_t *__restrict__ indices) {
  using Acc = typename AccOf<T>::type;
  const bool largest = a.flag0 != 0;
  AMPC_GRID_STRIDE(e, a.outer * a.len * a.inner) {
    const int64_t o = e / (a.len * a.inner), r = (e / a.inner) % a.len,
                  j = e % a.inner;
    const int64_t base = o * a.len * a.inner + j;
    const Acc v = load<Acc>(x[e]);
    int64_t rank = 0;
    for (int64_t q = 0; q < a.len && rank < a.k; ++q) {
      const Acc u = load<Acc>(x[base + q * a.inner]);
      rank += selectsBefore(u, v, largest) ||
              (q < r && !selectsBefore(v, u, largest));
    }
    if (rank < a.k) {
      const int64_t at = (o * a.k + rank) * a.inner + j;
      values[at] = x[e];
      indices[at] = r;
    }
  }
}

} // namespace ampc_cuda

using namespace ampc_cuda;

#define AMPC_SCAN(NAME, T)                                                     \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_cumsum_##NAME(ScanArgs a, const T *x, T *y) {                       \
    cumsum<T>(a, x, y);                                                        \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_arg_max_##NAME(ScanArgs a, const T *x, int64_t *out) {              \
    argMax<T>(a, x, out);                                                      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_top_k_##NAME(ScanArgs a, const T *x, T *values, int64_t *indices) { \
    topK<T>(a, x, values, indices);                                            \
  }
AMPC_VARIANTS_REDUCE(AMPC_SCAN)
