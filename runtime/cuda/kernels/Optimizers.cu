//===- Optimizers.cu - multi-tensor updates and loss-scaling kernels ------===//
//
// The optimizer updates (runtime/cpu/Optimizers.cpp) and loss scaling's two
// kernels (runtime/cpu/LossScaling.cpp). An update or check_finite runs
// over many tensors in one launch: each block takes chunks of
// kOptChunk elements of the tensors listed in a device table (chunk c
// belongs to the last entry whose firstChunk <= c). The per-step scalars
// (learning rate, step, skip, loss scale) are read here, on the device, so
// the host never waits for the step. An update reads a loss-scaled
// gradient as grad * (1 / scale), f16/bf16 gradients of f32 parameters
// widened as they are loaded, so no pass rewrites the gradients. f16/bf16/f32 compute in f32 and f64 in
// f64, with the attribute constants rounded to that type as the CPU does.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/kernels/Common.cuh"
#include "runtime/cuda/kernels/OptimizerTables.h"
#include "runtime/ops/OptimizerMath.h"

#include <float.h>
#include <type_traits>

namespace ampc_cuda {
namespace {

//===----------------------------------------------------------------------===//
// Element access: raw storage, compute type, vectors of 16 bytes
//===----------------------------------------------------------------------===//

template <typename T> struct Elem;
template <> struct Elem<float> {
  using Raw = float;
  using C = float;
  static __device__ __forceinline__ C load(Raw r) { return r; }
  static __device__ __forceinline__ Raw store(C v) { return v; }
};
template <> struct Elem<double> {
  using Raw = double;
  using C = double;
  static __device__ __forceinline__ C load(Raw r) { return r; }
  static __device__ __forceinline__ Raw store(C v) { return v; }
};
// f16 and bf16 are held as their bits and computed in f32 through
// Common.cuh's conversions.
template <> struct Elem<__half> {
  using Raw = unsigned short;
  using C = float;
  static __device__ __forceinline__ C load(Raw r) {
    return toF32(__ushort_as_half(r));
  }
  static __device__ __forceinline__ Raw store(C v) {
    return __half_as_ushort(fromF32<__half>(v));
  }
};
template <> struct Elem<__nv_bfloat16> {
  using Raw = unsigned short;
  using C = float;
  static __device__ __forceinline__ C load(Raw r) {
    return toF32(__ushort_as_bfloat16(r));
  }
  static __device__ __forceinline__ Raw store(C v) {
    return __bfloat16_as_ushort(fromF32<__nv_bfloat16>(v));
  }
};

template <typename R, int N> struct alignas(sizeof(R) * N) Pack { R v[N]; };

template <typename R, int N>
__device__ __forceinline__ Pack<R, N> loadPack(uint64_t base, int64_t i) {
  return *reinterpret_cast<const Pack<R, N> *>(
      reinterpret_cast<const R *>(base) + i);
}
template <typename R, int N>
__device__ __forceinline__ void storePack(uint64_t base, int64_t i,
                                          const Pack<R, N> &p) {
  *reinterpret_cast<Pack<R, N> *>(reinterpret_cast<R *>(base) + i) = p;
}
template <typename R>
__device__ __forceinline__ R loadRaw(uint64_t base, int64_t i) {
  return reinterpret_cast<const R *>(base)[i];
}
template <typename R>
__device__ __forceinline__ void storeRaw(uint64_t base, int64_t i, R v) {
  reinterpret_cast<R *>(base)[i] = v;
}

// The working copy's bits (f16 or bf16), rounded once from the compute type.
__device__ __forceinline__ unsigned short lowBits(float v, bool bf16) {
  return bf16 ? Elem<__nv_bfloat16>::store(v) : Elem<__half>::store(v);
}
__device__ __forceinline__ unsigned short lowBits(double v, bool bf16) {
  return bf16 ? __bfloat16_as_ushort(__double2bfloat16(v))
              : __half_as_ushort(__double2half(v));
}

// The entry that chunk c belongs to: the last one whose firstChunk <= c.
template <typename E>
__device__ __forceinline__ int entryOf(const E *table, int count, int64_t c) {
  int lo = 0, hi = count - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (table[mid].firstChunk <= c)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

#define AMPC_FOR_CHUNKS(c, total)                                              \
  for (int64_t c = blockIdx.x; c < (total); c += gridDim.x)

//===----------------------------------------------------------------------===//
// The updates
//===----------------------------------------------------------------------===//
//
// Each Op has kIn inputs from param on (param, grad, state...) and kOut
// outputs (new param, new state...); S<C> holds the step's scalars in the
// compute type, made once per block from lr and step (in double, as the
// CPU forms them), and apply() is the CPU kernel's loop body.

struct SgdOp {
  using Params = SgdParams;
  static constexpr int kIn = 2, kOut = 1;
  template <typename C> struct S { C lr, decay; };
  template <typename C>
  static __device__ S<C> make(const Params &p, double lr, int64_t) {
    return {static_cast<C>(lr), static_cast<C>(p.weightDecay)};
  }
  template <typename C>
  static __device__ __forceinline__ void apply(const S<C> &s, const C *in,
                                               C *out) {
    C p = in[0];
    out[0] = p - s.lr * ampc::rt::ops::withL2(in[1], s.decay, p);
  }
};

struct MomentumOp {
  using Params = MomentumParams;
  static constexpr int kIn = 3, kOut = 2;
  template <typename C> struct S {
    C lr, alpha, beta, nc;
    int nesterov;
  };
  template <typename C>
  static __device__ S<C> make(const Params &p, double lr, int64_t step) {
    // The first update takes the whole gradient (ONNX's rule).
    return {static_cast<C>(lr), static_cast<C>(p.alpha),
            static_cast<C>(step > 0 ? p.beta : 1.0),
            static_cast<C>(p.normCoefficient), p.nesterov};
  }
  template <typename C>
  static __device__ __forceinline__ void apply(const S<C> &s, const C *in,
                                               C *out) {
    C p = in[0], g = ampc::rt::ops::withL2(in[1], s.nc, p), v = in[2];
    C vNew = s.alpha * v + s.beta * g;
    out[0] = s.nesterov ? p - s.lr * (g + s.alpha * vNew) : p - s.lr * vNew;
    out[1] = vNew;
  }
};

struct AdamOp {
  using Params = AdamParams;
  static constexpr int kIn = 4, kOut = 3;
  template <typename C> struct S {
    C alpha, beta, oneMinusAlpha, oneMinusBeta, eps, nc;
    C decay, stepSize, bc2Sqrt, rate, keep;
    int pytorch;
  };
  template <typename C>
  static __device__ S<C> make(const Params &p, double lr, int64_t step) {
    S<C> s;
    s.alpha = static_cast<C>(p.alpha);
    s.beta = static_cast<C>(p.beta);
    s.oneMinusAlpha = static_cast<C>(p.oneMinusAlpha);
    s.oneMinusBeta = static_cast<C>(p.oneMinusBeta);
    s.eps = static_cast<C>(p.epsilon);
    s.nc = static_cast<C>(p.normCoefficient);
    s.pytorch = p.pytorch;
    s.decay = 1;
    s.stepSize = 0;
    s.bc2Sqrt = 1;
    s.rate = 0;
    s.keep = 1;
    if (p.pytorch) {
      double t = static_cast<double>(step) + 1;
      s.decay = static_cast<C>(1 - lr * p.weightDecay);
      s.stepSize = static_cast<C>(lr / (1 - pow(p.alpha, t)));
      s.bc2Sqrt = static_cast<C>(sqrt(1 - pow(p.beta, t)));
    } else {
      double t = static_cast<double>(step);
      s.rate = static_cast<C>(step > 0 ? lr * sqrt(1 - pow(p.beta, t)) /
                                             (1 - pow(p.alpha, t))
                                       : lr);
      s.keep = static_cast<C>(1 - p.normCoefficientPost);
    }
    return s;
  }
  template <typename C>
  static __device__ __forceinline__ void apply(const S<C> &s, const C *in,
                                               C *out) {
    C p = in[0], g = ampc::rt::ops::withL2(in[1], s.nc, p);
    C m = s.alpha * in[2] + s.oneMinusAlpha * g;
    C v = s.beta * in[3] + s.oneMinusBeta * (g * g);
    C root = sqrt(v);
    out[0] = s.pytorch
                 ? p * s.decay - s.stepSize * (m / (root / s.bc2Sqrt + s.eps))
                 : s.keep * (p - s.rate * (m / (root + s.eps)));
    out[1] = m;
    out[2] = v;
  }
};

struct AdagradOp {
  using Params = AdagradParams;
  static constexpr int kIn = 3, kOut = 2;
  template <typename C> struct S { C rate, eps, nc; };
  template <typename C>
  static __device__ S<C> make(const Params &p, double lr, int64_t step) {
    return {
        static_cast<C>(lr / (1 + static_cast<double>(step) * p.decayFactor)),
        static_cast<C>(p.epsilon), static_cast<C>(p.normCoefficient)};
  }
  template <typename C>
  static __device__ __forceinline__ void apply(const S<C> &s, const C *in,
                                               C *out) {
    C p = in[0], g = ampc::rt::ops::withL2(in[1], s.nc, p);
    C acc = in[2] + g * g;
    out[0] = p - s.rate * g / (sqrt(acc) + s.eps);
    out[1] = acc;
  }
};

// A skipped update over [off, end) of one entry: every output that is not
// already the input it replaces gets that input's bits, and the working
// copy the old parameter rounded (what it held).
template <class Op, typename T>
__device__ void keepChunk(const UpdateEntry &e, int64_t off, int64_t end,
                          bool wcBf16) {
  using E = Elem<T>;
  using R = typename E::Raw;
  constexpr int V = 16 / sizeof(R);
  for (int k = 0; k < Op::kOut; ++k) {
    uint64_t src = e.in[k == 0 ? 0 : k + 1], dst = e.out[k];
    if (src == dst)
      continue;
    int64_t i = off + int64_t(threadIdx.x) * V;
    if (e.vec)
      for (; i + V <= end; i += int64_t(blockDim.x) * V)
        storePack<R, V>(dst, i, loadPack<R, V>(src, i));
    for (int64_t j = (e.vec ? off + (end - off) / V * V : off) + threadIdx.x;
         j < end; j += blockDim.x)
      storeRaw<R>(dst, j, loadRaw<R>(src, j));
  }
  if (e.workingCopy)
    for (int64_t j = off + threadIdx.x; j < end; j += blockDim.x)
      storeRaw<unsigned short>(
          e.workingCopy, j, lowBits(E::load(loadRaw<R>(e.in[0], j)), wcBf16));
}

// Input k of an update at element i: the gradient (k = 1) in its own dtype
// G, unscaled by inv (1 without a loss scale: exact), the rest in T.
template <typename T, typename G>
__device__ __forceinline__ typename Elem<T>::C
loadInput(const UpdateEntry &e, int k, int64_t i, typename Elem<T>::C inv) {
  if (k == 1)
    return static_cast<typename Elem<T>::C>(
               Elem<G>::load(loadRaw<typename Elem<G>::Raw>(e.in[1], i))) *
           inv;
  return Elem<T>::load(loadRaw<typename Elem<T>::Raw>(e.in[k], i));
}

template <class Op, typename T, typename G>
__device__ __forceinline__ void
updateOne(const UpdateEntry &e, int64_t i,
          const typename Op::template S<typename Elem<T>::C> &s,
          typename Elem<T>::C inv, bool wcBf16) {
  using E = Elem<T>;
  using R = typename E::Raw;
  using C = typename E::C;
  C in[Op::kIn], out[Op::kOut];
#pragma unroll
  for (int k = 0; k < Op::kIn; ++k)
    in[k] = loadInput<T, G>(e, k, i, inv);
  Op::apply(s, in, out);
#pragma unroll
  for (int k = 0; k < Op::kOut; ++k)
    storeRaw<R>(e.out[k], i, E::store(out[k]));
  if (e.workingCopy)
    storeRaw<unsigned short>(e.workingCopy, i, lowBits(out[0], wcBf16));
}

template <class Op, typename T, typename G>
__device__ void
updateChunk(const UpdateEntry &e, int64_t off, int64_t end,
            const typename Op::template S<typename Elem<T>::C> &s,
            typename Elem<T>::C inv, bool wcBf16) {
  using E = Elem<T>;
  using R = typename E::Raw;
  using RG = typename Elem<G>::Raw;
  using C = typename E::C;
  // V elements of T per 16 bytes; the gradient's V elements are as many or
  // fewer bytes, and aligned too since every pointer is 16-byte aligned.
  constexpr int V = 16 / sizeof(R);
  int64_t tail = off;
  if (e.vec) {
    // Every input vector is loaded before any output is stored: an output
    // may be exactly the input it replaces.
    for (int64_t i = off + int64_t(threadIdx.x) * V; i + V <= end;
         i += int64_t(blockDim.x) * V) {
      Pack<R, V> x[Op::kIn], y[Op::kOut];
      Pack<RG, V> gx = loadPack<RG, V>(e.in[1], i);
#pragma unroll
      for (int k = 0; k < Op::kIn; ++k)
        if (k != 1)
          x[k] = loadPack<R, V>(e.in[k], i);
      Pack<unsigned short, V> w;
#pragma unroll
      for (int j = 0; j < V; ++j) {
        C in[Op::kIn], out[Op::kOut];
#pragma unroll
        for (int k = 0; k < Op::kIn; ++k)
          in[k] = k == 1 ? static_cast<C>(Elem<G>::load(gx.v[j])) * inv
                         : E::load(x[k].v[j]);
        Op::apply(s, in, out);
#pragma unroll
        for (int k = 0; k < Op::kOut; ++k)
          y[k].v[j] = E::store(out[k]);
        if (e.workingCopy)
          w.v[j] = lowBits(out[0], wcBf16);
      }
#pragma unroll
      for (int k = 0; k < Op::kOut; ++k)
        storePack<R, V>(e.out[k], i, y[k]);
      if (e.workingCopy)
        storePack<unsigned short, V>(e.workingCopy, i, w);
    }
    tail = off + (end - off) / V * V;
  }
  for (int64_t i = tail + threadIdx.x; i < end; i += blockDim.x)
    updateOne<Op, T, G>(e, i, s, inv, wcBf16);
}

// The chunk with the entry's gradient dtype: f16/bf16 gradients only for
// f32 parameters (the host refuses other pairs).
template <class Op, typename T>
__device__ void
updateChunkOf(const UpdateEntry &e, int64_t off, int64_t end,
              const typename Op::template S<typename Elem<T>::C> &s,
              typename Elem<T>::C inv, bool wcBf16) {
  if constexpr (std::is_same<T, float>::value) {
    if (e.gradDtype == kF16)
      return updateChunk<Op, T, __half>(e, off, end, s, inv, wcBf16);
    if (e.gradDtype == kBF16)
      return updateChunk<Op, T, __nv_bfloat16>(e, off, end, s, inv, wcBf16);
  }
  updateChunk<Op, T, T>(e, off, end, s, inv, wcBf16);
}

template <class Op, typename T>
__device__ void multiTensorUpdate(const UpdateEntry *table, int count,
                                  int64_t totalChunks, const ScalarSet *sets,
                                  int wcDtype,
                                  const typename Op::Params &params) {
  using C = typename Elem<T>::C;
  __shared__ typename Op::template S<C> s;
  __shared__ C inv;
  __shared__ int skipped;
  const bool wcBf16 = wcDtype == kBF16;
  int current = -1; // the scalar set in s (the same in every thread)
  AMPC_FOR_CHUNKS(c, totalChunks) {
    const UpdateEntry &e = table[entryOf(table, count, c)];
    if (e.scalars != current) {
      __syncthreads(); // every thread is done with the previous set
      if (threadIdx.x == 0) {
        const ScalarSet &set = sets[e.scalars];
        const uint8_t *skip = reinterpret_cast<const uint8_t *>(set.skip);
        skipped = skip != nullptr && *skip != 0;
        // A skipped update reads neither lr nor step.
        if (!skipped) {
          double lr = set.lrDtype == kF64
                          ? *reinterpret_cast<const double *>(set.lr)
                          : *reinterpret_cast<const float *>(set.lr);
          int64_t step =
              set.step ? *reinterpret_cast<const int64_t *>(set.step) : 0;
          s = Op::template make<C>(params, lr, step);
          // 1/scale rounded to f32 first, as check_finite forms it.
          inv = set.lossScale
                    ? static_cast<C>(__fdiv_rn(
                          1.0f, *reinterpret_cast<const float *>(set.lossScale)))
                    : C(1);
        }
      }
      __syncthreads();
      current = e.scalars;
    }
    int64_t off = (c - e.firstChunk) * kOptChunk;
    int64_t end = off + kOptChunk < e.n ? off + kOptChunk : e.n;
    if (skipped)
      keepChunk<Op, T>(e, off, end, wcBf16);
    else
      updateChunkOf<Op, T>(e, off, end, s, inv, wcBf16);
  }
}

} // namespace
} // namespace ampc_cuda

using namespace ampc_cuda;

#define AMPC_UPDATE_KERNEL(name, Op, T)                                        \
  extern "C" __global__ void __launch_bounds__(kOptThreads)                    \
      name(const UpdateEntry *table, int count, int64_t totalChunks,           \
           const ScalarSet *sets, int wcDtype, Op::Params params) {            \
    multiTensorUpdate<Op, T>(table, count, totalChunks, sets, wcDtype,         \
                             params);                                          \
  }
#define AMPC_UPDATE_KERNELS(op, Op)                                            \
  AMPC_UPDATE_KERNEL(ampc_##op##_f32, Op, float)                               \
  AMPC_UPDATE_KERNEL(ampc_##op##_f16, Op, __half)                              \
  AMPC_UPDATE_KERNEL(ampc_##op##_bf16, Op, __nv_bfloat16)                      \
  AMPC_UPDATE_KERNEL(ampc_##op##_f64, Op, double)

AMPC_UPDATE_KERNELS(sgd_update, SgdOp)
AMPC_UPDATE_KERNELS(momentum_update, MomentumOp)
AMPC_UPDATE_KERNELS(adam_update, AdamOp)
AMPC_UPDATE_KERNELS(adagrad_update, AdagradOp)

//===----------------------------------------------------------------------===//
// check_finite
//===----------------------------------------------------------------------===//

namespace ampc_cuda {
namespace {

__device__ __forceinline__ bool nonFinite(float v) {
  return !(fabsf(v) <= FLT_MAX);
}
__device__ __forceinline__ bool nonFinite(double v) {
  return !(fabs(v) <= DBL_MAX);
}

// g, or g * inv in the compute type, is inf or NaN (a finite gradient that
// overflows only once unscaled by a scale below 1 counts).
template <typename T>
__device__ __forceinline__ bool badOne(typename Elem<T>::Raw x,
                                       typename Elem<T>::C inv) {
  typename Elem<T>::C g = Elem<T>::load(x);
  return nonFinite(g) || nonFinite(g * inv);
}

template <typename T>
__device__ bool checkChunk(const FiniteEntry &e, int64_t off, int64_t end,
                           float inv32) {
  using R = typename Elem<T>::Raw;
  using C = typename Elem<T>::C;
  constexpr int V = 16 / sizeof(R);
  const C inv = static_cast<C>(inv32);
  bool bad = false;
  int64_t tail = off;
  if (e.vec) {
    for (int64_t i = off + int64_t(threadIdx.x) * V; i + V <= end;
         i += int64_t(blockDim.x) * V) {
      Pack<R, V> x = loadPack<R, V>(e.g, i);
#pragma unroll
      for (int j = 0; j < V; ++j)
        bad |= badOne<T>(x.v[j], inv);
    }
    tail = off + (end - off) / V * V;
  }
  for (int64_t i = tail + threadIdx.x; i < end; i += blockDim.x)
    bad |= badOne<T>(loadRaw<R>(e.g, i), inv);
  return bad;
}

} // namespace
} // namespace ampc_cuda

// foundInf was zeroed on the stream before this launch; a block that sees
// a non-finite value stores 1 (every writer stores the same byte). Nothing
// else is written. With skip set nothing is read, and found_inf stays 0.
extern "C" __global__ void __launch_bounds__(kOptThreads)
    ampc_check_finite(const FiniteEntry *table, int count, int64_t totalChunks,
                      const float *scale, const uint8_t *skip,
                      uint8_t *foundInf) {
  if (skip != nullptr && *skip != 0)
    return;
  const float inv = __fdiv_rn(1.0f, *scale);
  bool bad = false;
  AMPC_FOR_CHUNKS(c, totalChunks) {
    const FiniteEntry &e = table[entryOf(table, count, c)];
    int64_t off = (c - e.firstChunk) * kOptChunk;
    int64_t end = off + kOptChunk < e.n ? off + kOptChunk : e.n;
    switch (e.dtype) {
    case kF32:
      bad |= checkChunk<float>(e, off, end, inv);
      break;
    case kF16:
      bad |= checkChunk<__half>(e, off, end, inv);
      break;
    case kBF16:
      bad |= checkChunk<__nv_bfloat16>(e, off, end, inv);
      break;
    default:
      bad |= checkChunk<double>(e, off, end, inv);
      break;
    }
  }
  if (__syncthreads_or(bad) && threadIdx.x == 0)
    *foundInf = 1;
}

//===----------------------------------------------------------------------===//
// update_scale and lr_schedule: one thread each
//===----------------------------------------------------------------------===//

// Every input is read before any output is written: each new state may be
// the state it replaces.
extern "C" __global__ void ampc_update_scale(const float *scale,
                                             const int64_t *goodSteps,
                                             const int64_t *badSteps,
                                             const uint8_t *foundInf,
                                             float *newScale, int64_t *newGood,
                                             int64_t *newBad, ScaleParams p) {
  float s = *scale;
  int64_t good = *goodSteps, bad = *badSteps;
  if (*foundInf != 0) {
    good = 0;
    if (++bad >= p.decrEveryN) {
      double d = static_cast<float>(static_cast<double>(s) * p.backoff);
      s = static_cast<float>(d < p.minScale ? p.minScale : d);
      bad = 0;
    }
  } else {
    bad = 0;
    if (++good >= p.growthInterval) {
      float g = static_cast<float>(static_cast<double>(s) * p.growth);
      if (isfinite(g))
        s = static_cast<double>(g) > p.maxScale ? static_cast<float>(p.maxScale)
                                                : g;
      good = 0;
    }
  }
  *newScale = s;
  *newGood = good;
  *newBad = bad;
}

extern "C" __global__ void ampc_lr_schedule(const int64_t *stepPtr, void *out,
                                            int outDtype, ScheduleParams p) {
  const int64_t step = *stepPtr;
  double lr = p.baseLr;
  if (p.kind == 1) {
    lr = p.baseLr * pow(p.gamma, static_cast<double>(step / p.stepSize));
  } else if (p.kind == 2) {
    double t = static_cast<double>(step < p.totalSteps ? step : p.totalSteps);
    lr = p.minLr + (p.baseLr - p.minLr) *
                       (1 + cos(3.14159265358979323846 * t /
                                static_cast<double>(p.totalSteps))) /
                       2;
  }
  if (outDtype == kF64)
    *static_cast<double *>(out) = lr;
  else
    *static_cast<float *>(out) = static_cast<float>(lr);
}
