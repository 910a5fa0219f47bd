//===- OptimizerOps.cpp - verifiers of the parameter updates --------------===//

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/VerifyHelpers.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {
/// The parameter, its gradient, its state and every result share one type.
LogicalResult sameAsParam(Operation *op, Value param,
                          ArrayRef<std::pair<StringRef, Value>> others) {
  for (auto [name, v] : others)
    if (v.getType() != param.getType())
      return op->emitOpError() << name << " has type " << v.getType()
                               << " but param has " << param.getType();
  return success();
}

LogicalResult inUnitInterval(Operation *op, StringRef name, double v) {
  if (!(v >= 0 && v <= 1))
    return op->emitOpError() << name << " must be in [0, 1], got " << v;
  return success();
}
} // namespace

LogicalResult SgdUpdateOp::verify() {
  return sameAsParam(*this, getParam(),
                     {{"grad", getGrad()}, {"new_param", getNewParam()}});
}

LogicalResult MomentumUpdateOp::verify() {
  if (getMode() != "standard" && getMode() != "nesterov")
    return emitOpError("mode must be \"standard\" or \"nesterov\", got \"")
           << getMode() << "\"";
  return sameAsParam(*this, getParam(),
                     {{"grad", getGrad()},
                      {"velocity", getVelocity()},
                      {"new_param", getNewParam()},
                      {"new_velocity", getNewVelocity()}});
}

LogicalResult AdamUpdateOp::verify() {
  if (getMode() != "onnx" && getMode() != "pytorch")
    return emitOpError("mode must be \"onnx\" or \"pytorch\", got \"")
           << getMode() << "\"";
  double alpha = getAlpha().convertToDouble(),
         beta = getBeta().convertToDouble();
  if (failed(inUnitInterval(*this, "alpha", alpha)) ||
      failed(inUnitInterval(*this, "beta", beta)))
    return failure();
  bool torch = getMode() == "pytorch";
  // PyTorch's bias correction divides by 1 - beta^t.
  if (torch && (alpha == 1 || beta == 1))
    return emitOpError("alpha and beta must be < 1 in mode \"pytorch\", got ")
           << alpha << " and " << beta;
  if (!torch && getWeightDecay().convertToDouble() != 0)
    return emitOpError("weight_decay (decoupled) is for mode \"pytorch\"; "
                       "mode \"onnx\" has norm_coefficient_post");
  if (torch && getNormCoefficientPost().convertToDouble() != 0)
    return emitOpError("norm_coefficient_post is for mode \"onnx\"; mode "
                       "\"pytorch\" has weight_decay");
  if (!(getEpsilon().convertToDouble() >= 0))
    return emitOpError("epsilon must be >= 0, got ")
           << getEpsilon().convertToDouble();
  return sameAsParam(*this, getParam(),
                     {{"grad", getGrad()},
                      {"m", getM()},
                      {"v", getV()},
                      {"new_param", getNewParam()},
                      {"new_m", getNewM()},
                      {"new_v", getNewV()}});
}

LogicalResult AdagradUpdateOp::verify() {
  if (!(getDecayFactor().convertToDouble() >= 0))
    return emitOpError("decay_factor must be >= 0, got ")
           << getDecayFactor().convertToDouble();
  if (!(getEpsilon().convertToDouble() >= 0))
    return emitOpError("epsilon must be >= 0, got ")
           << getEpsilon().convertToDouble();
  return sameAsParam(*this, getParam(),
                     {{"grad", getGrad()},
                      {"accumulator", getAccumulator()},
                      {"new_param", getNewParam()},
                      {"new_accumulator", getNewAccumulator()}});
}

LogicalResult LrScheduleOp::verify() {
  StringRef kind = getKind();
  if (kind != "constant" && kind != "step" && kind != "cosine")
    return emitOpError("kind must be constant, step or cosine, got \"")
           << kind << "\"";
  // I64Attr's getters are unsigned: read the attributes as signed.
  int64_t stepSize = getStepSizeAttr().getInt();
  int64_t totalSteps = getTotalStepsAttr().getInt();
  if (stepSize < 1)
    return emitOpError("step_size must be >= 1, got ") << stepSize;
  if (totalSteps < 1)
    return emitOpError("total_steps must be >= 1, got ") << totalSteps;
  return success();
}

bool ampc::graph::isOptimizerUpdate(Operation *op) {
  return isa<SgdUpdateOp, MomentumUpdateOp, AdamUpdateOp, AdagradUpdateOp>(op);
}

bool ampc::graph::isUpdateWithWorkingCopy(Block &body) {
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 2)
    return false;
  Operation &update = *ops.begin();
  auto c = dyn_cast<CastOp>(*std::next(ops.begin()));
  return c && isOptimizerUpdate(&update) && c.getInput() == update.getResult(0);
}

namespace {
/// Calls `fn` with `op` as its update class: they name their operands alike
/// but share no interface.
template <typename Fn> decltype(auto) onUpdate(Operation *op, Fn &&fn) {
  if (auto u = dyn_cast<SgdUpdateOp>(op))
    return fn(u);
  if (auto u = dyn_cast<MomentumUpdateOp>(op))
    return fn(u);
  if (auto u = dyn_cast<AdamUpdateOp>(op))
    return fn(u);
  return fn(cast<AdagradUpdateOp>(op));
}
} // namespace

OpOperand &ampc::graph::updateGradOperand(Operation *op) {
  return onUpdate(op, [](auto u) -> OpOperand & { return u.getGradMutable(); });
}

MutableOperandRange ampc::graph::updateSkipOperand(Operation *op) {
  return onUpdate(op, [](auto u) { return u.getSkipMutable(); });
}
