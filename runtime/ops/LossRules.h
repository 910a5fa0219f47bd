//===- LossRules.h - what the losses and their gradients check alike ------===//
//
// softmax_cross_entropy and nll_loss and their gradients, in their checks
// (LossChecks.cpp) and in each backend's kernels, read the same attributes,
// take an [N, C, d...] tensor with [N, d...] integer labels and optional
// [C] class weights, and reject a label outside [0, C) that is not
// ignore_index with the same message.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_LOSSRULES_H
#define AMPC_RUNTIME_OPS_LOSSRULES_H

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"

#include <optional>
#include <string>

namespace ampc::rt::ops {

struct LossAttrs {
  std::string reduction = "mean";
  std::optional<int64_t> ignoreIndex;
};

inline Status readLossAttrs(const Attrs &attrs, LossAttrs &la) {
  AMPC_RETURN_IF_ERROR(getString(attrs, "reduction", la.reduction));
  if (la.reduction != "none" && la.reduction != "sum" && la.reduction != "mean")
    return Status::error(
        "attribute 'reduction' must be \"none\", \"sum\" or \"mean\", got \"" +
        la.reduction + "\"");
  if (attrs.has("ignore_index")) {
    int64_t v = 0;
    AMPC_RETURN_IF_ERROR(getInt(attrs, "ignore_index", v));
    la.ignoreIndex = v;
  }
  return Status::ok();
}

// `x` is the [N, C, d...] tensor; input `labelsAt` holds the labels and
// input `labelsAt + 1`, when present, the class weights. Sets `perSample`
// to [N, d...], the labels' shape (and the loss's without reduction).
inline Status checkLossOperands(const OpCall &call, const TensorView &x,
                                const char *xName, size_t labelsAt,
                                const char *tName, const char *wName,
                                Shape &perSample) {
  const TensorView &t = call.inputs[labelsAt];
  AMPC_RETURN_IF_ERROR(checkFloat(x, xName));
  AMPC_RETURN_IF_ERROR(checkIntTensor(t, tName));
  if (x.rank() < 2)
    return Status::error(std::string(xName) +
                         " must be [N, C, d...] of rank >= 2, got " +
                         shapeStr(x.shape));
  perSample = Shape{x.shape[0]};
  perSample.insert(perSample.end(), x.shape.begin() + 2, x.shape.end());
  if (t.shape != perSample)
    return Status::error(std::string(tName) + " " + shapeStr(t.shape) +
                         " must have shape " + shapeStr(perSample) + " for " +
                         xName + " " + shapeStr(x.shape));
  if (hasInput(call, labelsAt + 1)) {
    const TensorView &w = call.inputs[labelsAt + 1];
    AMPC_RETURN_IF_ERROR(checkSameDType(w, wName, x.dtype, xName));
    if (w.shape != Shape{x.shape[1]})
      return Status::error(std::string(wName) + " must have shape [" +
                           std::to_string(x.shape[1]) + "], got " +
                           shapeStr(w.shape));
  }
  return Status::ok();
}

// Label `label`, element `index` of the labels, is outside [0, classes)
// and is not ignore_index: found only when the data is read, at run time.
inline Status labelOutOfRange(int64_t label, int64_t index, int64_t classes,
                              const LossAttrs &la) {
  return Status::error(
      "label " + std::to_string(label) + " at index " + std::to_string(index) +
      " is out of range for " + std::to_string(classes) + " classes [0, " +
      std::to_string(classes) + ")" +
      (la.ignoreIndex
           ? " and is not ignore_index " + std::to_string(*la.ignoreIndex)
           : std::string()));
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_LOSSRULES_H
