//===- Pooling.cu - max/avg pooling, their gradients, global average ------===//
//
// Our own kernels rather than cuDNN's: the CPU semantics (Pooling.cpp,
// PoolingGrad.cpp, WindowGeometry.h) have asymmetric pads, ceil mode with
// the window clipped at the end padding, dilation, the first maximum in
// row-major window order winning ties, NaN propagating, and f64, which
// cuDNN's pooling does not all express. The window walks are the CPU's
// (runtime/ops/PoolWindow.h). One thread per output element
// forward; the gradients gather (one thread per input element, walking the
// windows that contain it in row-major order), so there are no atomics and
// the sums are added in the CPU kernel's order.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/ComputeType.cuh"
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/PoolArgs.h"
#include "runtime/ops/PoolWindow.h"

using namespace ampc_cuda;

namespace {

// ceil(a / b) for b > 0 and any a.
__device__ __forceinline__ int64_t ceilDiv(int64_t a, int64_t b) {
  return a >= 0 ? (a + b - 1) / b : -((-a) / b);
}

// ops::maxIndexOf over a plane of T, compared in its compute type.
template <typename T>
__device__ int64_t maxIndex(const PoolArgs &p, const T *x, int64_t oy,
                            int64_t ox) {
  using C = typename Compute<T>::C;
  return ampc::rt::ops::maxIndexOf(
      p, [x](int64_t i) { return toC<C>(x[i]); }, oy, ox);
}

using ampc::rt::ops::AvgWindow;
using ampc::rt::ops::avgWindow;

template <typename T>
__device__ void maxPool(const PoolArgs &p, const T *x, T *y) {
  using C = typename Compute<T>::C;
  const int64_t total = p.n * p.c * p.oh * p.ow;
  AMPC_GRID_STRIDE(i, total) {
    int64_t ox = i % p.ow, t = i / p.ow;
    int64_t oy = t % p.oh, plane = t / p.oh;
    const T *xp = x + plane * p.h * p.w;
    int64_t at = maxIndex(p, xp, oy, ox);
    y[i] = at < 0 ? fromC<T>(C(-INFINITY)) : xp[at];
  }
}

template <typename T>
__device__ void avgPool(const PoolArgs &p, const T *x, T *y) {
  using C = typename Compute<T>::C;
  const int64_t total = p.n * p.c * p.oh * p.ow;
  AMPC_GRID_STRIDE(i, total) {
    int64_t ox = i % p.ow, t = i / p.ow;
    int64_t oy = t % p.oh, plane = t / p.oh;
    const T *xp = x + plane * p.h * p.w;
    AvgWindow a = avgWindow(p, oy, ox);
    C s = 0;
    for (int64_t iy = a.y0; iy < a.y1; ++iy)
      for (int64_t ix = a.x0; ix < a.x1; ++ix)
        s = addRn(s, toC<C>(xp[iy * p.w + ix]));
    y[i] = fromC<T>(s / static_cast<C>(a.count));
  }
}

// Output rows [lo, hi] whose window (taps `dil` apart) can contain input
// row `iy`.
__device__ __forceinline__ void windowsOf(int64_t iy, int64_t pad,
                                          int64_t stride, int64_t kernel,
                                          int64_t dil, int64_t outSize,
                                          int64_t &lo, int64_t &hi) {
  lo = max(ceilDiv(iy + pad - (kernel - 1) * dil, stride), int64_t(0));
  hi = min((iy + pad) / stride, outSize - 1);
}

template <typename T>
__device__ void maxPoolGrad(const PoolArgs &p, const T *g, const T *x, T *dx) {
  using C = typename Compute<T>::C;
  const int64_t total = p.n * p.c * p.h * p.w;
  AMPC_GRID_STRIDE(i, total) {
    int64_t ix = i % p.w, t = i / p.w;
    int64_t iy = t % p.h, plane = t / p.h;
    const T *xp = x + plane * p.h * p.w;
    const T *gp = g + plane * p.oh * p.ow;
    int64_t oy0, oy1, ox0, ox1;
    windowsOf(iy, p.pt, p.sh, p.kh, p.dh, p.oh, oy0, oy1);
    windowsOf(ix, p.pl, p.sw, p.kw, p.dw, p.ow, ox0, ox1);
    const int64_t self = iy * p.w + ix;
    C acc = 0;
    for (int64_t oy = oy0; oy <= oy1; ++oy) {
      if ((iy + p.pt - oy * p.sh) % p.dh != 0)
        continue;
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        if ((ix + p.pl - ox * p.sw) % p.dw != 0)
          continue;
        if (maxIndex(p, xp, oy, ox) == self)
          acc = addRn(acc, toC<C>(gp[oy * p.ow + ox]));
      }
    }
    dx[i] = fromC<T>(acc);
  }
}

template <typename T>
__device__ void avgPoolGrad(const PoolArgs &p, const T *g, T *dx) {
  using C = typename Compute<T>::C;
  const int64_t total = p.n * p.c * p.h * p.w;
  AMPC_GRID_STRIDE(i, total) {
    int64_t ix = i % p.w, t = i / p.w;
    int64_t iy = t % p.h, plane = t / p.h;
    const T *gp = g + plane * p.oh * p.ow;
    int64_t oy0, oy1, ox0, ox1;
    windowsOf(iy, p.pt, p.sh, p.kh, 1, p.oh, oy0, oy1);
    windowsOf(ix, p.pl, p.sw, p.kw, 1, p.ow, ox0, ox1);
    C acc = 0;
    for (int64_t oy = oy0; oy <= oy1; ++oy)
      for (int64_t ox = ox0; ox <= ox1; ++ox) {
        AvgWindow a = avgWindow(p, oy, ox);
        C share = toC<C>(gp[oy * p.ow + ox]) / static_cast<C>(a.count);
        acc = addRn(acc, share);
      }
    dx[i] = fromC<T>(acc);
  }
}

// One warp per (image, channel) plane of `size` elements.
template <typename T>
__device__ void globalAvgPool(const T *x, T *y, int64_t planes, int64_t size) {
  using C = typename Compute<T>::C;
  const int64_t lane = threadIdx.x & 31;
  const int64_t warps = (int64_t(gridDim.x) * blockDim.x) >> 5;
  for (int64_t plane = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) >> 5;
       plane < planes; plane += warps) {
    const T *xp = x + plane * size;
    C s = 0;
    for (int64_t k = lane; k < size; k += 32)
      s += toC<C>(xp[k]);
    s = warpSum(s);
    if (lane == 0)
      y[plane] = fromC<T>(s / static_cast<C>(size));
  }
}

} // namespace

#define AMPC_POOL_KERNELS(suffix, T)                                           \
  extern "C" __global__ void ampc_max_pool2d_##suffix(PoolArgs p, const T *x,  \
                                                      T *y) {                  \
    maxPool<T>(p, x, y);                                                       \
  }                                                                            \
  extern "C" __global__ void ampc_avg_pool2d_##suffix(PoolArgs p, const T *x,  \
                                                      T *y) {                  \
    avgPool<T>(p, x, y);                                                       \
  }                                                                            \
  extern "C" __global__ void ampc_max_pool2d_grad_##suffix(                    \
      PoolArgs p, const T *g, const T *x, T *dx) {                             \
    maxPoolGrad<T>(p, g, x, dx);                                               \
  }                                                                            \
  extern "C" __global__ void ampc_avg_pool2d_grad_##suffix(                    \
      PoolArgs p, const T *g, T *dx) {                                         \
    avgPoolGrad<T>(p, g, dx);                                                  \
  }                                                                            \
  extern "C" __global__ void ampc_global_avg_pool_##suffix(                    \
      const T *x, T *y, int64_t planes, int64_t size) {                        \
    globalAvgPool<T>(x, y, planes, size);                                      \
  }

AMPC_VARIANTS_FLOAT(AMPC_POOL_KERNELS)
