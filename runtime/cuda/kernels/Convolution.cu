//===- Convolution.cu - explicit padding around cuDNN convolutions --------===//
//
// cuDNN's legacy convolution descriptor pads both sides of a dimension by
// the same amount. When the graph's pads differ at the two ends in a way
// that changes the windows (CudnnConvolution.cpp decides), the input is
// copied into a zero-padded buffer and the convolution runs unpadded; the
// data gradient is computed for the padded input and cropped back. Pure
// copies, so they only care about the element size.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/KernelNames.def"

namespace {

// xp[plane, y, x] = x[plane, y - pt, x - pl], zero outside the input.
template <typename E>
__device__ void padPlanes(const E *x, E *xp, int64_t planes, int64_t h,
                          int64_t w, int64_t hp, int64_t wp, int64_t pt,
                          int64_t pl) {
  const int64_t total = planes * hp * wp;
  AMPC_GRID_STRIDE(i, total) {
    const int64_t ox = i % wp, t = i / wp;
    const int64_t oy = t % hp, plane = t / hp;
    const int64_t iy = oy - pt, ix = ox - pl;
    xp[i] = (iy >= 0 && iy < h && ix >= 0 && ix < w)
                ? x[(plane * h + iy) * w + ix]
                : E(0);
  }
}

// x[plane, y, x] = xp[plane, y + pt, x + pl].
template <typename E>
__device__ void cropPlanes(const E *xp, E *x, int64_t planes, int64_t h,
                           int64_t w, int64_t hp, int64_t wp, int64_t pt,
                           int64_t pl) {
  const int64_t total = planes * h * w;
  AMPC_GRID_STRIDE(i, total) {
    const int64_t ix = i % w, t = i / w;
    const int64_t iy = t % h, plane = t / h;
    x[i] = xp[(plane * hp + iy + pt) * wp + ix + pl];
  }
}

} // namespace

#define AMPC_CONV_PAD_KERNELS(suffix, E)                                       \
  extern "C" __global__ void ampc_conv_pad_##suffix(                           \
      const E *x, E *xp, int64_t planes, int64_t h, int64_t w, int64_t hp,     \
      int64_t wp, int64_t pt, int64_t pl) {                                    \
    padPlanes<E>(x, xp, planes, h, w, hp, wp, pt, pl);                         \
  }                                                                            \
  extern "C" __global__ void ampc_conv_crop_##suffix(                          \
      const E *xp, E *x, int64_t planes, int64_t h, int64_t w, int64_t hp,     \
      int64_t wp, int64_t pt, int64_t pl) {                                    \
    cropPlanes<E>(xp, x, planes, h, w, hp, wp, pt, pl);                        \
  }

AMPC_VARIANTS_CONV_ELEM(AMPC_CONV_PAD_KERNELS)
