//===- Optimizers.cpp - optimizer updates of graph-build-training ---------===//
//
// PyTorch's optimizers expressed with the graph update ops: SGD with
// momentum is ONNX Momentum with alpha = momentum and beta = 1 - dampening
// (the first step takes the gradient as is), Adam/AdamW use the update's
// "pytorch" mode.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Optimizers.h"

#include "dialects/Graph/GraphOps.h"

using namespace mlir;

namespace ampc {
namespace {
double adamEpsilon(const OptimizerConfig &c) {
  return c.epsilon.value_or(1e-8);
}
double adagradEpsilon(const OptimizerConfig &c) {
  return c.epsilon.value_or(1e-10);
}
double weightDecay(const OptimizerConfig &c) {
  return c.weightDecay.value_or(c.kind == "adamw" ? 0.01 : 0.0);
}
} // namespace

OptimizerConfig optimizerConfigOf(const GraphBuildTrainingPassOptions &o) {
  return {o.optimizer, o.lr,         o.momentum,       o.dampening,
          o.beta1,     o.beta2,      o.epsilon.number, o.weightDecay.number,
          o.lrDecay,   o.lrSchedule, o.lrStepSize,     o.lrTotalSteps,
          o.lrGamma,   o.lrMin};
}

SmallVector<StringRef> optimizerState(const OptimizerConfig &c) {
  if (c.kind == "momentum" || c.kind == "nesterov")
    return {"velocity"};
  if (c.kind == "adam" || c.kind == "adamw")
    return {"m", "v"};
  if (c.kind == "adagrad")
    return {"sum"};
  return {};
}

Value buildLearningRate(OpBuilder &b, Location loc, const OptimizerConfig &c,
                        Value step) {
  return graph::LrScheduleOp::create(
      b, loc, RankedTensorType::get({}, b.getF32Type()), step,
      b.getF64FloatAttr(c.lr), b.getStringAttr(c.schedule),
      b.getI64IntegerAttr(c.stepSize), b.getF64FloatAttr(c.gamma),
      b.getI64IntegerAttr(c.totalSteps), b.getF64FloatAttr(c.minLr));
}

Operation *buildUpdate(OpBuilder &b, Location loc, const OptimizerConfig &c,
                       Value lr, Value step, Value param, Value grad,
                       ValueRange state) {
  Type t = param.getType();
  auto f = [&](double v) { return b.getF64FloatAttr(v); };
  if (c.kind == "sgd")
    return graph::SgdUpdateOp::create(b, loc, t, lr, param, grad,
                                      /*guards=*/ValueRange(),
                                      f(weightDecay(c)));
  if (c.kind == "momentum" || c.kind == "nesterov")
    return graph::MomentumUpdateOp::create(
        b, loc, TypeRange{t, t}, lr, step, param, grad, state[0],
        /*guards=*/ValueRange(), f(c.momentum), f(1.0 - c.dampening),
        f(weightDecay(c)),
        b.getStringAttr(graph::stringifyMomentumMode(
            c.kind == "momentum" ? graph::MomentumMode::Standard
                                 : graph::MomentumMode::Nesterov)));
  if (c.kind == "adam" || c.kind == "adamw") {
    bool decoupled = c.kind == "adamw";
    return graph::AdamUpdateOp::create(
        b, loc, TypeRange{t, t, t}, lr, step, param, grad, state[0], state[1],
        /*guards=*/ValueRange(), f(c.beta1), f(c.beta2), f(adamEpsilon(c)),
        f(decoupled ? 0.0 : weightDecay(c)), f(0.0),
        f(decoupled ? weightDecay(c) : 0.0),
        b.getStringAttr(graph::stringifyAdamMode(graph::AdamMode::Pytorch)));
  }
  return graph::AdagradUpdateOp::create(
      b, loc, TypeRange{t, t}, lr, step, param, grad, state[0],
      /*guards=*/ValueRange(), f(c.lrDecay), f(adagradEpsilon(c)),
      f(weightDecay(c)));
}

} // namespace ampc
