//===- RecastInBackward.cpp - the amp-recast-in-backward pass -------------===//
//
// A forward value the backward pass reads stays live from the forward pass
// to its reader. When that value is an amp.cast, its input often costs
// fewer bytes to keep (a narrower type, or a value kept anyway), and the
// cast costs one pass over it to make again where it is read.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Analysis/SliceAnalysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "llvm/ADT/SetVector.h"

namespace ampc {
#define GEN_PASS_DEF_AMPRECASTINBACKWARDPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

unsigned bitWidthOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementTypeBitWidth();
}

/// The value @train_step returns as its loss (graph.loss names it), or null.
Value lossOf(func::FuncOp f) {
  auto name = f->getAttrOfType<StringAttr>(graph::kLossAttr);
  if (!name)
    return {};
  Operation *ret = f.getBody().front().getTerminator();
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    if (f.getResultAttrOfType<StringAttr>(i, graph::kNameAttr) == name)
      return ret->getOperand(i);
  return {};
}

void recastInBackward(func::FuncOp f) {
  Value loss = lossOf(f);
  Operation *lossDef = loss ? loss.getDefiningOp() : nullptr;
  if (!lossDef)
    return;
  SetVector<Operation *> forward;
  BackwardSliceOptions options;
  options.inclusive = true;
  if (failed(getBackwardSlice(lossDef, &forward, options)))
    return;
  auto laterReaders = [&](Value v) {
    SmallVector<OpOperand *> uses;
    for (OpOperand &use : v.getUses())
      if (!forward.contains(use.getOwner()) &&
          !isa<func::ReturnOp>(use.getOwner()))
        uses.push_back(&use);
    return uses;
  };
  SmallVector<amp::CastOp> casts;
  f.walk([&](amp::CastOp c) {
    if (forward.contains(c) && !isa<BlockArgument>(c.getInput()))
      casts.push_back(c);
  });
  for (amp::CastOp c : casts) {
    // Readers in the step's own block only: a position is what this asks.
    Block *block = c->getBlock();
    if (llvm::any_of(c.getOutput().getUsers(),
                     [&](Operation *u) { return u->getBlock() != block; }))
      continue;
    Operation *lastForward = nullptr;
    for (Operation *u : c.getOutput().getUsers())
      if (forward.contains(u) &&
          (!lastForward || lastForward->isBeforeInBlock(u)))
        lastForward = u;
    if (!lastForward)
      continue;
    // The readers after the forward pass's last one (an extra output
    // computed among the forward ops keeps reading the forward copy).
    SmallVector<OpOperand *> uses;
    for (OpOperand *use : laterReaders(c.getOutput()))
      if (lastForward->isBeforeInBlock(use->getOwner()))
        uses.push_back(use);
    if (uses.empty())
      continue;
    Operation *first = uses.front()->getOwner();
    for (OpOperand *use : uses)
      if (use->getOwner()->isBeforeInBlock(first))
        first = use->getOwner();
    // A narrowing cast is made again only where its input is live anyway.
    Value in = c.getInput();
    if (bitWidthOf(in) >= bitWidthOf(c.getOutput()) &&
        llvm::none_of(laterReaders(in), [&](OpOperand *use) {
          return use->getOwner()->getBlock() == block &&
                 !use->getOwner()->isBeforeInBlock(first);
        }))
      continue;
    OpBuilder b(first);
    auto again =
        amp::CastOp::create(b, c.getLoc(), c.getOutput().getType(), in);
    for (OpOperand *use : uses)
      use->set(again.getOutput());
  }
}

struct AmpRecastInBackwardPass
    : impl::AmpRecastInBackwardPassBase<AmpRecastInBackwardPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto f : getOperation().getOps<func::FuncOp>())
      recastInBackward(f);
  }
};

} // namespace
} // namespace ampc
