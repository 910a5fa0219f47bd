//===- NormalizationChecks.cpp - what batch and layer norm calls must be --===//
//
// batch_norm_inference, batch_norm_training and layer_norm, and their
// gradients batch_norm_grad (batch statistics) and layer_norm_grad.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/Tensor.h"
#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <optional>
#include <string>

namespace ampc::rt::ops {
namespace {

Status checkBatchNorm(const OpCall &call, bool training) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 5, 5, training ? 5 : 1));
  double eps = 0, momentum = 0;
  AMPC_RETURN_IF_ERROR(getFloat(*call.attrs, "epsilon", eps));
  if (!(eps >= 0))
    return Status::error("attribute 'epsilon' must be >= 0, got " +
                         std::to_string(eps));
  if (training) {
    AMPC_RETURN_IF_ERROR(getFloat(*call.attrs, "momentum", momentum));
    if (!(momentum >= 0 && momentum <= 1))
      return Status::error("attribute 'momentum' must be in [0, 1], got " +
                           std::to_string(momentum));
  }
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  if (x.rank() < 2)
    return Status::error("input must be [N, C, ...] of rank >= 2, got " +
                         shapeStr(x.shape));
  int64_t c = x.shape[1];
  static const char *inferNames[] = {"scale", "bias", "mean", "var"};
  static const char *trainNames[] = {"scale", "bias", "running_mean",
                                     "running_var"};
  const char *const *names = training ? trainNames : inferNames;
  AMPC_RETURN_IF_ERROR(checkFloat(call.inputs[1], "scale"));
  for (int i = 1; i < 5; ++i) {
    const TensorView &v = call.inputs[i];
    AMPC_RETURN_IF_ERROR(
        checkSameDType(v, names[i - 1], call.inputs[1].dtype, "scale"));
    if (v.shape != Shape{c})
      return Status::error(std::string(names[i - 1]) + " must have shape [" +
                           std::to_string(c) + "], got " + shapeStr(v.shape));
  }
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "output", x.shape, x.dtype));
  if (!training)
    return Status::ok();
  int64_t count = x.numElements() / std::max<int64_t>(c, 1);
  if (count < 1)
    return Status::error("input " + shapeStr(x.shape) +
                         " has no values per channel to take statistics of");
  static const char *outNames[] = {"new_running_mean", "new_running_var",
                                   "batch_mean", "batch_inv_std"};
  for (int i = 1; i < 5; ++i)
    AMPC_RETURN_IF_ERROR(
        checkOutput(call, i, outNames[i - 1], Shape{c}, call.inputs[3].dtype));
  return Status::ok();
}

// grad and input: one float type and shape.
Status checkGradAndInput(const OpCall &call) {
  const TensorView &g = call.inputs[0], &x = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  AMPC_RETURN_IF_ERROR(checkSameDType(g, "grad", x.dtype, "input"));
  if (g.shape != x.shape)
    return Status::error("grad has shape " + shapeStr(g.shape) +
                         " but input has " + shapeStr(x.shape));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// batch_norm_inference / batch_norm_training
//===----------------------------------------------------------------------===//

Status checkBatchNormInference(const OpCall &call) {
  return checkBatchNorm(call, false);
}
/// Synchronised batch norm's optional rank count.
Status checkSyncRanks(const OpCall &call) {
  const AttrValue *a = nullptr;
  AMPC_RETURN_IF_ERROR(
      attrOfKind(*call.attrs, "sync_ranks", AttrValue::Kind::Int, false, a));
  if (a && a->i < 2)
    return Status::error("attribute 'sync_ranks' must be >= 2, got " +
                         std::to_string(a->i));
  return Status::ok();
}

Status checkBatchNormTraining(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkSyncRanks(call));
  return checkBatchNorm(call, true);
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

Status checkLayerNorm(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 3, 3));
  int64_t axis = 0;
  double eps = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(getFloat(*call.attrs, "epsilon", eps));
  if (!(eps >= 0))
    return Status::error("attribute 'epsilon' must be >= 0, got " +
                         std::to_string(eps));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  const TensorView &scale = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkFloat(scale, "scale"));
  if (!broadcastsTo(scale.shape, normalized))
    return Status::error("scale " + shapeStr(scale.shape) +
                         " does not broadcast to the normalized shape " +
                         shapeStr(normalized));
  if (hasInput(call, 2)) {
    const TensorView &bias = call.inputs[2];
    AMPC_RETURN_IF_ERROR(checkSameDType(bias, "bias", scale.dtype, "scale"));
    if (!broadcastsTo(bias.shape, normalized))
      return Status::error("bias " + shapeStr(bias.shape) +
                           " does not broadcast to the normalized shape " +
                           shapeStr(normalized));
  }
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "output", x.shape, x.dtype));
  Shape stat = x.shape;
  std::fill(stat.begin() + axis, stat.end(), 1);
  DType statType = x.dtype == DType::F64 ? DType::F64 : DType::F32;
  AMPC_RETURN_IF_ERROR(checkOutput(call, 1, "mean", stat, statType));
  return checkOutput(call, 2, "inv_std_dev", stat, statType);
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// (grad, input [N, C, ...], scale, batch_mean, batch_inv_std [C]) ->
// (input_grad, scale_grad, bias_grad).
Status checkBatchNormGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 5, 5, 3));
  AMPC_RETURN_IF_ERROR(checkSyncRanks(call));
  AMPC_RETURN_IF_ERROR(checkGradAndInput(call));
  const TensorView &x = call.inputs[1];
  if (x.rank() < 2)
    return Status::error("input must be [N, C, ...] of rank >= 2, got " +
                         shapeStr(x.shape));
  int64_t c = x.shape[1];
  static const char *names[] = {"scale", "batch_mean", "batch_inv_std"};
  for (int i = 0; i < 3; ++i) {
    const TensorView &v = call.inputs[2 + i];
    AMPC_RETURN_IF_ERROR(checkFloat(v, names[i]));
    if (v.shape != Shape{c})
      return Status::error(std::string(names[i]) + " must have shape [" +
                           std::to_string(c) + "], got " + shapeStr(v.shape));
  }
  if (c > 0 && x.numElements() / c < 1)
    return Status::error("input " + shapeStr(x.shape) +
                         " has no values per channel to take statistics of");
  const TensorView &scale = call.inputs[2];
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "input_grad", x.shape, x.dtype));
  AMPC_RETURN_IF_ERROR(
      checkOutput(call, 1, "scale_grad", scale.shape, scale.dtype));
  return checkOutput(call, 2, "bias_grad", scale.shape, scale.dtype);
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

// (grad, input, scale, mean, inv_std_dev) attr axis -> (input_grad,
// scale_grad, bias_grad); scale broadcasts to input.shape[axis:].
Status checkLayerNormGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 5, 5, 3));
  AMPC_RETURN_IF_ERROR(checkGradAndInput(call));
  const TensorView &x = call.inputs[1], &scale = call.inputs[2];
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  AMPC_RETURN_IF_ERROR(checkFloat(scale, "scale"));
  if (!broadcastsTo(scale.shape, normalized))
    return Status::error("scale " + shapeStr(scale.shape) +
                         " does not broadcast to the normalized shape " +
                         shapeStr(normalized));
  Shape stat = x.shape;
  std::fill(stat.begin() + axis, stat.end(), 1);
  static const char *names[] = {"mean", "inv_std_dev"};
  for (int i = 0; i < 2; ++i) {
    const TensorView &v = call.inputs[3 + i];
    AMPC_RETURN_IF_ERROR(checkFloat(v, names[i]));
    if (v.shape != stat)
      return Status::error(std::string(names[i]) + " must have shape " +
                           shapeStr(stat) + ", got " + shapeStr(v.shape));
  }
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "input_grad", x.shape, x.dtype));
  AMPC_RETURN_IF_ERROR(
      checkOutput(call, 1, "scale_grad", scale.shape, scale.dtype));
  return checkOutput(call, 2, "bias_grad", scale.shape, scale.dtype);
}

} // namespace ampc::rt::ops
