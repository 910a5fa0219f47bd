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
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
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

/// The uses of `v` that the backward pass makes after the forward pass's
/// last reader of it (an extra output computed among the forward ops keeps
/// reading the forward copy); none when a reader lies in a nested region
/// (a position in the step's block is what this asks) or the forward pass
/// does not read `v`.
SmallVector<OpOperand *>
readersAfterForward(Value v, const SetVector<Operation *> &fwd) {
  Block *block = v.getDefiningOp()->getBlock();
  if (llvm::any_of(v.getUsers(),
                   [&](Operation *u) { return u->getBlock() != block; }))
    return {};
  Operation *lastForward = nullptr;
  for (Operation *u : v.getUsers())
    if (fwd.contains(u) && (!lastForward || lastForward->isBeforeInBlock(u)))
      lastForward = u;
  SmallVector<OpOperand *> uses;
  if (!lastForward)
    return uses;
  for (OpOperand &use : v.getUses())
    if (!fwd.contains(use.getOwner()) && !isa<func::ReturnOp>(use.getOwner()) &&
        lastForward->isBeforeInBlock(use.getOwner()))
      uses.push_back(&use);
  return uses;
}

Operation *firstReader(ArrayRef<OpOperand *> uses) {
  Operation *first = uses.front()->getOwner();
  for (OpOperand *use : uses)
    if (use->getOwner()->isBeforeInBlock(first))
      first = use->getOwner();
  return first;
}

/// Whether the step reads `v` at `at` or later, in `at`'s block.
bool liveAt(Value v, Operation *at) {
  return llvm::any_of(v.getUsers(), [&](Operation *u) {
    return u->getBlock() == at->getBlock() && !u->isBeforeInBlock(at) &&
           !isa<func::ReturnOp>(u);
  });
}

/// A forward amp.cast that the backward pass reads is made again before its
/// first backward reader when its input is narrower, or live there anyway.
void recastCasts(func::FuncOp f, const SetVector<Operation *> &fwd) {
  SmallVector<amp::CastOp> casts;
  f.walk([&](amp::CastOp c) {
    if (fwd.contains(c) && !isa<BlockArgument>(c.getInput()))
      casts.push_back(c);
  });
  for (amp::CastOp c : casts) {
    SmallVector<OpOperand *> uses = readersAfterForward(c.getOutput(), fwd);
    if (uses.empty())
      continue;
    Operation *first = firstReader(uses);
    // A narrowing cast is made again only where its input is live anyway.
    Value in = c.getInput();
    if (bitWidthOf(in) >= bitWidthOf(c.getOutput()) && !liveAt(in, first))
      continue;
    OpBuilder b(first);
    auto again =
        amp::CastOp::create(b, c.getLoc(), c.getOutput().getType(), in);
    for (OpOperand *use : uses)
      use->set(again.getOutput());
  }
}

/// A pure one-operand op of the forward pass whose operand is a widening
/// cast (an O1 softmax of an f16 score, computed in f32): the backward pass
/// reads a second cast and op, made before its first reader, so the narrow
/// value is kept instead of the wide result (FlashAttention recomputes the
/// softmax for the same reason). Runs after recastCasts, so the f16 copy of
/// the result that it made for the backward pass reads the new op too.
void recomputeOfWidened(func::FuncOp f, const SetVector<Operation *> &fwd) {
  SmallVector<Operation *> ops;
  f.walk([&](Operation *op) {
    if (!fwd.contains(op) || op->getNumOperands() != 1 ||
        op->getNumResults() != 1 || op->getNumRegions() != 0 || !isPure(op) ||
        op->getResult(0).getType() != op->getOperand(0).getType())
      return;
    auto widen = op->getOperand(0).getDefiningOp<amp::CastOp>();
    if (widen && fwd.contains(widen) && !isa<BlockArgument>(widen.getInput()) &&
        bitWidthOf(widen.getInput()) < bitWidthOf(widen.getOutput()))
      ops.push_back(op);
  });
  for (Operation *op : ops) {
    SmallVector<OpOperand *> uses = readersAfterForward(op->getResult(0), fwd);
    if (uses.empty())
      continue;
    auto widen = op->getOperand(0).getDefiningOp<amp::CastOp>();
    Operation *first = firstReader(uses);
    OpBuilder b(first);
    // The backward pass may read the widened value too (recastCasts made
    // it again after the forward pass): one cast serves, moved up to here.
    // A copy made before this point is not reused: that would stretch its
    // life up to here.
    amp::CastOp again;
    for (Operation *u : widen.getInput().getUsers())
      if (auto c = dyn_cast<amp::CastOp>(u);
          c && c != widen && !fwd.contains(c) &&
          c.getOutput().getType() == widen.getOutput().getType() &&
          c->getBlock() == first->getBlock() && !c->isBeforeInBlock(first) &&
          (!again || c->isBeforeInBlock(again)))
        again = c;
    if (again)
      again->moveBefore(first);
    if (!again)
      again = amp::CastOp::create(
          b, widen.getLoc(), widen.getOutput().getType(), widen.getInput());
    IRMapping map;
    map.map(widen.getOutput(), again.getOutput());
    Operation *opAgain = b.clone(*op, map);
    for (OpOperand *use : uses)
      use->set(opAgain->getResult(0));
  }
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
  recastCasts(f, forward);
  recomputeOfWidened(f, forward);
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
