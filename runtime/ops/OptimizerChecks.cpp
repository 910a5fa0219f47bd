//===- OptimizerChecks.cpp - what the training-step calls must be ---------===//
//
// sgd_update, momentum_update, adam_update, adagrad_update, lr_schedule,
// check_finite and update_scale; dialects/Graph/OptimizerOps.td gives their
// formulas. An update may write one more output, the new parameter rounded
// to f16/bf16 (the working copy of an f32 master), and take one more input,
// skip (i1), and after it one more, loss_scale (f32), with which an f32
// parameter's gradient may be f16 or bf16. The attributes are read as the
// backends read them (OptimizerRules.h).
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/OptimizerRules.h"
#include "runtime/ops/Shapes.h"

#include <initializer_list>
#include <string>

namespace ampc::rt::ops {
namespace {

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

// The operands every update checks alike, counted as the backends count
// them (UpdateLayout): lr, step (when param is not input 1), param with the
// tensors after it, the optional skip and the optional working copy.
Status checkUpdate(const OpCall &call, const UpdateLayout &layout,
                   std::initializer_list<const char *> inputs,
                   std::initializer_list<const char *> outputs) {
  AMPC_RETURN_IF_ERROR(checkArity(call, layout.inputs, layout.inputs + 2,
                                  withWorkingCopy(call, layout.outputs)));
  AMPC_RETURN_IF_ERROR(checkGuards(call, layout.inputs));
  AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[0], "lr", false));
  if (layout.first == 2)
    AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[1], "step", true));
  return checkTensors(call, layout.first, inputs, outputs);
}

} // namespace

//===----------------------------------------------------------------------===//
// sgd_update(lr, param, grad[, skip]) -> new_param
//===----------------------------------------------------------------------===//

Status checkSgdUpdate(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate(call, kSgdLayout, {"grad"}, {"new_param"}));
  SgdAttrs a;
  return readSgdAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// momentum_update(lr, step, param, grad, velocity[, skip]) -> new_param,
// new_velocity
//===----------------------------------------------------------------------===//

Status checkMomentumUpdate(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate(call, kMomentumLayout, {"grad", "velocity"},
                                   {"new_param", "new_velocity"}));
  MomentumAttrs a;
  return readMomentumAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// adam_update(lr, step, param, grad, m, v[, skip]) -> new_param, new_m,
// new_v
//===----------------------------------------------------------------------===//

Status checkAdamUpdate(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate(call, kAdamLayout, {"grad", "m", "v"},
                                   {"new_param", "new_m", "new_v"}));
  AdamAttrs a;
  return readAdamAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// adagrad_update(lr, step, param, grad, accumulator[, skip]) -> new_param,
// new_accumulator
//===----------------------------------------------------------------------===//

Status checkAdagradUpdate(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkUpdate(call, kAdagradLayout,
                                   {"grad", "accumulator"},
                                   {"new_param", "new_accumulator"}));
  AdagradAttrs a;
  return readAdagradAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// lr_schedule(step) -> lr
//===----------------------------------------------------------------------===//

Status checkLrSchedule(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  AMPC_RETURN_IF_ERROR(checkScalar(call.inputs[0], "step", true));
  AMPC_RETURN_IF_ERROR(checkScalar(call.outputs[0], "lr", false));
  ScheduleAttrs a;
  return readScheduleAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// check_finite(g_0 .. g_{n-1}, scale[, skip]) -> found_inf
//===----------------------------------------------------------------------===//
//
// skip is told from a gradient by its type (endsWithSkip).

Status checkCheckFinite(const OpCall &call) {
  if (!call.attrs)
    return Status::error("has no attribute list");
  if (call.outputs.size() != 1)
    return Status::error("expects 1 output (found_inf), got " +
                         std::to_string(call.outputs.size()));
  if (call.inputs.size() < 2)
    return Status::error("expects the gradients, then scale, then an "
                         "optional skip, got " +
                         std::to_string(call.inputs.size()) + " inputs");
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (!call.present[i])
      return Status::error("input " + std::to_string(i) +
                           " is required but marked absent");
  const size_t n = call.inputs.size() - (endsWithSkip(call) ? 2 : 1);
  if (n == 0)
    return Status::error("has no gradient to check");
  for (size_t i = 0; i < n; ++i)
    AMPC_RETURN_IF_ERROR(
        checkFloat(call.inputs[i], "gradient " + std::to_string(i)));
  AMPC_RETURN_IF_ERROR(checkScalarOf(
      call.inputs[n], "scale (input " + std::to_string(n) + ")", DType::F32));
  return checkScalarOf(call.outputs[0], "found_inf (output 0)", DType::I1);
}

//===----------------------------------------------------------------------===//
// update_scale(scale, good_steps, bad_steps, found_inf) -> new_scale,
// new_good_steps, new_bad_steps
//===----------------------------------------------------------------------===//

Status checkUpdateScale(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 4, 4, 3));
  AMPC_RETURN_IF_ERROR(checkScalarOf(call.inputs[0], "scale", DType::F32));
  AMPC_RETURN_IF_ERROR(checkScalarOf(call.inputs[1], "good_steps", DType::I64));
  AMPC_RETURN_IF_ERROR(checkScalarOf(call.inputs[2], "bad_steps", DType::I64));
  AMPC_RETURN_IF_ERROR(checkScalarOf(call.inputs[3], "found_inf", DType::I1));
  AMPC_RETURN_IF_ERROR(checkScalarOf(call.outputs[0], "new_scale", DType::F32));
  AMPC_RETURN_IF_ERROR(
      checkScalarOf(call.outputs[1], "new_good_steps", DType::I64));
  AMPC_RETURN_IF_ERROR(
      checkScalarOf(call.outputs[2], "new_bad_steps", DType::I64));
  ScaleAttrs a;
  return readScaleAttrs(*call.attrs, a);
}

//===----------------------------------------------------------------------===//
// all_reduce_start(grads..., [skip]) -> exchange {world_size}
// all_reduce_wait(exchange, [skip]) -> means... {world_size}
//===----------------------------------------------------------------------===//

namespace {

Status checkWorldSize(const OpCall &call) {
  if (!call.attrs)
    return Status::error("has no attribute list");
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "world_size", worldSize));
  if (worldSize < 2)
    return Status::error("world_size must be >= 2, got " +
                         std::to_string(worldSize));
  return Status::ok();
}

/// The exchange buffer of `elements` values, named `what`: f32, or the
/// one 16-bit type of every gradient in `grads`.
Status checkExchange(const TensorView &t, const std::string &what,
                     int64_t elements, const std::vector<TensorView> &grads) {
  if (t.shape.size() != 1 || t.shape[0] != elements ||
      (t.dtype != DType::F32 && t.dtype != DType::F16 &&
       t.dtype != DType::BF16))
    return Status::error(what + " must be the exchange buffer of " +
                         std::to_string(elements) +
                         " f32, f16 or bf16 values, got " + t.typeStr());
  if (t.dtype != DType::F32)
    for (const TensorView &g : grads)
      if (g.dtype != t.dtype)
        return Status::error(what + " is " + t.typeStr() +
                             ": a 16-bit exchange carries gradients of its "
                             "type only, got " +
                             g.typeStr());
  return Status::ok();
}

/// A trailing i1 skip flag after the first `count` of `inputs`.
Status checkOptionalSkip(const OpCall &call, size_t count) {
  if (call.inputs.size() == count)
    return Status::ok();
  if (call.inputs.size() != count + 1)
    return Status::error("expects " + std::to_string(count) + " or " +
                         std::to_string(count + 1) + " inputs (a skip flag " +
                         "last), got " + std::to_string(call.inputs.size()));
  return checkScalarOf(call.inputs.back(), "skip", DType::I1);
}

Status checkGradient(const TensorView &g, const std::string &what) {
  if (g.dtype != DType::F32 && g.dtype != DType::F16 && g.dtype != DType::BF16)
    return Status::error(what + " is " + g.typeStr() +
                         ": expected f32, f16 or bf16");
  return Status::ok();
}

} // namespace

Status checkAllReduceStart(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkWorldSize(call));
  // The gradients, then an optional i1 skip flag.
  size_t grads = call.inputs.size();
  if (grads > 0 && call.inputs.back().dtype == DType::I1)
    --grads;
  if (grads == 0)
    return Status::error("has no gradient");
  AMPC_RETURN_IF_ERROR(checkOptionalSkip(call, grads));
  if (call.outputs.size() != 1)
    return Status::error("expects one output (the exchange buffer), got " +
                         std::to_string(call.outputs.size()));
  int64_t elements = 0;
  for (size_t i = 0; i < grads; ++i) {
    if (!call.present[i])
      return Status::error("input " + std::to_string(i) +
                           " is required but marked absent");
    AMPC_RETURN_IF_ERROR(
        checkGradient(call.inputs[i], "gradient " + std::to_string(i)));
    elements += call.inputs[i].numElements();
  }
  return checkExchange(call.outputs[0], "output 0", elements,
                       {call.inputs.begin(), call.inputs.begin() + grads});
}

Status checkAllReduceWait(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkWorldSize(call));
  if (call.inputs.empty() || !call.present[0])
    return Status::error("has no exchange buffer");
  AMPC_RETURN_IF_ERROR(checkOptionalSkip(call, 1));
  if (call.outputs.empty())
    return Status::error("has no output");
  int64_t elements = 0;
  for (size_t i = 0; i < call.outputs.size(); ++i) {
    AMPC_RETURN_IF_ERROR(
        checkGradient(call.outputs[i], "output " + std::to_string(i)));
    elements += call.outputs[i].numElements();
  }
  return checkExchange(call.inputs[0], "input 0", elements, call.outputs);
}

} // namespace ampc::rt::ops
