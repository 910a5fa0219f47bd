//===- FuseLossGradient.cpp - the graph-fuse-loss-gradient pass -----------===//
//
// softmax_cross_entropy keeps its log-probabilities (the logits' size, in
// f32) from the forward pass until its gradient reads them, the backward
// pass's first op, which then writes a gradient of the same size next to
// them. When that gradient's seed exists before the loss, both are one
// kernel: the log-probabilities live only inside it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHFUSELOSSGRADIENTPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// Whether `v` exists where `op` runs: a block argument of its block (or
/// of an enclosing one), or the result of an op before it in its block.
bool definedBefore(Value v, Operation *op) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getOwner()->findAncestorOpInBlock(*op) != nullptr;
  Operation *def = v.getDefiningOp();
  return def->getBlock() == op->getBlock() && def->isBeforeInBlock(op);
}

void fuse(graph::SoftmaxCrossEntropyGradOp grad) {
  auto loss = grad.getLogProb().getDefiningOp<graph::SoftmaxCrossEntropyOp>();
  if (!loss || grad.getLogProb() != loss.getLogProb() ||
      !loss.getLogProb().hasOneUse() || loss->getBlock() != grad->getBlock() ||
      grad.getLabels() != loss.getLabels() ||
      grad.getWeights() != loss.getWeights() ||
      grad.getReduction() != loss.getReduction() ||
      grad.getIgnoreIndexAttr() != loss.getIgnoreIndexAttr() ||
      !definedBefore(grad.getGrad(), loss))
    return;
  // A narrowing amp.cast as the gradient's only reader is written directly.
  Value result = grad.getOutput();
  Type dscoresType = result.getType();
  amp::CastOp narrow;
  if (result.hasOneUse())
    if (auto c = dyn_cast<amp::CastOp>(*result.getUsers().begin())) {
      Type to = cast<ShapedType>(c.getOutput().getType()).getElementType();
      if (cast<ShapedType>(dscoresType).getElementType().isF32() &&
          (to.isF16() || to.isBF16())) {
        narrow = c;
        dscoresType = c.getOutput().getType();
      }
    }
  OpBuilder b(loss);
  auto both = graph::SoftmaxCrossEntropyWithGradOp::create(
      b, loss.getLoc(), TypeRange{loss.getLoss().getType(), dscoresType},
      grad.getGrad(), loss.getScores(), loss.getLabels(), loss.getWeights(),
      loss.getReductionAttr(), loss.getIgnoreIndexAttr());
  loss.getLoss().replaceAllUsesWith(both.getLoss());
  if (narrow) {
    narrow.getOutput().replaceAllUsesWith(both.getDscores());
    narrow.erase();
  } else {
    result.replaceAllUsesWith(both.getDscores());
  }
  grad.erase();
  loss.erase();
}

struct GraphFuseLossGradientPass
    : impl::GraphFuseLossGradientPassBase<GraphFuseLossGradientPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<graph::SoftmaxCrossEntropyGradOp> grads;
    getOperation().walk(
        [&](graph::SoftmaxCrossEntropyGradOp g) { grads.push_back(g); });
    for (auto g : grads)
      fuse(g);
  }
};

} // namespace
} // namespace ampc
