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
  if (failed(inUnitInterval(*this, "alpha", getAlpha().convertToDouble())) ||
      failed(inUnitInterval(*this, "beta", getBeta().convertToDouble())))
    return failure();
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
  if (getStepSize() < 1)
    return emitOpError("step_size must be >= 1, got ") << getStepSize();
  if (getTotalSteps() < 1)
    return emitOpError("total_steps must be >= 1, got ") << getTotalSteps();
  return success();
}
