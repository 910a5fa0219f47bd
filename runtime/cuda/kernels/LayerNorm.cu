//===- LayerNorm.cu - layer_norm and layer_norm_grad ----------------------===//
//
// Rows of `d` normalized elements: a row of up to 1024 elements lives in one
// warp's registers (K per lane), a longer one is read by a block of 512
// threads pass by pass. Statistics are two-pass (mean, then squared
// deviations from it) with f32 per-thread sums added across threads in f64;
// the normalization runs in f32 as the CPU's does. scale and bias may be
// broadcast to the normalized shape: `scaleIdx`/`biasIdx` then map each
// normalized element to its source (null: the identity). The scale and bias
// gradients are summed over fixed slices of rows into f64 partials and then
// over the slices in order, so they are the same every run.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/LayerNormArgs.h"
#include "runtime/cuda/kernels/Rows.cuh"

namespace ampc_cuda {
namespace {

constexpr int kWarpsPerBlock = 4;

__device__ __forceinline__ float loadParam(const void *p, int dtype,
                                           const int32_t *idx, int64_t k) {
  return loadAsF32(p, dtype, idx ? idx[k] : k);
}

__device__ __forceinline__ float lnOut(float v, int64_t k, float mu, float is,
                                       const LnParams &p) {
  float r = (v - mu) * is * loadParam(p.scale, p.scaleType, p.scaleIdx, k);
  if (p.bias)
    r += loadParam(p.bias, p.biasType, p.biasIdx, k);
  return r;
}

template <typename T, int K>
__device__ void layerNormWarp(const T *x, T *y, LnParams p, float *mean,
                              float *invStd, int64_t rows, int64_t d,
                              double eps, int vec) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    float v[K];
    warpLoad<T, K>(v, x + row * d, d, vec, 0.f);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
      s += v[k];
    const float mu = static_cast<float>(warpSumD(s) / double(d));
    float q = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float dv = v[k] - mu;
      if (warpRowIndex<T, K>(k, lane, vec) < d)
        q += dv * dv;
    }
    const double var = warpSumD(q) / double(d);
    const float is = static_cast<float>(1.0 / sqrt(var + eps));
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = warpRowIndex<T, K>(k, lane, vec);
      if (i < d)
        v[k] = lnOut(v[k], i, mu, is, p);
    }
    warpStore<T, K>(v, y + row * d, d, vec);
    if (lane == 0) {
      mean[row] = mu;
      invStd[row] = is;
    }
  }
}

template <typename T>
__device__ void layerNormBlock(const T *x, T *y, LnParams p, float *mean,
                               float *invStd, int64_t rows, int64_t d,
                               double eps, int vec) {
  __shared__ double scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * d;
    float s = 0.f;
    blockEach(xr, d, vec, [&](int64_t, float v) { s += v; });
    const float mu = static_cast<float>(blockSumD(s, scratch) / double(d));
    float q = 0.f;
    blockEach(xr, d, vec, [&](int64_t, float v) {
      float dv = v - mu;
      q += dv * dv;
    });
    const double var = blockSumD(q, scratch) / double(d);
    const float is = static_cast<float>(1.0 / sqrt(var + eps));
    blockMap(xr, y + row * d, d, vec,
             [&](int64_t k, float v) { return lnOut(v, k, mu, is, p); });
    if (threadIdx.x == 0) {
      mean[row] = mu;
      invStd[row] = is;
    }
  }
}

// input_grad = is * (gs - mean(gs) - xhat * mean(gs * xhat)) with
// xhat = (x - mu) * is and gs = g * scale.
template <typename T, int K>
__device__ void layerNormGradWarp(const T *g, const T *x, T *dx, LnParams p,
                                  LnStats st, int64_t rows, int64_t d,
                                  int vec) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    const float mu = loadAsF32(st.mean, st.meanType, row);
    const float is = loadAsF32(st.invStd, st.invStdType, row);
    float gv[K], xv[K];
    warpLoad<T, K>(gv, g + row * d, d, vec, 0.f);
    warpLoad<T, K>(xv, x + row * d, d, vec, 0.f);
    float s1 = 0.f, s2 = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      int64_t i = warpRowIndex<T, K>(k, lane, vec);
      if (i < d) {
        xv[k] = (xv[k] - mu) * is;
        gv[k] *= loadParam(p.scale, p.scaleType, p.scaleIdx, i);
        s1 += gv[k];
        s2 += gv[k] * xv[k];
      }
    }
    const float m1 = static_cast<float>(warpSumD(s1) / double(d));
    const float m2 = static_cast<float>(warpSumD(s2) / double(d));
#pragma unroll
    for (int k = 0; k < K; ++k)
      gv[k] = is * (gv[k] - m1 - xv[k] * m2);
    warpStore<T, K>(gv, dx + row * d, d, vec);
  }
}

template <typename T>
__device__ void layerNormGradBlock(const T *g, const T *x, T *dx, LnParams p,
                                   LnStats st, int64_t rows, int64_t d,
                                   int vec) {
  __shared__ double scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const float mu = loadAsF32(st.mean, st.meanType, row);
    const float is = loadAsF32(st.invStd, st.invStdType, row);
    const T *gr = g + row * d, *xr = x + row * d;
    float s1 = 0.f, s2 = 0.f;
    blockEach2(gr, xr, d, vec, [&](int64_t k, float gv, float xv) {
      float gs = gv * loadParam(p.scale, p.scaleType, p.scaleIdx, k);
      s1 += gs;
      s2 += gs * ((xv - mu) * is);
    });
    const float m1 = static_cast<float>(blockSumD(s1, scratch) / double(d));
    const float m2 = static_cast<float>(blockSumD(s2, scratch) / double(d));
    blockMap2(gr, xr, dx + row * d, d, vec, [&](int64_t k, float gv, float xv) {
      float gs = gv * loadParam(p.scale, p.scaleType, p.scaleIdx, k);
      return is * (gs - m1 - ((xv - mu) * is) * m2);
    });
  }
}

// Block (bx, slice): columns k = bx * blockDim + tid, rows of the slice;
// partial[slice * d + k] = sum g * xhat, partial[(slices + slice) * d + k]
// = sum g.
template <typename T>
__device__ void layerNormGradPartial(const T *g, const T *x, LnStats st,
                                     int64_t rows, int64_t d, int64_t slices,
                                     double *partial) {
  const int64_t k = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t slice = blockIdx.y;
  if (k >= d)
    return;
  const int64_t r0 = slice * rows / slices, r1 = (slice + 1) * rows / slices;
  double sg = 0.0, sb = 0.0;
  for (int64_t r = r0; r < r1; ++r) {
    const float mu = loadAsF32(st.mean, st.meanType, r);
    const float is = loadAsF32(st.invStd, st.invStdType, r);
    const float gv = toF32(g[r * d + k]);
    const float xhat = (toF32(x[r * d + k]) - mu) * is;
    sg += double(gv) * double(xhat);
    sb += double(gv);
  }
  partial[slice * d + k] = sg;
  partial[(slices + slice) * d + k] = sb;
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

// Thread per scale element t: the sum over slices of the partials of every
// normalized element k whose scale is t (csrOff/csrK list them in
// ascending k; null: k = t).
extern "C" __global__ void
ampc_layer_norm_grad_finish(const double *partial, int64_t slices, int64_t d,
                            const int32_t *csrOff, const int32_t *csrK,
                            int64_t targets, void *scaleGrad, int scaleGradType,
                            void *biasGrad, int biasGradType) {
  AMPC_GRID_STRIDE(t, targets) {
    int64_t b = csrOff ? csrOff[t] : t, e = csrOff ? csrOff[t + 1] : t + 1;
    double sg = 0.0, sb = 0.0;
    for (int64_t m = b; m < e; ++m) {
      const int64_t k = csrK ? csrK[m] : m;
      double pg = 0.0, pb = 0.0;
      for (int64_t s = 0; s < slices; ++s) {
        pg += partial[s * d + k];
        pb += partial[(slices + s) * d + k];
      }
      sg += pg;
      sb += pb;
    }
    storeFromF64(scaleGrad, scaleGradType, t, sg);
    storeFromF64(biasGrad, biasGradType, t, sb);
  }
}

#define AMPC_LN_WARP(SUF, T, K)                                                \
  extern "C" __global__ void __launch_bounds__(128)                            \
      ampc_layer_norm_warp_##SUF##_k##K(                                       \
          const T *x, T *y, LnParams p, float *mean, float *invStd,            \
          int64_t rows, int64_t d, double eps, int vec) {                      \
    layerNormWarp<T, K>(x, y, p, mean, invStd, rows, d, eps, vec);             \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                            \
      ampc_layer_norm_grad_warp_##SUF##_k##K(                                  \
          const T *g, const T *x, T *dx, LnParams p, LnStats st, int64_t rows, \
          int64_t d, int vec) {                                                \
    layerNormGradWarp<T, K>(g, x, dx, p, st, rows, d, vec);                    \
  }

#define AMPC_LN_DTYPE(SUF, T)                                                  \
  AMPC_VARIANTS_WARP_K(AMPC_LN_WARP, SUF, T)                                   \
  extern "C" __global__ void __launch_bounds__(512)                            \
      ampc_layer_norm_block_##SUF(const T *x, T *y, LnParams p, float *mean,   \
                                  float *invStd, int64_t rows, int64_t d,      \
                                  double eps, int vec) {                       \
    layerNormBlock<T>(x, y, p, mean, invStd, rows, d, eps, vec);               \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(512)                            \
      ampc_layer_norm_grad_block_##SUF(const T *g, const T *x, T *dx,          \
                                       LnParams p, LnStats st, int64_t rows,   \
                                       int64_t d, int vec) {                   \
    layerNormGradBlock<T>(g, x, dx, p, st, rows, d, vec);                      \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(256)                            \
      ampc_layer_norm_grad_partial_##SUF(const T *g, const T *x, LnStats st,   \
                                         int64_t rows, int64_t d,              \
                                         int64_t slices, double *partial) {    \
    layerNormGradPartial<T>(g, x, st, rows, d, slices, partial);               \
  }

AMPC_VARIANTS_ROW(AMPC_LN_DTYPE)
