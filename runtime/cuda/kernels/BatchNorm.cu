//===- BatchNorm.cu - batch norm forward (training, inference) and grad ---===//
//
// Our own kernels rather than cuDNN's: the CPU semantics (Normalization.cpp,
// NormalizationGrad.cpp) update the running variance with the biased batch
// variance (cuDNN uses the unbiased one), take the per-channel parameters
// and statistics in any float dtype (cuDNN wants f32 for f16/bf16 data),
// and write the new running statistics to outputs of their own.
//
// Per-channel sums are taken in f64 in two levels with no atomics: each
// block reduces one (channel, slice of the N * inner values) into a partial,
// and a per-channel kernel adds the partials in slice order, so results do
// not depend on scheduling. Statistics are two-pass (mean, then squared
// deviations), as on the CPU. The elementwise passes compute in f32 (f64
// when the data or the parameters are f64) with every operation rounded as
// the CPU code rounds it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/ComputeType.cuh"
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/Rows.cuh" // blockSumD

using namespace ampc_cuda;

namespace {

// Modes of the partial-sum pass.
enum : int {
  kSum = 0,      // out0 = sum(x)
  kSqDev = 1,    // out0 = sum((x - mean)^2)
  kGradSums = 2, // out0 = sum(g), out1 = sum(g * (x - mean))
};

// Block b = channel * slices + slice reduces the slice's share of the
// channel's n * inner values (x[img, ch, k], flattened as img * inner + k).
template <typename X>
__device__ void partialSums(const X *x, const X *g, int64_t n, int64_t c,
                            int64_t inner, int64_t slices, const void *mean,
                            int meanDtype, int mode, double *out0,
                            double *out1) {
  __shared__ double scratch[32];
  const int64_t ch = blockIdx.x / slices, s = blockIdx.x % slices;
  const int64_t m = n * inner;
  const int64_t e0 = s * m / slices, e1 = (s + 1) * m / slices;
  const double mu = mode == kSum ? 0.0 : loadAsF64(mean, meanDtype, ch);
  double a0 = 0, a1 = 0;
  for (int64_t img = e0 / inner; img * inner < e1; ++img) {
    const int64_t k0 = max(e0 - img * inner, int64_t(0));
    const int64_t k1 = min(e1 - img * inner, inner);
    const int64_t base = (img * c + ch) * inner;
    for (int64_t k = k0 + threadIdx.x; k < k1; k += blockDim.x) {
      const double xv = toC<double>(x[base + k]);
      if (mode == kSum) {
        a0 += xv;
      } else if (mode == kSqDev) {
        const double d = xv - mu;
        a0 += d * d;
      } else {
        const double gv = toC<double>(g[base + k]);
        a0 += gv;
        a1 += gv * (xv - mu);
      }
    }
  }
  a0 = blockSumD(a0, scratch);
  if (mode == kGradSums)
    a1 = blockSumD(a1, scratch);
  if (threadIdx.x == 0) {
    out0[blockIdx.x] = a0;
    if (mode == kGradSums)
      out1[blockIdx.x] = a1;
  }
}

__device__ __forceinline__ double sumSlices(const double *partial, int64_t ch,
                                            int64_t slices) {
  double s = 0;
  for (int64_t i = 0; i < slices; ++i)
    s += partial[ch * slices + i];
  return s;
}

// y = (x - mu) * a + b per channel; coef holds (mu, a, b) per channel.
template <typename X, typename C>
__device__ void normalize(const X *x, X *y, const double *coef, int64_t total,
                          int64_t c, int64_t inner) {
  AMPC_GRID_STRIDE(i, total) {
    const int64_t ch = (i / inner) % c;
    const C mu = static_cast<C>(coef[3 * ch]);
    const C a = static_cast<C>(coef[3 * ch + 1]);
    const C b = static_cast<C>(coef[3 * ch + 2]);
    const C v = toC<C>(x[i]);
    y[i] = fromC<X>(addRn(mulRn(subRn(v, mu), a), b));
  }
}

// dx = k1 * (g - k2 - (x - mu) * k3); coef holds (k1, k2, k3, mu).
template <typename X, typename C>
__device__ void gradApply(const X *g, const X *x, X *dx, const double *coef,
                          int64_t total, int64_t c, int64_t inner) {
  AMPC_GRID_STRIDE(i, total) {
    const int64_t ch = (i / inner) % c;
    const C k1 = static_cast<C>(coef[4 * ch]);
    const C k2 = static_cast<C>(coef[4 * ch + 1]);
    const C k3 = static_cast<C>(coef[4 * ch + 2]);
    const C mu = static_cast<C>(coef[4 * ch + 3]);
    const C gv = toC<C>(g[i]), xv = toC<C>(x[i]);
    dx[i] = fromC<X>(mulRn(k1, subRn(subRn(gv, k2), mulRn(subRn(xv, mu), k3))));
  }
}

} // namespace

#define AMPC_BN_DATA_KERNELS(suffix, X)                                        \
  extern "C" __global__ void ampc_bn_partial_##suffix(                         \
      const X *x, const X *g, int64_t n, int64_t c, int64_t inner,             \
      int64_t slices, const void *mean, int meanDtype, int mode, double *out0, \
      double *out1) {                                                          \
    partialSums<X>(x, g, n, c, inner, slices, mean, meanDtype, mode, out0,     \
                   out1);                                                      \
  }                                                                            \
  extern "C" __global__ void ampc_bn_normalize_##suffix##_c32(                 \
      const X *x, X *y, const double *coef, int64_t total, int64_t c,          \
      int64_t inner) {                                                         \
    normalize<X, float>(x, y, coef, total, c, inner);                          \
  }                                                                            \
  extern "C" __global__ void ampc_bn_normalize_##suffix##_c64(                 \
      const X *x, X *y, const double *coef, int64_t total, int64_t c,          \
      int64_t inner) {                                                         \
    normalize<X, double>(x, y, coef, total, c, inner);                         \
  }                                                                            \
  extern "C" __global__ void ampc_bn_grad_apply_##suffix##_c32(                \
      const X *g, const X *x, X *dx, const double *coef, int64_t total,        \
      int64_t c, int64_t inner) {                                              \
    gradApply<X, float>(g, x, dx, coef, total, c, inner);                      \
  }                                                                            \
  extern "C" __global__ void ampc_bn_grad_apply_##suffix##_c64(                \
      const X *g, const X *x, X *dx, const double *coef, int64_t total,        \
      int64_t c, int64_t inner) {                                              \
    gradApply<X, double>(g, x, dx, coef, total, c, inner);                     \
  }

AMPC_VARIANTS_FLOAT(AMPC_BN_DATA_KERNELS)

// mean[ch] = (sum of the channel's partials) / count; one thread a channel.
// With count 1 it is the channel's sum, which synchronised batch norm
// exchanges with the other ranks before it divides.
extern "C" __global__ void ampc_bn_mean(const double *partial, int64_t c,
                                        int64_t slices, double count,
                                        double *mean) {
  AMPC_GRID_STRIDE(ch, c) { mean[ch] = sumSlices(partial, ch, slices) / count; }
}

// Training statistics from the squared-deviation partials: the outputs
// (new running mean/var, batch mean, batch inv std; dtype `pd`, that of the
// parameters) and the normalization's (mu, a, b).
extern "C" __global__ void
ampc_bn_train_finalize(const double *partial, int64_t c, int64_t slices,
                       double count, const double *mean, const void *scale,
                       const void *bias, const void *runMean,
                       const void *runVar, int pd, double eps, double momentum,
                       void *newMean, void *newVar, void *batchMean,
                       void *batchInvStd, double *coef) {
  AMPC_GRID_STRIDE(ch, c) {
    const double mu = mean[ch];
    const double var = sumSlices(partial, ch, slices) / count;
    const double invStd = 1.0 / sqrt(var + eps);
    coef[3 * ch] = mu;
    coef[3 * ch + 1] = loadAsF64(scale, pd, ch) * invStd;
    coef[3 * ch + 2] = loadAsF64(bias, pd, ch);
    storeFromF64(newMean, pd, ch,
                 loadAsF64(runMean, pd, ch) * momentum + mu * (1 - momentum));
    storeFromF64(newVar, pd, ch,
                 loadAsF64(runVar, pd, ch) * momentum + var * (1 - momentum));
    storeFromF64(batchMean, pd, ch, mu);
    storeFromF64(batchInvStd, pd, ch, invStd);
  }
}

// Inference: (mu, a, b) from the given statistics.
extern "C" __global__ void ampc_bn_infer_coef(const void *scale,
                                              const void *bias,
                                              const void *mean, const void *var,
                                              int pd, double eps, int64_t c,
                                              double *coef) {
  AMPC_GRID_STRIDE(ch, c) {
    const double invStd = 1.0 / sqrt(loadAsF64(var, pd, ch) + eps);
    coef[3 * ch] = loadAsF64(mean, pd, ch);
    coef[3 * ch + 1] = loadAsF64(scale, pd, ch) * invStd;
    coef[3 * ch + 2] = loadAsF64(bias, pd, ch);
  }
}

// Gradient: scale_grad and bias_grad (dtype `sd`, the scale's) and the
// input gradient's (k1, k2, k3, mu). Each statistic has its own dtype.
// `ranksSums` (synchronised batch norm; null otherwise) holds the sums over
// every rank, [sum(g) per channel..., sum(g * (x - mean)) per channel...],
// which the input gradient takes, with `count` every rank's values; the
// scale and bias gradients stay this rank's sums.
extern "C" __global__ void
ampc_bn_grad_finalize(const double *sumG, const double *sumGX, int64_t c,
                      int64_t slices, const double *ranksSums, double count,
                      const void *scale, int sd, const void *mean, int md,
                      const void *invStd, int id, void *scaleGrad,
                      void *biasGrad, double *coef) {
  AMPC_GRID_STRIDE(ch, c) {
    const double sg = sumSlices(sumG, ch, slices);
    const double sgx = sumSlices(sumGX, ch, slices);
    const double allG = ranksSums ? ranksSums[ch] : sg;
    const double allGX = ranksSums ? ranksSums[c + ch] : sgx;
    const double is = loadAsF64(invStd, id, ch);
    coef[4 * ch] = loadAsF64(scale, sd, ch) * is;
    coef[4 * ch + 1] = allG / count;
    coef[4 * ch + 2] = is * is * allGX / count;
    coef[4 * ch + 3] = loadAsF64(mean, md, ch);
    storeFromF64(scaleGrad, sd, ch, is * sgx);
    storeFromF64(biasGrad, sd, ch, sg);
  }
}
