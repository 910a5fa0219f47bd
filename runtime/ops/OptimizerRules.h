//===- OptimizerRules.h - what the optimizer kernels read alike -----------===//
//
// The operand layout of sgd_update, momentum_update, adam_update and
// adagrad_update, and the attributes of every optimizer and loss-scaling
// kernel with their defaults and their rules: read by the checks
// (OptimizerChecks.cpp) and again by the run code of a backend
// (runtime/cpu/Optimizers.cpp and LossScaling.cpp), so that both read the
// same values.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_OPTIMIZERRULES_H
#define AMPC_RUNTIME_OPS_OPTIMIZERRULES_H

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>

namespace ampc::rt::ops {

//===----------------------------------------------------------------------===//
// The updates' operands
//===----------------------------------------------------------------------===//

// How an update's operands are counted: `inputs` inputs before the optional
// skip and loss_scale, the parameter at input `first` (lr is input 0, and
// step input 1 when first is 2) with the tensors after it, and `outputs`
// outputs before the optional working copy.
struct UpdateLayout {
  size_t inputs, first, outputs;
};

// sgd_update(lr, param, grad[, skip]) -> new_param
constexpr UpdateLayout kSgdLayout{3, 1, 1};
// momentum_update(lr, step, param, grad, velocity[, skip]) -> new_param,
// new_velocity
constexpr UpdateLayout kMomentumLayout{5, 2, 2};
// adam_update(lr, step, param, grad, m, v[, skip]) -> new_param, new_m,
// new_v
constexpr UpdateLayout kAdamLayout{6, 2, 3};
// adagrad_update(lr, step, param, grad, accumulator[, skip]) -> new_param,
// new_accumulator
constexpr UpdateLayout kAdagradLayout{5, 2, 2};

//===----------------------------------------------------------------------===//
// The attributes
//===----------------------------------------------------------------------===//

inline Status checkInUnitInterval(const char *name, double v) {
  if (!(v >= 0 && v <= 1))
    return Status::error("attribute '" + std::string(name) +
                         "' must be in [0, 1], got " + num(v));
  return Status::ok();
}

inline Status checkNonNegative(const char *name, double v) {
  if (!(v >= 0))
    return Status::error("attribute '" + std::string(name) +
                         "' must be >= 0, got " + num(v));
  return Status::ok();
}

struct SgdAttrs {
  double weightDecay = 0;
};

inline Status readSgdAttrs(const Attrs &attrs, SgdAttrs &a) {
  return getFloat(attrs, "weight_decay", a.weightDecay);
}

struct MomentumAttrs {
  double alpha = 0, beta = 0, normCoefficient = 0;
  bool nesterov = false;
};

inline Status readMomentumAttrs(const Attrs &attrs, MomentumAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", a.alpha));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "beta", a.beta));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "norm_coefficient", a.normCoefficient));
  std::string mode;
  AMPC_RETURN_IF_ERROR(getString(attrs, "mode", mode));
  if (mode != "standard" && mode != "nesterov")
    return Status::error(
        "attribute 'mode' must be \"standard\" or \"nesterov\", got \"" + mode +
        "\"");
  a.nesterov = mode == "nesterov";
  return Status::ok();
}

struct AdamAttrs {
  double alpha = 0, beta = 0, epsilon = 0, normCoefficient = 0,
         normCoefficientPost = 0, weightDecay = 0;
  bool pytorch = true;
};

inline Status readAdamAttrs(const Attrs &attrs, AdamAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", a.alpha));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "beta", a.beta));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "epsilon", a.epsilon));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "norm_coefficient", a.normCoefficient));
  AMPC_RETURN_IF_ERROR(
      getFloat(attrs, "norm_coefficient_post", a.normCoefficientPost));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "weight_decay", a.weightDecay));
  std::string mode;
  AMPC_RETURN_IF_ERROR(getString(attrs, "mode", mode));
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

struct AdagradAttrs {
  double decayFactor = 0, epsilon = 0, normCoefficient = 0;
};

inline Status readAdagradAttrs(const Attrs &attrs, AdagradAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "decay_factor", a.decayFactor));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "epsilon", a.epsilon));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "norm_coefficient", a.normCoefficient));
  AMPC_RETURN_IF_ERROR(checkNonNegative("decay_factor", a.decayFactor));
  return checkNonNegative("epsilon", a.epsilon);
}

// lr_schedule(step) -> lr
struct ScheduleAttrs {
  double baseLr = 0, gamma = 0, minLr = 0;
  int64_t stepSize = 1, totalSteps = 1;
  std::string kind;
};

inline Status readScheduleAttrs(const Attrs &attrs, ScheduleAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "base_lr", a.baseLr));
  AMPC_RETURN_IF_ERROR(getString(attrs, "kind", a.kind));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "step_size", a.stepSize));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "gamma", a.gamma));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "total_steps", a.totalSteps));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "min_lr", a.minLr));
  if (a.kind != "constant" && a.kind != "step" && a.kind != "cosine")
    return Status::error("attribute 'kind' must be \"constant\", \"step\" or "
                         "\"cosine\", got \"" +
                         a.kind + "\"");
  AMPC_RETURN_IF_ERROR(checkAtLeastOne("step_size", a.stepSize));
  return checkAtLeastOne("total_steps", a.totalSteps);
}

// update_scale(scale, good_steps, bad_steps, found_inf) -> new_scale,
// new_good_steps, new_bad_steps
struct ScaleAttrs {
  double growth = 0, backoff = 0, minScale = 0, maxScale = 0;
  int64_t growthInterval = 0, decrEveryN = 0;
};

inline Status readScaleAttrs(const Attrs &attrs, ScaleAttrs &a) {
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "growth", a.growth));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "backoff", a.backoff));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "growth_interval", a.growthInterval));
  AMPC_RETURN_IF_ERROR(getInt(attrs, "decr_every_n", a.decrEveryN));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "min_scale", a.minScale));
  AMPC_RETURN_IF_ERROR(getFloat(attrs, "max_scale", a.maxScale));
  if (!(a.growth >= 1))
    return Status::error("attribute 'growth' must be >= 1, got " +
                         num(a.growth));
  if (!(a.backoff > 0 && a.backoff <= 1))
    return Status::error("attribute 'backoff' must be in (0, 1], got " +
                         num(a.backoff));
  AMPC_RETURN_IF_ERROR(checkAtLeastOne("growth_interval", a.growthInterval));
  AMPC_RETURN_IF_ERROR(checkAtLeastOne("decr_every_n", a.decrEveryN));
  if (!(a.minScale > 0 && std::isfinite(a.minScale)))
    return Status::error("attribute 'min_scale' must be finite and > 0, got " +
                         num(a.minScale));
  if (!(a.maxScale >= a.minScale))
    return Status::error("attribute 'max_scale' (" + num(a.maxScale) +
                         ") must be >= min_scale (" + num(a.minScale) + ")");
  return Status::ok();
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_OPTIMIZERRULES_H
