//===- Softmax.cu - softmax, log_softmax, their gradients, and the loss ---===//
//
// Rows of the softmax axis (`len` elements, stride `inner`): with inner == 1
// a row of up to 1024 elements lives in one warp's registers (K per lane),
// a longer one is read by a block of 512 threads pass by pass; with
// inner > 1 a thread walks one column. Arithmetic follows the CPU's
// softmaxColumns in f32: d = x - max, e = exp(d), sum of e, then e / sum or
// d - log(sum). softmax_cross_entropy is log_softmax with `hasLoss`: the
// sample's loss is formed from the unrounded log-probability of its label
// (see sampleLoss in Losses.cuh).
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/Losses.cuh"
#include "runtime/cuda/kernels/Rows.cuh"

namespace ampc_cuda {
namespace {

constexpr int kWarpsPerBlock = 4; // warp kernels: 128 threads

// The label's log-probability is recomputed from x exactly as the row was.
template <typename T>
__device__ __forceinline__ void rowLoss(const LossArgs &la, int64_t s,
                                        const T *x, int64_t inner, float mx,
                                        float ls) {
  int64_t label = 0;
  int kind = labelKind(la, s, label);
  float lp = 0.f;
  if (kind == kLabelValid)
    lp = (toF32(x[label * inner]) - mx) - ls;
  sampleLoss(la, s, kind, label, lp);
}

template <typename T, int K>
__device__ void softmaxWarp(const T *x, T *y, int64_t rows, int64_t len,
                            int log, int vec, int hasLoss, LossArgs la) {
  const int lane = threadIdx.x & 31;
  for (int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    const T *xr = x + row * len;
    float v[K];
    warpLoad<T, K>(v, xr, len, vec, -INFINITY);
    float mx = -INFINITY;
#pragma unroll
    for (int k = 0; k < K; ++k)
      mx = fmaxf(mx, v[k]);
    mx = warpMax(mx);
    float sum = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k) {
      float d = v[k] - mx, e = expf(d);
      if (warpRowIndex<T, K>(k, lane, vec) < len)
        sum += e;
      v[k] = log ? d : e;
    }
    sum = warpSum(sum);
    const float ls = logf(sum);
#pragma unroll
    for (int k = 0; k < K; ++k)
      v[k] = log ? v[k] - ls : v[k] / sum;
    warpStore<T, K>(v, y + row * len, len, vec);
    if (hasLoss && lane == 0)
      rowLoss(la, row, xr, 1, mx, ls);
  }
}

template <typename T>
__device__ void softmaxBlock(const T *x, T *y, int64_t rows, int64_t len,
                             int log, int vec, int hasLoss, LossArgs la) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *xr = x + row * len;
    float mx = -INFINITY;
    blockEach(xr, len, vec, [&](int64_t, float v) { mx = fmaxf(mx, v); });
    mx = blockMax(mx, scratch);
    float sum = 0.f;
    blockEach(xr, len, vec, [&](int64_t, float v) { sum += expf(v - mx); });
    sum = blockSum(sum, scratch);
    const float ls = logf(sum);
    blockMap(xr, y + row * len, len, vec, [&](int64_t, float v) {
      float d = v - mx;
      return log ? d - ls : expf(d) / sum;
    });
    if (hasLoss && threadIdx.x == 0)
      rowLoss(la, row, xr, 1, mx, ls);
  }
}

// One thread per column (o, j) of [outer, len, inner].
template <typename T>
__device__ void softmaxColumn(const T *x, T *y, int64_t outer, int64_t len,
                              int64_t inner, int log, int hasLoss,
                              LossArgs la) {
  AMPC_GRID_STRIDE(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const T *xc = x + o * len * inner + j;
    T *yc = y + o * len * inner + j;
    float mx = -INFINITY;
    for (int64_t r = 0; r < len; ++r)
      mx = fmaxf(mx, toF32(xc[r * inner]));
    float sum = 0.f;
    for (int64_t r = 0; r < len; ++r)
      sum += expf(toF32(xc[r * inner]) - mx);
    const float ls = logf(sum);
    for (int64_t r = 0; r < len; ++r) {
      float d = toF32(xc[r * inner]) - mx;
      yc[r * inner] = fromF32<T>(log ? d - ls : expf(d) / sum);
    }
    if (hasLoss)
      rowLoss(la, t, xc, inner, mx, ls);
  }
}

// softmax_grad: y * (g - sum(g * y)); log_softmax_grad: g - exp(y) * sum(g).
template <typename T, int K>
__device__ void softmaxGradWarp(const T *g, const T *y, T *out, int64_t rows,
                                int64_t len, int log, int vec) {
  for (int64_t row = int64_t(blockIdx.x) * kWarpsPerBlock + (threadIdx.x >> 5);
       row < rows; row += int64_t(gridDim.x) * kWarpsPerBlock) {
    float gv[K], yv[K];
    warpLoad<T, K>(gv, g + row * len, len, vec, 0.f);
    warpLoad<T, K>(yv, y + row * len, len, vec, 0.f);
    float s = 0.f;
#pragma unroll
    for (int k = 0; k < K; ++k)
      s += log ? gv[k] : gv[k] * yv[k];
    s = warpSum(s);
#pragma unroll
    for (int k = 0; k < K; ++k)
      gv[k] = log ? gv[k] - expf(yv[k]) * s : yv[k] * (gv[k] - s);
    warpStore<T, K>(gv, out + row * len, len, vec);
  }
}

template <typename T>
__device__ void softmaxGradBlock(const T *g, const T *y, T *out, int64_t rows,
                                 int64_t len, int log, int vec) {
  __shared__ float scratch[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const T *gr = g + row * len, *yr = y + row * len;
    float s = 0.f;
    blockEach2(gr, yr, len, vec,
               [&](int64_t, float a, float b) { s += log ? a : a * b; });
    s = blockSum(s, scratch);
    blockMap2(gr, yr, out + row * len, len, vec,
              [&](int64_t, float a, float b) {
                return log ? a - expf(b) * s : b * (a - s);
              });
  }
}

template <typename T>
__device__ void softmaxGradColumn(const T *g, const T *y, T *out, int64_t outer,
                                  int64_t len, int64_t inner, int log) {
  AMPC_GRID_STRIDE(t, outer * inner) {
    const int64_t o = t / inner, j = t - o * inner;
    const int64_t base = o * len * inner + j;
    float s = 0.f;
    for (int64_t r = 0; r < len; ++r) {
      float a = toF32(g[base + r * inner]);
      s += log ? a : a * toF32(y[base + r * inner]);
    }
    for (int64_t r = 0; r < len; ++r) {
      float a = toF32(g[base + r * inner]), b = toF32(y[base + r * inner]);
      out[base + r * inner] = fromF32<T>(log ? a - expf(b) * s : b * (a - s));
    }
  }
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

#define AMPC_SOFTMAX_WARP(SUF, T, K)                                           \
  extern "C" __global__ void __launch_bounds__(128)                            \
      ampc_softmax_warp_##SUF##_k##K(const T *x, T *y, int64_t rows,           \
                                     int64_t len, int log, int vec,            \
                                     int hasLoss, LossArgs la) {               \
    softmaxWarp<T, K>(x, y, rows, len, log, vec, hasLoss, la);                 \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(128)                            \
      ampc_softmax_grad_warp_##SUF##_k##K(const T *g, const T *y, T *out,      \
                                          int64_t rows, int64_t len, int log,  \
                                          int vec) {                           \
    softmaxGradWarp<T, K>(g, y, out, rows, len, log, vec);                     \
  }

#define AMPC_SOFTMAX_DTYPE(SUF, T)                                             \
  AMPC_VARIANTS_WARP_K(AMPC_SOFTMAX_WARP, SUF, T)                              \
  extern "C" __global__ void __launch_bounds__(512)                            \
      ampc_softmax_block_##SUF(const T *x, T *y, int64_t rows, int64_t len,    \
                               int log, int vec, int hasLoss, LossArgs la) {   \
    softmaxBlock<T>(x, y, rows, len, log, vec, hasLoss, la);                   \
  }                                                                            \
  extern "C" __global__ void ampc_softmax_col_##SUF(                           \
      const T *x, T *y, int64_t outer, int64_t len, int64_t inner, int log,    \
      int hasLoss, LossArgs la) {                                              \
    softmaxColumn<T>(x, y, outer, len, inner, log, hasLoss, la);               \
  }                                                                            \
  extern "C" __global__ void __launch_bounds__(512)                            \
      ampc_softmax_grad_block_##SUF(const T *g, const T *y, T *out,            \
                                    int64_t rows, int64_t len, int log,        \
                                    int vec) {                                 \
    softmaxGradBlock<T>(g, y, out, rows, len, log, vec);                       \
  }                                                                            \
  extern "C" __global__ void ampc_softmax_grad_col_##SUF(                      \
      const T *g, const T *y, T *out, int64_t outer, int64_t len,              \
      int64_t inner, int log) {                                                \
    softmaxGradColumn<T>(g, y, out, outer, len, inner, log);                   \
  }

AMPC_VARIANTS_ROW(AMPC_SOFTMAX_DTYPE)
