//===- CallChecks.h - the pieces every kernel check is made of ------------===//
//
// Validating a call without data (arity, dtypes, attributes, shapes), with
// messages that name the operand or attribute.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_CALLCHECKS_H
#define AMPC_RUNTIME_OPS_CALLCHECKS_H

#include "runtime/Status.h"
#include "runtime/ops/OpCall.h"
#include "runtime/ops/Shapes.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::rt::ops {

// `required` inputs must all be present; up to `total` may be listed.
inline Status checkArity(const OpCall &call, size_t required, size_t total,
                         size_t outputs) {
  if (call.inputs.size() < required || call.inputs.size() > total)
    return Status::error(
        "expects " +
        (required == total
             ? std::to_string(required)
             : std::to_string(required) + " to " + std::to_string(total)) +
        " inputs, got " + std::to_string(call.inputs.size()));
  for (size_t i = 0; i < required; ++i)
    if (!call.present[i])
      return Status::error("input " + std::to_string(i) +
                           " is required but marked absent");
  if (call.outputs.size() != outputs)
    return Status::error("expects " + std::to_string(outputs) +
                         " outputs, got " +
                         std::to_string(call.outputs.size()));
  if (!call.attrs)
    return Status::error("has no attribute list");
  return Status::ok();
}

inline Status checkFloat(const TensorView &t, const std::string &what) {
  if (!isFloat(t.dtype))
    return Status::error(what + " must be f32, f16, bf16 or f64, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkNumeric(const TensorView &t, const std::string &what) {
  if (!isFloat(t.dtype) && !isInt(t.dtype))
    return Status::error(what + " must be a float or i64/i32 tensor, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkIntTensor(const TensorView &t, const std::string &what) {
  if (!isInt(t.dtype))
    return Status::error(what + " must be i64 or i32, got " +
                         std::string(name(t.dtype)));
  return Status::ok();
}
inline Status checkSameDType(const TensorView &t, const std::string &what,
                             DType expected, const std::string &whatExpected) {
  if (t.dtype != expected)
    return Status::error(what + " has element type " +
                         std::string(name(t.dtype)) + " but " + whatExpected +
                         " has " + std::string(name(expected)));
  return Status::ok();
}
inline Status checkShape(const TensorView &t, const std::string &what,
                         const Shape &expected) {
  if (t.shape != expected)
    return Status::error(what + " has shape " + shapeStr(t.shape) +
                         " but the op computes " + shapeStr(expected));
  return Status::ok();
}
inline Status checkOutput(const OpCall &call, size_t i, const std::string &what,
                          const Shape &shape, DType dtype) {
  const TensorView &o = call.outputs[i];
  if (o.dtype != dtype)
    return Status::error(what + " has element type " +
                         std::string(name(o.dtype)) + " but the op computes " +
                         std::string(name(dtype)));
  return checkShape(o, what, shape);
}
inline Status checkScalarOf(const TensorView &t, const std::string &what,
                            DType d) {
  if (t.dtype != d || t.rank() != 0)
    return Status::error(what + " must be a scalar (rank 0) " +
                         std::string(name(d)) + " tensor, got " + t.typeStr());
  return Status::ok();
}

// The 'axis' attribute of softmax, layer_norm and their gradients names a
// dimension of the input.
inline Status checkAxis(int64_t axis, int64_t rank) {
  if (axis < 0 || axis >= rank)
    return Status::error("attribute 'axis' " + std::to_string(axis) +
                         " is out of range [0, " + std::to_string(rank) + ")");
  return Status::ok();
}

// Counts and intervals given as attributes.
inline Status checkAtLeastOne(const char *name, int64_t v) {
  if (v < 1)
    return Status::error("attribute '" + std::string(name) +
                         "' must be >= 1, got " + std::to_string(v));
  return Status::ok();
}

// The window attributes conv2d and the pooling ops share: 2 strides and
// dilations >= 1, 4 pads [top, left, bottom, right] >= 0.
inline Status checkWindow(const std::vector<int64_t> &strides,
                          const std::vector<int64_t> &pads,
                          const std::vector<int64_t> &dilations) {
  if (strides.size() != 2)
    return Status::error("attribute 'strides' must have 2 entries, got " +
                         std::to_string(strides.size()));
  if (pads.size() != 4)
    return Status::error("attribute 'pads' must have 4 entries [top, left, "
                         "bottom, right], got " +
                         std::to_string(pads.size()));
  if (dilations.size() != 2)
    return Status::error("attribute 'dilations' must have 2 entries, got " +
                         std::to_string(dilations.size()));
  for (int64_t s : strides)
    if (s < 1)
      return Status::error("attribute 'strides' must be >= 1, got " +
                           shapeStr(strides));
  for (int64_t d : dilations)
    if (d < 1)
      return Status::error("attribute 'dilations' must be >= 1, got " +
                           shapeStr(dilations));
  for (int64_t p : pads)
    if (p < 0)
      return Status::error("attribute 'pads' must be >= 0, got " +
                           shapeStr(pads));
  return Status::ok();
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_CALLCHECKS_H
