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

#include "mlir/IR/Diagnostics.h"

using namespace mlir;

namespace ampc {
namespace {
double adamEpsilon(const OptimizerConfig &c) {
  return c.epsilon >= 0 ? c.epsilon : 1e-8;
}
double adagradEpsilon(const OptimizerConfig &c) {
  return c.epsilon >= 0 ? c.epsilon : 1e-10;
}
double weightDecay(const OptimizerConfig &c) {
  if (c.weightDecay >= 0)
    return c.weightDecay;
  return c.kind == "adamw" ? 0.01 : 0.0;
}
/// -1 stands for "the optimizer's default"; other negatives are errors.
bool validOrDefault(double v) { return v >= 0 || v == -1.0; }
} // namespace

LogicalResult validateOptimizer(const OptimizerConfig &c, Location loc) {
  static const char *kinds[] = {"sgd",  "momentum", "nesterov",
                                "adam", "adamw",    "adagrad"};
  if (!llvm::is_contained(kinds, c.kind))
    return emitError(loc, "graph-build-training: unknown optimizer '")
           << c.kind
           << "' (expected sgd, momentum, nesterov, adam, adamw or adagrad)";
  if (!(c.lr >= 0))
    return emitError(loc, "graph-build-training: lr must be >= 0, got ")
           << c.lr;
  if (!validOrDefault(c.epsilon))
    return emitError(loc, "graph-build-training: epsilon must be >= 0, got ")
           << c.epsilon;
  if (!validOrDefault(c.weightDecay))
    return emitError(loc, "graph-build-training: weight-decay must be >= 0, "
                          "got ")
           << c.weightDecay;
  if (!(c.lrDecay >= 0))
    return emitError(loc, "graph-build-training: lr-decay must be >= 0, got ")
           << c.lrDecay;
  if (c.kind == "nesterov" && c.dampening != 0)
    return emitError(loc, "graph-build-training: nesterov momentum needs "
                          "dampening 0 (as PyTorch), got ")
           << c.dampening;
  if ((c.kind == "momentum" || c.kind == "nesterov") &&
      !(c.momentum >= 0 && c.momentum <= 1))
    return emitError(loc, "graph-build-training: momentum must be in [0, 1], "
                          "got ")
           << c.momentum;
  if ((c.kind == "adam" || c.kind == "adamw") &&
      !(c.beta1 >= 0 && c.beta1 < 1 && c.beta2 >= 0 && c.beta2 < 1))
    return emitError(loc, "graph-build-training: beta1 and beta2 must be in "
                          "[0, 1), got ")
           << c.beta1 << " and " << c.beta2;
  if (c.schedule != "constant" && c.schedule != "step" &&
      c.schedule != "cosine")
    return emitError(loc, "graph-build-training: unknown lr-schedule '")
           << c.schedule << "' (expected constant, step or cosine)";
  if (c.stepSize < 1)
    return emitError(loc, "graph-build-training: lr-step-size must be >= 1, "
                          "got ")
           << c.stepSize;
  if (c.totalSteps < 1)
    return emitError(loc, "graph-build-training: lr-total-steps must be >= 1, "
                          "got ")
           << c.totalSteps;
  return success();
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
                                      /*skip=*/Value(), f(weightDecay(c)));
  if (c.kind == "momentum" || c.kind == "nesterov")
    return graph::MomentumUpdateOp::create(
        b, loc, TypeRange{t, t}, lr, step, param, grad, state[0],
        /*skip=*/Value(), f(c.momentum), f(1.0 - c.dampening),
        f(weightDecay(c)),
        b.getStringAttr(c.kind == "momentum" ? "standard" : "nesterov"));
  if (c.kind == "adam" || c.kind == "adamw") {
    bool decoupled = c.kind == "adamw";
    return graph::AdamUpdateOp::create(
        b, loc, TypeRange{t, t, t}, lr, step, param, grad, state[0], state[1],
        /*skip=*/Value(), f(c.beta1), f(c.beta2), f(adamEpsilon(c)),
        f(decoupled ? 0.0 : weightDecay(c)), f(0.0),
        f(decoupled ? weightDecay(c) : 0.0), b.getStringAttr("pytorch"));
  }
  return graph::AdagradUpdateOp::create(
      b, loc, TypeRange{t, t}, lr, step, param, grad, state[0],
      /*skip=*/Value(), f(c.lrDecay), f(adagradEpsilon(c)), f(weightDecay(c)));
}

} // namespace ampc
