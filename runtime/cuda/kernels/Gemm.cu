//===- Gemm.cu - the C operand of gemm, broadcast into the output ---------===//
//
// cuBLASLt reads C as a full matrix (or a bias vector along D's rows, which
// Gemm.cpp uses when it can). Any other c that broadcasts to [M, N] ([M, 1],
// [1, 1], a scalar, ...) is written into the output first, scaled, and the
// GEMM then accumulates into it. The scale is applied in f32 (f64 for f64),
// the type the CPU backend forms beta * c in, and the product is rounded
// once on store.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"

namespace ampc_cuda {
namespace {

template <typename T>
__device__ __forceinline__ void
fillC(const T *__restrict__ c, T *__restrict__ d, int64_t m, int64_t n,
      int64_t rowStride, int64_t colStride, float scale) {
  AMPC_GRID_STRIDE(idx, m * n) {
    int64_t i = idx / n, j = idx - i * n;
    d[idx] = fromF32<T>(scale * toF32(c[i * rowStride + j * colStride]));
  }
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

// d[i, j] = scale * c[i * rowStride + j * colStride] for an [m, n] d.
#define AMPC_GEMM_FILL_C(suffix, T)                                            \
  extern "C" __global__ void ampc_gemm_fill_c_##suffix(                        \
      const T *c, T *d, int64_t m, int64_t n, int64_t rowStride,               \
      int64_t colStride, float scale) {                                        \
    fillC<T>(c, d, m, n, rowStride, colStride, scale);                         \
  }
AMPC_GEMM_FILL_C(f32, float)
AMPC_GEMM_FILL_C(f16, __half)
AMPC_GEMM_FILL_C(bf16, __nv_bfloat16)
#undef AMPC_GEMM_FILL_C

extern "C" __global__ void
ampc_gemm_fill_c_f64(const double *c, double *d, int64_t m, int64_t n,
                     int64_t rowStride, int64_t colStride, double scale) {
  AMPC_GRID_STRIDE(idx, m * n) {
    int64_t i = idx / n, j = idx - i * n;
    d[idx] = scale * c[i * rowStride + j * colStride];
  }
}
