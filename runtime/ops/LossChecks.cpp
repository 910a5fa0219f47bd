//===- LossChecks.cpp - what loss calls and their gradients must be -------===//
//
// softmax_cross_entropy, nll_loss and their gradients, built on the operand
// and attribute rules of LossRules.h that the run code reads alike.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/CallChecks.h"
#include "runtime/ops/LossRules.h"
#include "runtime/ops/Shapes.h"

namespace ampc::rt::ops {
namespace {

// softmax_cross_entropy: (scores, labels, weights?) -> (loss, log_prob);
// nll_loss: (input, target, weight?) -> (loss).
Status checkLoss(const OpCall &call, bool softmax) {
  const char *xName = softmax ? "scores" : "input";
  const char *tName = softmax ? "labels" : "target";
  const char *wName = softmax ? "weights" : "weight";
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 3, softmax ? 2 : 1));
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  const TensorView &x = call.inputs[0];
  Shape perSample;
  AMPC_RETURN_IF_ERROR(
      checkLossOperands(call, x, xName, 1, tName, wName, perSample));
  AMPC_RETURN_IF_ERROR(checkOutput(
      call, 0, "loss", la.reduction == "none" ? perSample : Shape{}, x.dtype));
  if (softmax)
    AMPC_RETURN_IF_ERROR(checkOutput(call, 1, "log_prob", x.shape, x.dtype));
  return Status::ok();
}

// `x` is the [N, C, d...] tensor the gradient is taken with respect to;
// labels are input `labelsAt`, optional class weights the one after it,
// and grad (input 0) has the forward loss's shape.
Status checkLossGradOperands(const OpCall &call, const LossAttrs &la,
                             const TensorView &x, const char *xName,
                             size_t labelsAt, const char *tName,
                             const char *wName) {
  Shape perSample;
  AMPC_RETURN_IF_ERROR(
      checkLossOperands(call, x, xName, labelsAt, tName, wName, perSample));
  const TensorView &g = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkSameDType(g, "grad", x.dtype, xName));
  Shape loss = la.reduction == "none" ? perSample : Shape{};
  if (g.shape != loss)
    return Status::error("grad has shape " + shapeStr(g.shape) +
                         " but the loss (reduction \"" + la.reduction +
                         "\") has " + shapeStr(loss));
  return Status::ok();
}

} // namespace

//===----------------------------------------------------------------------===//
// softmax_cross_entropy / nll_loss
//===----------------------------------------------------------------------===//

Status checkSoftmaxCrossEntropy(const OpCall &call) {
  return checkLoss(call, true);
}
Status checkNllLoss(const OpCall &call) { return checkLoss(call, false); }

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_grad / nll_loss_grad
//===----------------------------------------------------------------------===//

// (grad, log_prob, labels, weights?) -> d scores.
Status checkSoftmaxCrossEntropyGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 3, 4, 1));
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  const TensorView &lp = call.inputs[1];
  AMPC_RETURN_IF_ERROR(
      checkLossGradOperands(call, la, lp, "log_prob", 2, "labels", "weights"));
  return checkOutput(call, 0, "output", lp.shape, lp.dtype);
}

// (grad, scores, labels, weights?) -> (loss, d scores): the loss as
// softmax_cross_entropy's, d scores as softmax_cross_entropy_grad's, in the
// scores' element type or f16/bf16 for f32 scores.
Status checkSoftmaxCrossEntropyWithGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 3, 4, 2));
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  const TensorView &scores = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkLossGradOperands(call, la, scores, "scores", 2,
                                             "labels", "weights"));
  AMPC_RETURN_IF_ERROR(
      checkOutput(call, 0, "loss", call.inputs[0].shape, scores.dtype));
  const TensorView &d = call.outputs[1];
  bool narrower = scores.dtype == DType::F32 &&
                  (d.dtype == DType::F16 || d.dtype == DType::BF16);
  if (d.dtype != scores.dtype && !narrower)
    return Status::error("dscores has element type " +
                         std::string(name(d.dtype)) + " but the op computes " +
                         std::string(name(scores.dtype)) +
                         (scores.dtype == DType::F32 ? " (or f16/bf16)" : ""));
  return checkShape(d, "dscores", scores.shape);
}

// (grad, target, weight?) -> d input; the output view gives [N, C, d...].
Status checkNllLossGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 3, 1));
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  return checkLossGradOperands(call, la, call.outputs[0], "output", 1, "target",
                               "weight");
}

} // namespace ampc::rt::ops
