//===- Movement.cu - strided copies, gather, gather_grad, dropout ---------===//
//
// Device side of runtime/cuda/Movement.cpp. Every byte-moving op (copy,
// transpose, slice, slice_grad, broadcast_to, concat) is one strided copy
// whose dims the host has collapsed and whose "element" is the widest
// access (up to 16 bytes) that every stride and both base addresses allow;
// a transpose whose source-contiguous dim is the output's second-last goes
// through a shared-memory tile so both sides stay coalesced. gather_grad
// sums repeated indices in index order without float atomics: the indices
// are bucketed by row (counting sort, made stable by ranking each bucket),
// then every output element adds its bucket's grad rows in that order.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/CopyArgs.h"
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/ops/DropoutRng.h"

namespace ampc_cuda {

template <typename E, typename I>
__device__ __forceinline__ void stridedCopy(const StridedCopyArgs &a,
                                            const E *__restrict__ src,
                                            E *__restrict__ dst) {
  const I total = static_cast<I>(a.total);
  const int last = a.rank - 1;
  const I inner = static_cast<I>(a.dims[last]);
  for (I i = I(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += I(blockDim.x) * gridDim.x) {
    I rem = i / inner, c = i - rem * inner;
    I s = static_cast<I>(a.srcOffset) + c * static_cast<I>(a.src[last]);
    I d = static_cast<I>(a.dstOffset) + c * static_cast<I>(a.dst[last]);
#pragma unroll
    for (int k = kMaxCopyRank - 2; k >= 0; --k) {
      if (k >= last)
        continue;
      I n = static_cast<I>(a.dims[k]);
      I q = rem / n, r = rem - q * n;
      s += r * static_cast<I>(a.src[k]);
      d += r * static_cast<I>(a.dst[k]);
      rem = q;
    }
    dst[d] = src[s];
  }
}

// TileArgs' transpose in tiles of 32x32 through shared memory (33
// columns: no bank conflicts for 4-byte E). Block x is a tile of Q; blocks
// y and z loop over the tiles of P and the outer indices, since the host
// caps those grid dims at CUDA's 65535.

template <typename E>
__device__ __forceinline__ void tiledTranspose(const TileArgs &a,
                                               const E *__restrict__ src,
                                               E *__restrict__ dst) {
  __shared__ E tile[32][33];
  const int64_t q0 = int64_t(blockIdx.x) * 32, pTiles = (a.P + 31) / 32;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int64_t o = blockIdx.z; o < a.outer; o += gridDim.z) {
    int64_t base = a.srcOffset, rem = o;
#pragma unroll
    for (int k = kMaxCopyRank - 1; k >= 0; --k) {
      if (k >= a.outerRank)
        continue;
      const int64_t n = a.outerDims[k], q = rem / n;
      base += (rem - q * n) * a.outerSrc[k];
      rem = q;
    }
    const int64_t dbase = o * a.P * a.Q;
    for (int64_t pt = blockIdx.y; pt < pTiles; pt += gridDim.y) {
      const int64_t p0 = pt * 32;
      __syncthreads(); // the previous tile has been written out
      for (int k = ty; k < 32; k += 8) {
        int64_t p = p0 + tx, q = q0 + k;
        if (p < a.P && q < a.Q)
          tile[k][tx] = src[base + p + q * a.srcQ];
      }
      __syncthreads();
      for (int k = ty; k < 32; k += 8) {
        int64_t p = p0 + k, q = q0 + tx;
        if (p < a.P && q < a.Q)
          dst[dbase + p * a.Q + q] = tile[tx][k];
      }
    }
  }
}

// gather: out[o, j, c] = data[o, idx[j] (+dim if negative), c] in units of
// E (c < innerUnits). An index outside [-dim, dim) writes zeros: the CPU
// kernel refuses such a step, a captured launch cannot, so the result is
// defined instead.
template <typename E, typename Idx>
__device__ __forceinline__ void
gather(const E *__restrict__ data, const Idx *__restrict__ idx,
       E *__restrict__ out, int64_t outer, int64_t count, int64_t dim,
       int64_t innerUnits) {
  const int64_t total = outer * count * innerUnits;
  AMPC_GRID_STRIDE(i, total) {
    int64_t t = i / innerUnits, c = i - t * innerUnits;
    int64_t o = t / count, j = t - o * count;
    int64_t row = static_cast<int64_t>(idx[j]);
    if (row < 0)
      row += dim;
    E v;
    if (row >= 0 && row < dim)
      v = data[(o * dim + row) * innerUnits + c];
    else
      memset(&v, 0, sizeof(E));
    out[i] = v;
  }
}

template <typename Idx>
__device__ __forceinline__ int64_t gatherRow(const Idx *idx, int64_t j,
                                             int64_t dim) {
  int64_t row = static_cast<int64_t>(idx[j]);
  if (row < 0)
    row += dim;
  return row >= 0 && row < dim ? row : -1;
}

// gather_grad, step 1: counts[row] = how many indices name it (ints: the
// order of integer atomics does not change the count). `counts` is zeroed
// first by the host.
template <typename Idx>
__device__ __forceinline__ void gatherGradCount(const Idx *__restrict__ idx,
                                                int64_t count, int64_t dim,
                                                int *__restrict__ counts) {
  AMPC_GRID_STRIDE(j, count) {
    int64_t row = gatherRow(idx, j, dim);
    if (row >= 0)
      atomicAdd(&counts[row], 1);
  }
}

} // namespace ampc_cuda

using namespace ampc_cuda;

#define AMPC_STRIDED_COPY(NAME, E)                                             \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_strided_copy_##NAME##_i32(StridedCopyArgs a, const E *src,          \
                                     E *dst) {                                 \
    stridedCopy<E, int32_t>(a, src, dst);                                      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_strided_copy_##NAME##_i64(StridedCopyArgs a, const E *src,          \
                                     E *dst) {                                 \
    stridedCopy<E, int64_t>(a, src, dst);                                      \
  }
AMPC_VARIANTS_COPY_WIDTH(AMPC_STRIDED_COPY)

#define AMPC_TILED_TRANSPOSE(NAME, E)                                          \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_transpose_tile_##NAME(TileArgs a, const E *src, E *dst) {           \
    tiledTranspose<E>(a, src, dst);                                            \
  }
AMPC_VARIANTS_TILE_WIDTH(AMPC_TILED_TRANSPOSE)

#define AMPC_GATHER(NAME, E, IDXNAME, Idx)                                     \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_gather_##NAME##_##IDXNAME(const E *data, const Idx *idx, E *out,    \
                                     int64_t outer, int64_t count,             \
                                     int64_t dim, int64_t innerUnits) {        \
    gather<E, Idx>(data, idx, out, outer, count, dim, innerUnits);             \
  }
AMPC_GATHER(1, uint8_t, i32, int32_t)
AMPC_GATHER(2, uint16_t, i32, int32_t)
AMPC_GATHER(4, uint32_t, i32, int32_t)
AMPC_GATHER(8, uint2, i32, int32_t)
AMPC_GATHER(16, uint4, i32, int32_t)
AMPC_GATHER(1, uint8_t, i64, int64_t)
AMPC_GATHER(2, uint16_t, i64, int64_t)
AMPC_GATHER(4, uint32_t, i64, int64_t)
AMPC_GATHER(8, uint2, i64, int64_t)
AMPC_GATHER(16, uint4, i64, int64_t)

extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_count_i32(const int32_t *idx, int64_t count, int64_t dim,
                               int *counts) {
  gatherGradCount(idx, count, dim, counts);
}
extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_count_i64(const int64_t *idx, int64_t count, int64_t dim,
                               int *counts) {
  gatherGradCount(idx, count, dim, counts);
}

// Step 2 (one block of 1024 threads): offsets[r] = counts[0] + ... +
// counts[r-1] for r <= dim, and cursor[r] = offsets[r].
extern "C" __global__ void __launch_bounds__(1024)
    ampc_gather_grad_scan(const int *counts, int64_t dim, int *offsets,
                          int *cursor) {
  __shared__ int warpSums[32];
  __shared__ int carry;
  if (threadIdx.x == 0)
    carry = 0;
  __syncthreads();
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  for (int64_t b = 0; b < dim; b += blockDim.x) {
    int64_t r = b + threadIdx.x;
    int v = r < dim ? counts[r] : 0, x = v;
    for (int o = 1; o < 32; o <<= 1) {
      int y = __shfl_up_sync(0xffffffffu, x, o);
      if (lane >= o)
        x += y;
    }
    if (lane == 31)
      warpSums[warp] = x;
    __syncthreads();
    if (warp == 0) {
      int w = lane < int(blockDim.x >> 5) ? warpSums[lane] : 0;
      for (int o = 1; o < 32; o <<= 1) {
        int y = __shfl_up_sync(0xffffffffu, w, o);
        if (lane >= o)
          w += y;
      }
      warpSums[lane] = w; // inclusive over warps
    }
    __syncthreads();
    int excl = carry + (warp ? warpSums[warp - 1] : 0) + x - v;
    if (r < dim) {
      offsets[r] = excl;
      cursor[r] = excl;
    }
    __syncthreads();
    if (threadIdx.x == blockDim.x - 1)
      carry = excl + v;
    __syncthreads();
  }
  if (threadIdx.x == 0)
    offsets[dim] = carry;
}

// Step 3: each index position j lands in its row's bucket (in any order).
template <typename Idx>
__device__ __forceinline__ void
gatherGradPlace(const Idx *__restrict__ idx, int64_t count, int64_t dim,
                int *__restrict__ cursor, int *__restrict__ bucketed) {
  AMPC_GRID_STRIDE(j, count) {
    int64_t row = gatherRow(idx, j, dim);
    if (row >= 0)
      bucketed[atomicAdd(&cursor[row], 1)] = static_cast<int>(j);
  }
}
extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_place_i32(const int32_t *idx, int64_t count, int64_t dim,
                               int *cursor, int *bucketed) {
  gatherGradPlace(idx, count, dim, cursor, bucketed);
}
extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_place_i64(const int64_t *idx, int64_t count, int64_t dim,
                               int *cursor, int *bucketed) {
  gatherGradPlace(idx, count, dim, cursor, bucketed);
}

// Step 4: one warp per row puts its bucket in index order. A short bucket
// ranks each position by the smaller positions in it (they are unique):
// len^2 / 32 steps. A long one (len^2 > count, e.g. a padding token's row)
// is instead compacted from a scan of all indices: count / 32 steps.
template <typename Idx>
__device__ __forceinline__ void
gatherGradSort(const Idx *__restrict__ idx, int64_t count,
               const int *__restrict__ offsets, int64_t dim,
               const int *__restrict__ bucketed, int *__restrict__ sorted) {
  const int lane = threadIdx.x & 31;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t r = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       r < dim; r += warps) {
    const int b = offsets[r], e = offsets[r + 1];
    const int64_t len = e - b;
    if (len * len > count) {
      int at = b;
      for (int64_t j0 = 0; j0 < count; j0 += 32) {
        const int64_t j = j0 + lane;
        const bool hit = j < count && gatherRow(idx, j, dim) == r;
        const unsigned m = __ballot_sync(0xffffffffu, hit);
        if (hit)
          sorted[at + __popc(m & ((1u << lane) - 1))] = static_cast<int>(j);
        at += __popc(m);
      }
      continue;
    }
    for (int k = b + lane; k < e; k += 32) {
      const int v = bucketed[k];
      int rank = 0;
      for (int m = b; m < e; ++m)
        rank += bucketed[m] < v;
      sorted[b + rank] = v;
    }
  }
}
extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_sort_i32(const int32_t *idx, int64_t count,
                              const int *offsets, int64_t dim,
                              const int *bucketed, int *sorted) {
  gatherGradSort(idx, count, offsets, dim, bucketed, sorted);
}
extern "C" __global__ void __launch_bounds__(256)
    ampc_gather_grad_sort_i64(const int64_t *idx, int64_t count,
                              const int *offsets, int64_t dim,
                              const int *bucketed, int *sorted) {
  gatherGradSort(idx, count, offsets, dim, bucketed, sorted);
}

// Step 5: out[o, r, c] = sum over the bucket of r, in index order, of
// grad[o, j, c], accumulated in Acc and rounded once.
template <typename T, typename Acc>
__device__ __forceinline__ void
gatherGradSum(const T *__restrict__ grad, const int *__restrict__ offsets,
              const int *__restrict__ sorted, T *__restrict__ out,
              int64_t outer, int64_t count, int64_t dim, int64_t inner) {
  const int64_t total = outer * dim * inner;
  AMPC_GRID_STRIDE(i, total) {
    int64_t t = i / inner, c = i - t * inner;
    int64_t o = t / dim, r = t - o * dim;
    const T *g = grad + o * count * inner + c;
    Acc acc = Acc(0);
    for (int k = offsets[r], e = offsets[r + 1]; k < e; ++k) {
      if constexpr (sizeof(Acc) == 8)
        acc += static_cast<Acc>(g[int64_t(sorted[k]) * inner]);
      else
        acc += toF32(g[int64_t(sorted[k]) * inner]);
    }
    if constexpr (sizeof(Acc) == 8)
      out[i] = static_cast<T>(acc);
    else
      out[i] = fromF32<T>(acc);
  }
}

#define AMPC_GATHER_GRAD_SUM(NAME, T, Acc)                                     \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_gather_grad_sum_##NAME(const T *grad, const int *offsets,           \
                                  const int *sorted, T *out, int64_t outer,    \
                                  int64_t count, int64_t dim, int64_t inner) { \
    gatherGradSum<T, Acc>(grad, offsets, sorted, out, outer, count, dim,       \
                          inner);                                              \
  }
AMPC_GATHER_GRAD_SUM(f32, float, float)
AMPC_GATHER_GRAD_SUM(f16, __half, float)
AMPC_GATHER_GRAD_SUM(bf16, __nv_bfloat16, float)
AMPC_GATHER_GRAD_SUM(f64, double, double)

//===----------------------------------------------------------------------===//
// dropout (runtime/ops/DropoutRng.h: the CPU kernel's mask, bit for bit)
//===----------------------------------------------------------------------===//

namespace ampc_cuda {

template <typename T>
__device__ __forceinline__ void
dropout(const T *__restrict__ in, T *__restrict__ out,
        uint8_t *__restrict__ mask, int64_t n, int64_t seed, double ratio,
        int training, const uint64_t *stepCounter) {
  const bool apply = training && ratio != 0;
  uint64_t stream = 0;
  if (apply)
    stream = ampc::rt::ops::dropoutStream(seed, *stepCounter);
  const double scale = ratio < 1 ? 1 / (1 - ratio) : 0;
  AMPC_GRID_STRIDE(i, n) {
    if (!apply) {
      out[i] = in[i];
      mask[i] = 1;
      continue;
    }
    bool keep = ampc::rt::ops::dropoutKeep(stream, i, ratio);
    mask[i] = keep;
    // Dropped elements are +0 (not x * 0, which would keep NaN and -0).
    if constexpr (sizeof(T) == 8)
      out[i] = keep ? in[i] * scale : 0.0;
    else
      out[i] =
          fromF32<T>(keep ? toF32(in[i]) * static_cast<float>(scale) : 0.0f);
  }
}

} // namespace ampc_cuda

#define AMPC_DROPOUT(NAME, T)                                                  \
  extern "C" __global__ void __launch_bounds__(256) ampc_dropout_##NAME(       \
      const T *in, T *out, uint8_t *mask, int64_t n, int64_t seed,             \
      double ratio, int training, const uint64_t *stepCounter) {               \
    dropout<T>(in, out, mask, n, seed, ratio, training, stepCounter);          \
  }
AMPC_VARIANTS_FLOAT(AMPC_DROPOUT)
