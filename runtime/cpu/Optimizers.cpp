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

#include <cmath>
#include <cstring>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

//===----------------------------------------------------------------------===//
// Checks
//===----------------------------------------------------------------------===//

Status checkScalar(const TensorView &t, const std::string &what, bool isStep) {
  bool typeOk = isStep ? t.dtype == DType::I64
                       : t.dtype == DType::F32 || t.dtype == DType::F64;
  if (!typeOk || t.rank() != 0)
    return Status::error(what + " must be a scalar (rank 0) " +
                         (isStep ? "i64" : "f32 or f64") + " tensor, got " +
                         t.typeStr());
  return Status::ok();
}

// The parameter (input `first`), the tensors after it and every output
// share one float type and shape, except the gradient (the first tensor
// after the parameter), which may be f16 or bf16 for an f32 parameter.
Status checkTensors(const OpCall &call, size_t first,
                    std::initializer_list<const char *> inputs,
                    std::initializer_list<const char *> outputs) {
  const TensorView &param = call.inputs[first];
  AMPC_RETURN_IF_ERROR(checkFloat(param, "param"));
  size_t i = first + 1;
  for (const char *name : inputs) {
    const TensorView &t = call.inputs[i++];
    bool widened = i == first + 2 && param.dtype == DType::F32 &&
                   (t.dtype == DType::F16 || t.dtype == DType::BF16);
    if (!widened && t.dtype != param.dtype)
      return Status::error(
          std::string(name) + " is " + std::string(rt::name(t.dtype)) +
          " but param is " + std::string(rt::name(param.dtype)) +
          (i == first + 2 ? " (a gradient has the parameter's dtype, or "
                            "f16/bf16 for an f32 parameter)"
                          : ""));
    if (t.shape != param.shape)
      return Status::error(std::string(name) + " has shape " +
                           shapeStr(t.shape) + " but param has " +
                           shapeStr(param.shape));
  }
  size_t k = 0;
  for (const char *name : outputs)
    AMPC_RETURN_IF_ERROR(
        checkOutput(call, k++, name, param.shape, param.dtype));
  if (call.outputs.size() > k) {
    const TensorView &w = call.outputs[k];
    if (w.dtype != DType::F16 && w.dtype != DType::BF16)
      return Status::error("working_copy (output " + std::to_string(k) +
                           ") must be f16 or bf16, got " +
                           std::string(name(w.dtype)));
    AMPC_RETURN_IF_ERROR(checkShape(w, "working_copy", param.shape));
  }
  return Status::ok();
}

// The outputs an update expects: its own, plus the working copy if there
// is one more.
size_t withWorkingCopy(const OpCall &call, size_t outputs) {
  return call.outputs.size() == outputs + 1 ? outputs + 1 : outputs;
}

// The optional skip flag after an update's `inputs` inputs, and the
// optional loss_scale after it, which needs skip: a loss-scaled gradient
// can overflow, and such a step must be skipped.
Status checkGuards(const OpCall &call, size_t inputs) {
  if (hasInput(call, inputs))
    AMPC_RETURN_IF_ERROR(checkScalarOf(
        call.inputs[inputs], "skip (input " + std::to_string(inputs) + ")",
        DType::I1));
  if (!hasInput(call, inputs + 1))
    return Status::ok();
  if (!hasInput(call, inputs))
    return Status::error("has loss_scale (input " + std::to_string(inputs + 1) +
                         ") but no skip (input " + std::to_string(inputs) +
                         "): a loss-scaled gradient can overflow, and the "
                         "step must be able to skip the update");
  return checkScalarOf(call.inputs[inputs + 1],
                       "loss_scale (input " + std::to_string(inputs + 1) + ")",
                       DType::F32);
}

Status checkInUnitInterval(const char *name, double v) {
  if (!(v >= 0 && v <= 1))
    return Status::error("attribute '" + std::string(name) +
                         "' must be in [0, 1], got " + num(v));
  return Status::ok();
}

Status checkNonNegative(const char *name, double v) {
  if (!(v >= 0))
    return Status::error("attribute '" + std::string(name) +
                         "' must be >= 0, got " + num(v));
  return Status::ok();
}

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
// how many inputs it has before skip (kInputs), where param is among them
// (kFirst) and how many outputs it writes before the working copy
// (kOutputs).
template <template <typename> class Kernel>
Status dispatch(const OpCall &call, CpuContext &ctx) {
  using K = Kernel<float>;
  const bool f64 = call.outputs[0].dtype == DType::F64;
  if (skipped(call, K::kInputs)) {
    if (f64)
      keepState<double>(call, K::kFirst, K::kOutputs, ctx);
    else
      keepState<float>(call, K::kFirst, K::kOutputs, ctx);
    return Status::ok();
  }
  if (f64)
    return Kernel<double>::run(call, ctx);
  return Kernel<float>::run(call, ctx);
}

// The operands every update checks alike, counted as dispatch counts them:
// lr, step (when param is not input 1), param with the tensors after it,
// the optional skip and the optional working copy.
template <template <typename> class Kernel>
Status checkUpdate(const OpCall &call,
                   std::initializer_list<const char *> inputs,
                   std::initializer_list<const char *> outputs) {
  using K = Kernel<float>;
  AMPC_RETURN_IF_ERROR(checkArity(call, K::kInputs, K::kInputs + 2,
                                  withWorkingCopy(call, K::kOutputs)));
  AMPC_RETURN_IF_ERROR(checkGuards(call, K::kInputs));
  AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[0], "lr", false));
  if (K::kFirst == 2)
    AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[1], "step", true));
  return checkTensors(call, K::kFirst, inputs, outputs);
}

//===----------------------------------------------------------------------===//
// sgd_update(lr, param, grad[, skip]) -> new_param
//===----------------------------------------------------------------------===//

template <typename T> struct Sgd {
  static constexpr size_t kInputs = 3, kFirst = 1, kOutputs = 1;
  static Status run(const OpCall &call, CpuContext &ctx) {
    double wd = 0;
    AMPC_RETURN_IF_ERROR(getFloat(*call.attrs, "weight_decay", 0.0, wd));
    const T lr = static_cast<T>(elementAsDouble(call.inputs[0], 0)),
            decay = static_cast<T>(wd);
    forEachBlock<T, 2, 1>(call, 1, ctx, [&](auto in, auto out, int64_t n) {
      for (int64_t i = 0; i < n; ++i) {
        T p = in[0][i], g = in[1][i];
        out[0][i] = p - lr * (g + decay * p);
      }
    });
    return Status::ok();
  }
};

Status checkSgd(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate<Sgd>(call, {"grad"}, {"new_param"}));
  double wd = 0;
  return getFloat(*call.attrs, "weight_decay", 0.0, wd);
}

//===----------------------------------------------------------------------===//
// momentum_update(lr, step, param, grad, velocity[, skip]) -> new_param,
// new_velocity
//===----------------------------------------------------------------------===//

struct MomentumAttrs {
  double alpha = 0, beta = 0, normCoefficient = 0;
  bool nesterov = false;
};

Status readMomentumAttrs(const Attrs &attrs, MomentumAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", std::nullopt, a.alpha));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "beta", std::nullopt, a.beta));
  AMPC_RETURN_IF_ERROR(
      getFloat(attrs, "norm_coefficient", 0.0, a.normCoefficient));
  std::string mode;
  AMPC_RETURN_IF_ERROR(getString(attrs, "mode", std::string("standard"), mode));
  if (mode != "standard" && mode != "nesterov")
    return Status::error(
        "attribute 'mode' must be \"standard\" or \"nesterov\", got \"" + mode +
        "\"");
  a.nesterov = mode == "nesterov";
  return Status::ok();
}

template <typename T> struct Momentum {
  static constexpr size_t kInputs = 5, kFirst = 2, kOutputs = 2;
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
        T p = in[0][i], g = nc * p + in[1][i], v = in[2][i];
        T vNew = alpha * v + beta * g;
        out[0][i] = nesterov ? p - lr * (g + alpha * vNew) : p - lr * vNew;
        out[1][i] = vNew;
      }
    });
    return Status::ok();
  }
};

Status checkMomentum(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate<Momentum>(call, {"grad", "velocity"},
                                             {"new_param", "new_velocity"}));
  MomentumAttrs a;
  return readMomentumAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// adam_update(lr, step, param, grad, m, v[, skip]) -> new_param, new_m,
// new_v
//===----------------------------------------------------------------------===//

struct AdamAttrs {
  double alpha = 0, beta = 0, epsilon = 0, normCoefficient = 0,
         normCoefficientPost = 0, weightDecay = 0;
  bool pytorch = true;
};

Status readAdamAttrs(const Attrs &attrs, AdamAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", 0.9, a.alpha));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "beta", 0.999, a.beta));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "epsilon", 1e-8, a.epsilon));
  AMPC_RETURN_IF_ERROR(
      getFloat(attrs, "norm_coefficient", 0.0, a.normCoefficient));
  AMPC_RETURN_IF_ERROR(
      getFloat(attrs, "norm_coefficient_post", 0.0, a.normCoefficientPost));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "weight_decay", 0.0, a.weightDecay));
  std::string mode;
  AMPC_RETURN_IF_ERROR(getString(attrs, "mode", std::string("pytorch"), mode));
  if (mode != "onnx" && mode != "pytorch")
    return Status::error(
        "attribute 'mode' must be \"onnx\" or \"pytorch\", got \"" + mode +
        "\"");
  a.pytorch = mode == "pytorch";
  AMPC_RETURN_IF_ERROR(checkInUnitInterval("alpha", a.alpha));
  AMPC_RETURN_IF_ERROR(checkInUnitInterval("beta", a.beta));
  AMPC_RETURN_IF_ERROR(checkNonNegative("epsilon", a.epsilon));
  // PyTorch divides by 1 - alpha^t and 1 - beta^t from the first step on.
  if (a.pytorch && (a.alpha == 1 || a.beta == 1))
    return Status::error(
        "attribute '" + std::string(a.alpha == 1 ? "alpha" : "beta") +
        "' must be < 1 in \"pytorch\" mode, whose bias correction divides "
        "by 1 - " +
        (a.alpha == 1 ? "alpha" : "beta") + "^(step + 1)");
  // Each mode has its own decoupled decay; the other one's would be
  // silently ignored.
  if (!a.pytorch && a.weightDecay != 0)
    return Status::error("attribute 'weight_decay' is used in \"pytorch\" "
                         "mode only; \"onnx\" mode has "
                         "norm_coefficient_post");
  if (a.pytorch && a.normCoefficientPost != 0)
    return Status::error("attribute 'norm_coefficient_post' is used in "
                         "\"onnx\" mode only; \"pytorch\" mode has "
                         "weight_decay");
  return Status::ok();
}

template <typename T> struct Adam {
  static constexpr size_t kInputs = 6, kFirst = 2, kOutputs = 3;
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
        T g = in[1][i] + nc * in[0][i];
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

Status checkAdam(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate<Adam>(call, {"grad", "m", "v"},
                                         {"new_param", "new_m", "new_v"}));
  AdamAttrs a;
  return readAdamAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// adagrad_update(lr, step, param, grad, accumulator[, skip]) -> new_param,
// new_accumulator
//===----------------------------------------------------------------------===//

struct AdagradAttrs {
  double decayFactor = 0, epsilon = 0, normCoefficient = 0;
};

Status readAdagradAttrs(const Attrs &attrs, AdagradAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "decay_factor", 0.0, a.decayFactor));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "epsilon", 1e-6, a.epsilon));
  AMPC_RETURN_IF_ERROR(
      getFloat(attrs, "norm_coefficient", 0.0, a.normCoefficient));
  AMPC_RETURN_IF_ERROR(checkNonNegative("decay_factor", a.decayFactor));
  return checkNonNegative("epsilon", a.epsilon);
}

template <typename T> struct Adagrad {
  static constexpr size_t kInputs = 5, kFirst = 2, kOutputs = 2;
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
        T g = nc * in[0][i] + in[1][i];
        out[1][i] = in[2][i] + g * g;
      }
      T root[kBlock];
      sqrtRun(out[1], root, n);
      for (int64_t i = 0; i < n; ++i) {
        T g = nc * in[0][i] + in[1][i];
        out[0][i] = in[0][i] - rate * g / (root[i] + eps);
      }
    });
    return Status::ok();
  }
};

Status checkAdagrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate<Adagrad>(call, {"grad", "accumulator"},
                                            {"new_param", "new_accumulator"}));
  AdagradAttrs a;
  return readAdagradAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// lr_schedule(step) -> lr
//===----------------------------------------------------------------------===//

struct ScheduleAttrs {
  double baseLr = 0, gamma = 0, minLr = 0;
  int64_t stepSize = 1, totalSteps = 1;
  std::string kind;
};

Status readScheduleAttrs(const Attrs &attrs, ScheduleAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "base_lr", std::nullopt, a.baseLr));
  AMPC_RETURN_IF_ERROR(
      getString(attrs, "kind", std::string("constant"), a.kind));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "step_size", 1, a.stepSize));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "gamma", 0.1, a.gamma));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "total_steps", 1, a.totalSteps));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "min_lr", 0.0, a.minLr));
  if (a.kind != "constant" && a.kind != "step" && a.kind != "cosine")
    return Status::error("attribute 'kind' must be \"constant\", \"step\" or "
                         "\"cosine\", got \"" +
                         a.kind + "\"");
  AMPC_RETURN_IF_ERROR(checkAtLeastOne("step_size", a.stepSize));
  return checkAtLeastOne("total_steps", a.totalSteps);
}

Status checkSchedule(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[0], "step", true));
  AMPC_RETURN_IF_ERROR(checkScalar(call.outputs[0], "lr", false));
  ScheduleAttrs a;
  return readScheduleAttrs(*call.attrs, a);
}

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
  out.push_back({"sgd_update", checkSgd, dispatch<Sgd>});
  out.push_back({"momentum_update", checkMomentum, dispatch<Momentum>});
  out.push_back({"adam_update", checkAdam, dispatch<Adam>});
  out.push_back({"adagrad_update", checkAdagrad, dispatch<Adagrad>});
  out.push_back({"lr_schedule", checkSchedule, runSchedule});
}

} // namespace ampc::rt::cpu
