//===- Losses.cu - loss reductions, nll_loss, and the loss gradients ------===//
//
// The summed or mean loss is finished by one block from the per-sample
// losses and weights (f64, fixed order: the same result every run). The
// gradients are elementwise over [N, C, D] once the mean's denominator
// (the summed weights of the labels not ignored) is known.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/KernelNames.def"
#include "runtime/cuda/kernels/Losses.cuh"

namespace ampc_cuda {
namespace {

enum Reduction : int { kNone = 0, kSum = 1, kMean = 2 };

// Per-sample coefficient of the gradient: weight * grad, over the mean's
// denominator (0 when it is 0: no sample shares the gradient).
template <typename T>
__device__ __forceinline__ float gradCoef(const LossArgs &la, int64_t s,
                                          int64_t label, const T *grad,
                                          int reduction, const double *denom) {
  double v = classWeight(la, label) *
             static_cast<double>(toF32(grad[reduction == kNone ? s : 0]));
  if (reduction == kMean) {
    double d = *denom;
    v = d != 0 ? v / d : 0.0;
  }
  return static_cast<float>(v);
}

// softmax_cross_entropy_grad: (exp(log_prob) - onehot(label)) * coef,
// written as O (softmax_cross_entropy_with_grad's f16/bf16 gradient of f32
// log-probabilities) or T.
template <typename T, typename O = T>
__device__ void sceGrad(const T *grad, const T *lp, O *out, LossArgs la,
                        int64_t d, int reduction, const double *denom) {
  const int64_t c = la.classes, cd = c * d;
  AMPC_GRID_STRIDE(i, la.samples * c) {
    const int64_t n = i / cd, rem = i - n * cd, k = rem / d, j = rem - k * d;
    const int64_t s = n * d + j;
    int64_t label = 0;
    int kind = labelKind(la, s, label);
    float r = 0.f;
    if (kind == kLabelBad) {
      r = __int_as_float(0x7fc00000);
    } else if (kind == kLabelValid) {
      float p = expf(toF32(lp[i]));
      if (k == label)
        p -= 1.f;
      r = p * gradCoef(la, s, label, grad, reduction, denom);
    }
    out[i] = fromF32<O>(r);
  }
}

// nll_loss_grad: -coef at the label, 0 elsewhere.
template <typename T>
__device__ void nllGrad(const T *grad, T *out, LossArgs la, int64_t d,
                        int reduction, const double *denom) {
  const int64_t c = la.classes, cd = c * d;
  AMPC_GRID_STRIDE(i, la.samples * c) {
    const int64_t n = i / cd, rem = i - n * cd, k = rem / d, j = rem - k * d;
    const int64_t s = n * d + j;
    int64_t label = 0;
    int kind = labelKind(la, s, label);
    float r = 0.f;
    if (kind == kLabelBad)
      r = __int_as_float(0x7fc00000);
    else if (kind == kLabelValid && k == label)
      r = -gradCoef(la, s, label, grad, reduction, denom);
    out[i] = fromF32<T>(r);
  }
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

// One block (blockDim a multiple of 32): out[0] = sum of the per-sample
// losses, divided by the sum of their weights when `mean` (0/0 = NaN when
// every label is ignored, as on the CPU).
extern "C" __global__ void __launch_bounds__(1024)
    ampc_loss_reduce(LossArgs la, void *out, int outType, int mean) {
  __shared__ double scratch[32];
  double ls = 0.0, ws = 0.0;
  for (int64_t s = threadIdx.x; s < la.samples; s += blockDim.x) {
    ls += la.perSample[s];
    ws += la.perSample[la.samples + s];
  }
  ls = blockSumD(ls, scratch);
  ws = blockSumD(ws, scratch);
  if (threadIdx.x == 0)
    storeFromF64(out, outType, 0, mean ? ls / ws : ls);
}

// One block: denom[0] = the summed weights of the labels not ignored (NaN
// if a label is out of range).
extern "C" __global__ void __launch_bounds__(1024)
    ampc_loss_weight_sum(LossArgs la, double *denom) {
  __shared__ double scratch[32];
  double ws = 0.0;
  for (int64_t s = threadIdx.x; s < la.samples; s += blockDim.x) {
    int64_t label = 0;
    int kind = labelKind(la, s, label);
    if (kind == kLabelBad)
      ws += __longlong_as_double(0x7ff8000000000000LL);
    else if (kind == kLabelValid)
      ws += classWeight(la, label);
  }
  ws = blockSumD(ws, scratch);
  if (threadIdx.x == 0)
    *denom = ws;
}

// nll_loss: one thread per sample of x [N, C, D] (any float dtype).
extern "C" __global__ void ampc_nll_loss(const void *x, int xType, int64_t d,
                                         LossArgs la) {
  AMPC_GRID_STRIDE(s, la.samples) {
    int64_t label = 0;
    int kind = labelKind(la, s, label);
    double lp = 0.0;
    if (kind == kLabelValid) {
      const int64_t n = s / d, j = s - n * d;
      lp = loadAsF64(x, xType, (n * la.classes + label) * d + j);
    }
    sampleLoss(la, s, kind, label, lp);
  }
}

#define AMPC_LOSS_GRAD(SUF, T)                                                 \
  extern "C" __global__ void ampc_sce_grad_##SUF(                              \
      const T *grad, const T *lp, T *out, LossArgs la, int64_t d,              \
      int reduction, const double *denom) {                                    \
    sceGrad<T>(grad, lp, out, la, d, reduction, denom);                        \
  }                                                                            \
  extern "C" __global__ void ampc_nll_grad_##SUF(                              \
      const T *grad, T *out, LossArgs la, int64_t d, int reduction,            \
      const double *denom) {                                                   \
    nllGrad<T>(grad, out, la, d, reduction, denom);                            \
  }

AMPC_VARIANTS_ROW(AMPC_LOSS_GRAD)

// softmax_cross_entropy_with_grad's gradient from the f32 log-probabilities
// it keeps in the workspace, in the gradient's own type.
#define AMPC_SCE_GRAD_FROM_F32(SUF, O)                                         \
  extern "C" __global__ void ampc_sce_grad_from_f32_##SUF(                     \
      const float *grad, const float *lp, O *out, LossArgs la, int64_t d,      \
      int reduction, const double *denom) {                                    \
    sceGrad<float, O>(grad, lp, out, la, d, reduction, denom);                 \
  }

AMPC_VARIANTS_ROW(AMPC_SCE_GRAD_FROM_F32)
