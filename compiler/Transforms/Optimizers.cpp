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

#include <cmath>

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
/// A number as the messages show it: llvm's stream writes infinity as INF.
std::string shown(double v) {
  if (std::isinf(v))
    return v > 0 ? "inf" : "-inf";
  std::string s;
  llvm::raw_string_ostream(s) << v;
  return s;
}
} // namespace

LogicalResult validateOptimizer(const OptimizerConfig &c, Location loc) {
  static const char *kinds[] = {"sgd",  "momentum", "nesterov",
                                "adam", "adamw",    "adagrad"};
  if (!llvm::is_contained(kinds, c.kind))
    return emitError(loc, "graph-build-training: unknown optimizer '")
           << c.kind
           << "' (expected sgd, momentum, nesterov, adam, adamw or adagrad)";
  // The ranges PyTorch's optimizers check, and finite everywhere: an
  // infinite rate or factor makes every weight NaN at the first update.
  // Every option is checked, whichever optimizer and schedule read it.
  auto nonNegative = [&](StringRef name,
                         std::optional<double> v) -> LogicalResult {
    if (!v || (std::isfinite(*v) && *v >= 0))
      return success();
    return emitError(loc, "graph-build-training: ")
           << name << " must be finite and >= 0, got " << shown(*v);
  };
  auto unit = [&](StringRef name, double v) -> LogicalResult {
    if (v >= 0 && v <= 1)
      return success();
    return emitError(loc, "graph-build-training: ")
           << name << " must be in [0, 1], got " << shown(v);
  };
  if (failed(nonNegative("lr", c.lr)) ||
      failed(nonNegative("epsilon", c.epsilon)) ||
      failed(nonNegative("weight-decay", c.weightDecay)) ||
      failed(nonNegative("lr-decay", c.lrDecay)) ||
      failed(unit("momentum", c.momentum)) ||
      failed(unit("dampening", c.dampening)))
    return failure();
  if (c.kind == "nesterov" && c.dampening != 0)
    return emitError(loc, "graph-build-training: nesterov momentum needs "
                          "dampening 0 (as PyTorch), got ")
           << shown(c.dampening);
  if (c.kind == "nesterov" && c.momentum == 0)
    return emitError(loc, "graph-build-training: nesterov momentum needs "
                          "momentum > 0 (as PyTorch), got 0");
  if (!(c.beta1 >= 0 && c.beta1 < 1 && c.beta2 >= 0 && c.beta2 < 1))
    return emitError(loc, "graph-build-training: beta1 and beta2 must be in "
                          "[0, 1), got ")
           << shown(c.beta1) << " and " << shown(c.beta2);
  if (!graph::symbolizeLrScheduleKind(c.schedule))
    return emitError(loc, "graph-build-training: unknown lr-schedule '")
           << c.schedule << "' (expected "
           << graph::quotedCases<graph::LrScheduleKind>() << ")";
  if (c.stepSize < 1)
    return emitError(loc, "graph-build-training: lr-step-size must be >= 1, "
                          "got ")
           << c.stepSize;
  if (c.totalSteps < 1)
    return emitError(loc, "graph-build-training: lr-total-steps must be >= 1, "
                          "got ")
           << c.totalSteps;
  // A negative factor or floor would make the rate negative: gradient
  // ascent.
  return failure(failed(nonNegative("lr-gamma", c.gamma)) ||
                 failed(nonNegative("lr-min", c.minLr)));
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
