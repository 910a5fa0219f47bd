//===- Optimizers.cpp - parameter updates and learning-rate schedules -----===//
//
// sgd_update, momentum_update, adam_update, adagrad_update and lr_schedule;
// dialects/Graph/OptimizerOps.td gives their formulas. Each update loads
// a block of every tensor input before it writes that block of any output,
// so the memory planner may place each new tensor exactly over the one it
// replaces. f16/bf16/f32 compute in f32 and f64 in f64; the per-step scalars
// (learning rate, bias corrections) are formed in double first. An update
// may write one more output, the new parameter rounded to f16/bf16: the
// working copy of an f32 master, stored from the same block. An update may
// take one more input, skip (i1): when it is set the update leaves every
// output as the state it replaces, bit for bit (the step that loss scaling
// found to overflow), and reads neither lr nor step. And after skip one
// more, loss_scale (f32): the gradient is read as grad * (1.0f /
// loss_scale), in the compute type, as check_finite forms it; an f32
// parameter's gradient may then be f16 or bf16, widened as it is loaded.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/OptimizerMath.h"
#include "runtime/ops/OptimizerRules.h"

#include <cmath>
#include <cstring>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

// `step` counts the updates done before this one; the bias corrections
// and decays are only defined for step >= 0.
Status readStep(const TensorView &t, int64_t &step) {
  step = elementAsInt(t, 0);
  if (step < 0)
    return Status::error("step is " + std::to_string(step) +
                         ", but it counts the updates already done and must "
                         "be >= 0");
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The elementwise driver
//===----------------------------------------------------------------------===//

constexpr int64_t kBlock = 256;

// Runs fn(in, out, n) over blocks of the tensors call.inputs[first ..
// first + NIn) and the NOut outputs, in compute type T. Each block is
// loaded into local arrays before fn and stored after it, so an output
// placed exactly over an input is safe, and fn's loops see arrays that
// cannot alias and vectorize.
template <typename T, size_t NIn, size_t NOut, typename Fn>
void forEachBlock(const OpCall &call, size_t first, const CpuContext &ctx,
                  Fn fn) {
  int64_t n = call.inputs[first].numElements();
  int64_t blocks = (n + kBlock - 1) / kBlock;
  // The loss_scale after skip: the gradient (input first + 1) is read
  // unscaled (unscaleFactor).
  const size_t scaleAt = first + NIn + 1;
  const bool scaled = hasInput(call, scaleAt);
  const T inv =
      scaled ? static_cast<T>(unscaleFactor(call.inputs[scaleAt])) : T(1);
  parallelFor(ctx, blocks, 64, [&](int64_t b, int64_t e) {
    alignas(64) T in[NIn][kBlock];
    alignas(64) T out[NOut][kBlock];
    for (int64_t blk = b; blk < e; ++blk) {
      int64_t off = blk * kBlock, len = std::min(kBlock, n - off);
      for (size_t k = 0; k < NIn; ++k)
        loadC(call.inputs[first + k], off, len, in[k]);
      if (scaled)
        for (int64_t i = 0; i < len; ++i)
          in[1][i] *= inv;
      fn(in, out, len);
      for (size_t k = 0; k < NOut; ++k)
        storeC(out[k], len, call.outputs[k], off);
      if (call.outputs.size() > NOut) // the working copy of out[0]
        storeC(out[0], len, call.outputs[NOut], off);
    }
  });
}

// Square roots in a loop of their own: std::sqrt may set errno, which
// keeps a loop that calls it from vectorizing, so the loops around it stay
// free of calls.
template <typename T> void sqrtRun(const T *x, T *y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = std::sqrt(x[i]);
}

// A skipped update: each output that is not already the input it replaces
// (param for output 0, then the state tensors after grad) gets a copy of
// its bytes, and the working copy gets the old parameter rounded, which is
// what it held.
template <typename T>
void keepState(const OpCall &call, size_t first, size_t outputs,
               const CpuContext &ctx) {
  const TensorView &param = call.inputs[first];
  const int64_t n = param.numElements(), size = sizeOf(param.dtype);
  const int64_t chunk = 64 * kBlock, chunks = (n + chunk - 1) / chunk;
  parallelFor(ctx, chunks, 2, [&](int64_t b, int64_t e) {
    alignas(64) T buf[kBlock];
    for (int64_t c = b; c < e; ++c) {
      int64_t off = c * chunk, len = std::min(chunk, n - off);
      for (size_t k = 0; k < outputs; ++k) {
        const TensorView &src = call.inputs[k == 0 ? first : first + 1 + k];
        char *dst = static_cast<char *>(call.outputs[k].data);
        if (dst != src.data)
          std::memcpy(dst + off * size,
                      static_cast<const char *>(src.data) + off * size,
                      static_cast<size_t>(len * size));
      }
      if (call.outputs.size() > outputs)
        for (int64_t o = off; o < off + len; o += kBlock) {
          int64_t m = std::min(kBlock, off + len - o);
          loadC(param, o, m, buf);
          storeC(buf, m, call.outputs[outputs], o);
        }
    }
  });
}

// f64 tensors compute in double, the others in float. Each Kernel<T> says
// how many inputs it has before skip, where param is among them and how
// many outputs it writes before the working copy (kLayout, the one the
// check counts by).
template <template <typename> class Kernel>
Status dispatch(const OpCall &call, CpuContext &ctx) {
  constexpr UpdateLayout l = Kernel<float>::kLayout;
  const bool f64 = call.outputs[0].dtype == DType::F64;
  if (skipped(call, l.inputs)) {
    if (f64)
      keepState<double>(call, l.first, l.outputs, ctx);
    else
      keepState<float>(call, l.first, l.outputs, ctx);
    return Status::ok();
  }
  if (f64)
    return Kernel<double>::run(call, ctx);
  return Kernel<float>::run(call, ctx);
}

//===----------------------------------------------------------------------===//
// sgd_update(lr, param, grad[, skip]) -> new_param
//===----------------------------------------------------------------------===//

template <typename T> struct Sgd {
  static constexpr UpdateLayout kLayout = kSgdLayout;
  static Status run(const OpCall &call, CpuContext &ctx) {
    SgdAttrs a;
    AMPC_RETURN_IF_ERROR(readSgdAttrs(*call.attrs, a));
    const T lr = static_cast<T>(elementAsDouble(call.inputs[0], 0)),
            decay = static_cast<T>(a.weightDecay);
    forEachBlock<T, 2, 1>(call, 1, ctx, [&](auto in, auto out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T p = in[0][i];
        out[0][i] = p - lr * ops::withL2(in[1][i], decay, p);
      }
    });
    return Status::ok();
  }
};

//===----------------------------------------------------------------------===//
// momentum_update(lr, step, param, grad, velocity[, skip]) -> new_param,
// new_velocity
//===----------------------------------------------------------------------===//

template <typename T> struct Momentum {
  static constexpr UpdateLayout kLayout = kMomentumLayout;
  static Status run(const OpCall &call, CpuContext &ctx) {
    MomentumAttrs a;
    AMPC_RETURN_IF_ERROR(readMomentumAttrs(*call.attrs, a));
    int64_t step = 0;
    AMPC_RETURN_IF_ERROR(readStep(call.inputs[1], step));
    const T lr = static_cast<T>(elementAsDouble(call.inputs[0], 0)),
            alpha = static_cast<T>(a.alpha),
            // The first update takes the whole gradient (ONNX's rule, and
            // PyTorch's velocity starting as a copy of the gradient).
        beta = static_cast<T>(step > 0 ? a.beta : 1.0),
            nc = static_cast<T>(a.normCoefficient);
    bool nesterov = a.nesterov;
    forEachBlock<T, 3, 2>(call, 2, ctx, [&](auto in, auto out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T p = in[0][i], g = ops::withL2(in[1][i], nc, p), v = in[2][i];
        T vNew = alpha * v + beta * g;
        out[0][i] = nesterov ? p - lr * (g + alpha * vNew) : p - lr * vNew;
        out[1][i] = vNew;
      }
    });
    return Status::ok();
  }
};

//===----------------------------------------------------------------------===//
// adam_update(lr, step, param, grad, m, v[, skip]) -> new_param, new_m,
// new_v
//===----------------------------------------------------------------------===//

template <typename T> struct Adam {
  static constexpr UpdateLayout kLayout = kAdamLayout;
  static Status run(const OpCall &call, CpuContext &ctx) {
    AdamAttrs a;
    AMPC_RETURN_IF_ERROR(readAdamAttrs(*call.attrs, a));
    int64_t step = 0;
    AMPC_RETURN_IF_ERROR(readStep(call.inputs[1], step));
    double lr = elementAsDouble(call.inputs[0], 0);
    const T alpha = static_cast<T>(a.alpha), beta = static_cast<T>(a.beta),
            oneMinusAlpha = static_cast<T>(1 - a.alpha),
            oneMinusBeta = static_cast<T>(1 - a.beta),
            eps = static_cast<T>(a.epsilon),
            nc = static_cast<T>(a.normCoefficient);
    // The modes update the moments alike and differ in the parameter step:
    //   pytorch: p * decay - stepSize * m / (sqrt(v) / bc2Sqrt + eps),
    //   onnx:    keep * (p - rate * m / (sqrt(v) + eps)).
    const bool pytorch = a.pytorch;
    T decay = 1, stepSize = 0, bc2Sqrt = 1, rate = 0, keep = 1;
    if (pytorch) {
      double t = static_cast<double>(step) + 1;
      decay = static_cast<T>(1 - lr * a.weightDecay);
      stepSize = static_cast<T>(lr / (1 - std::pow(a.alpha, t)));
      bc2Sqrt = static_cast<T>(std::sqrt(1 - std::pow(a.beta, t)));
    } else {
      double t = static_cast<double>(step);
      rate = static_cast<T>(step > 0 ? lr * std::sqrt(1 - std::pow(a.beta, t)) /
                                           (1 - std::pow(a.alpha, t))
                                     : lr);
      keep = static_cast<T>(1 - a.normCoefficientPost);
    }
    forEachBlock<T, 4, 3>(call, 2, ctx, [&](auto in, auto out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T g = ops::withL2(in[1][i], nc, in[0][i]);
        out[1][i] = alpha * in[2][i] + oneMinusAlpha * g;
        out[2][i] = beta * in[3][i] + oneMinusBeta * (g * g);
      }
      T root[kBlock];
      sqrtRun(out[2], root, n);
      if (pytorch)
        for (int64_t i = 0; i < n; ++i)
          out[0][i] = in[0][i] * decay -
                      stepSize * (out[1][i] / (root[i] / bc2Sqrt + eps));
      else
        for (int64_t i = 0; i < n; ++i)
          out[0][i] = keep * (in[0][i] - rate * (out[1][i] / (root[i] + eps)));
    });
    return Status::ok();
  }
};

//===----------------------------------------------------------------------===//
// adagrad_update(lr, step, param, grad, accumulator[, skip]) -> new_param,
// new_accumulator
//===----------------------------------------------------------------------===//

template <typename T> struct Adagrad {
  static constexpr UpdateLayout kLayout = kAdagradLayout;
  static Status run(const OpCall &call, CpuContext &ctx) {
    AdagradAttrs a;
    AMPC_RETURN_IF_ERROR(readAdagradAttrs(*call.attrs, a));
    int64_t step = 0;
    AMPC_RETURN_IF_ERROR(readStep(call.inputs[1], step));
    double lr = elementAsDouble(call.inputs[0], 0);
    const T rate = static_cast<T>(
                lr / (1 + static_cast<double>(step) * a.decayFactor)),
            eps = static_cast<T>(a.epsilon),
            nc = static_cast<T>(a.normCoefficient);
    forEachBlock<T, 3, 2>(call, 2, ctx, [&](auto in, auto out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T g = ops::withL2(in[1][i], nc, in[0][i]);
        out[1][i] = in[2][i] + g * g;
      }
      T root[kBlock];
      sqrtRun(out[1], root, n);
      for (int64_t i = 0; i < n; ++i) {
        T g = ops::withL2(in[1][i], nc, in[0][i]);
        out[0][i] = in[0][i] - rate * g / (root[i] + eps);
      }
    });
    return Status::ok();
  }
};

//===----------------------------------------------------------------------===//
// lr_schedule(step) -> lr
//===----------------------------------------------------------------------===//

constexpr double kPi = 3.14159265358979323846;

Status runSchedule(const OpCall &call, CpuContext &) {
  ScheduleAttrs a;
  AMPC_RETURN_IF_ERROR(readScheduleAttrs(*call.attrs, a));
  int64_t step = 0;
  AMPC_RETURN_IF_ERROR(readStep(call.inputs[0], step));
  double lr = a.baseLr;
  if (a.kind == "step") {
    lr = a.baseLr * std::pow(a.gamma, static_cast<double>(step / a.stepSize));
  } else if (a.kind == "cosine") {
    double t = static_cast<double>(std::min(step, a.totalSteps));
    lr = a.minLr +
         (a.baseLr - a.minLr) *
             (1 + std::cos(kPi * t / static_cast<double>(a.totalSteps))) / 2;
  }
  storeF64(&lr, 1, call.outputs[0], 0);
  return Status::ok();
}

} // namespace

void addOptimizerKernels(std::vector<KernelEntry> &out) {
  out.push_back({"sgd_update", dispatch<Sgd>});
  out.push_back({"momentum_update", dispatch<Momentum>});
  out.push_back({"adam_update", dispatch<Adam>});
  out.push_back({"adagrad_update", dispatch<Adagrad>});
  out.push_back({"lr_schedule", runSchedule});
}

} // namespace ampc::rt::cpu
