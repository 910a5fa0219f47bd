//===- DataParallel.cpp - the graph-data-parallel pass --------------------===//
//
// Averages the gradients the optimizer updates read over the ranks of a
// data-parallel run: per bucket of gradients, a graph.all_reduce_start as
// soon as the bucket's last gradient exists and a graph.all_reduce_wait
// after it (with overlap, after the next bucket's start), with the updates
// after the wait. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Transforms/OptionChecks.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHDATAPARALLELPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// One gradient an update reads: the value to reduce and, when the update
/// reads it through a widening cast, that cast.
struct Member {
  graph::OptimizerUpdateOpInterface update;
  Value reduced;
  amp::CastOp widening; // null: the update reads `reduced` itself
};

int64_t bytesOf(Value v) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getNumElements() *
         static_cast<int64_t>(t.getElementTypeBitWidth() / 8);
}

/// The cast a gradient is read through when it only widens (f16/bf16 to
/// f32): the narrow value is what the backward pass made.
amp::CastOp wideningCast(Value grad) {
  auto c = grad.getDefiningOp<amp::CastOp>();
  if (!c)
    return nullptr;
  auto from = cast<RankedTensorType>(c.getInput().getType());
  auto to = cast<RankedTensorType>(grad.getType());
  return from.getElementTypeBitWidth() < to.getElementTypeBitWidth() ? c
                                                                     : nullptr;
}

/// Moves `ops` (in block order) and every op of the block that reads what
/// they make, transitively, to right after `anchor`, keeping their order.
/// The terminator stays. Returns the last op moved, or `anchor`.
Operation *moveAfter(ArrayRef<Operation *> ops, Operation *anchor) {
  Block *block = anchor->getBlock();
  llvm::SetVector<Operation *> moved;
  for (Operation *op : ops)
    if (op->isBeforeInBlock(anchor))
      moved.insert(op);
  if (moved.empty())
    return anchor;
  for (Operation &op : *block)
    if (!op.hasTrait<OpTrait::IsTerminator>() && !moved.contains(&op) &&
        llvm::any_of(op.getOperands(), [&](Value v) {
          return moved.contains(v.getDefiningOp());
        }))
      moved.insert(&op);
  SmallVector<Operation *> inOrder(moved.begin(), moved.end());
  llvm::sort(inOrder,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  Operation *after = anchor;
  for (Operation *op : inOrder) {
    if (!op->isBeforeInBlock(anchor) && op != anchor)
      continue; // already after it: a reader stays where it is
    op->moveAfter(after);
    after = op;
  }
  return after;
}

/// One bucket's exchange: its members, one operand per gradient value, the
/// skip flag they share (or null) and the op that starts it.
struct Exchange {
  MutableArrayRef<Member> members;
  llvm::MapVector<Value, unsigned> operand;
  Value skip;
  graph::AllReduceStartOp start;
};

struct GraphDataParallelPass
    : impl::GraphDataParallelPassBase<GraphDataParallelPass> {
  using Base::Base;

  GraphDataParallelPassOptions options() const {
    GraphDataParallelPassOptions o;
    o.worldSize = worldSize;
    o.bucketMb = bucketMb;
    o.syncBatchNorm = syncBatchNorm;
    o.lowPrecisionExchange = lowPrecisionExchange;
    o.overlap = overlap;
    return o;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto refuse = [&](ArrayRef<StringRef> names, const Twine &why) {
      emitOptionError(module.getLoc(), getArgument(), names, why);
    };
    if (failed(checkPassOptions(options(), refuse)))
      return signalPassFailure();
    if (worldSize == 1)
      return;
    auto f = module.lookupSymbol<func::FuncOp>("train_step");
    if (!f || f.isExternal() || !f.getBody().hasOneBlock()) {
      module.emitError("graph-data-parallel: the module has no @train_step "
                       "with one block; run graph-build-training first");
      return signalPassFailure();
    }
    average(f);
    if (syncBatchNorm) {
      auto ranks = IntegerAttr::get(IntegerType::get(&getContext(), 64),
                                    static_cast<int64_t>(worldSize));
      f.walk([&](Operation *op) {
        if (isa<graph::BatchNormTrainingOp, graph::BatchNormGradOp>(op))
          op->setAttr("sync_ranks", ranks);
      });
    }
  }

  void average(func::FuncOp f) {
    Block &block = f.getBody().front();
    SmallVector<Member> members;
    for (auto u : block.getOps<graph::OptimizerUpdateOpInterface>()) {
      Value g = u.getGrad();
      amp::CastOp c = wideningCast(g);
      members.push_back({u, c ? c.getInput() : g, c});
    }
    if (members.empty())
      return;
    // The order the backward pass makes them in. A gradient is never a
    // block argument: it is computed by the step.
    llvm::stable_sort(members, [](const Member &a, const Member &b) {
      return a.reduced.getDefiningOp()->isBeforeInBlock(
          b.reduced.getDefiningOp());
    });

    const int64_t limit = static_cast<int64_t>(bucketMb * 1024 * 1024);
    SmallVector<SmallVector<Member>> buckets;
    int64_t bytes = 0;
    for (const Member &m : members) {
      // A value read by several updates is adjacent after the sort: its
      // bytes count once, in one bucket.
      if (!buckets.empty() && buckets.back().back().reduced == m.reduced) {
        buckets.back().push_back(m);
        continue;
      }
      if (buckets.empty() || bytes + bytesOf(m.reduced) > limit) {
        buckets.emplace_back();
        bytes = 0;
      }
      buckets.back().push_back(m);
      bytes += bytesOf(m.reduced);
    }

    // Each bucket's exchange starts as soon as its last gradient exists,
    // the buckets in the order the backward pass completes them.
    OpBuilder b(f.getContext());
    SmallVector<Exchange> exchanges;
    for (MutableArrayRef<Member> bucket : buckets) {
      Exchange &x = exchanges.emplace_back();
      x.members = bucket;
      Operation *last = bucket.front().reduced.getDefiningOp();
      for (Member &m : bucket) {
        // One operand per value: updates that read the same gradient (or
        // the same cast of it) share its mean.
        x.operand.insert({m.reduced, x.operand.size()});
        if (last->isBeforeInBlock(m.reduced.getDefiningOp()))
          last = m.reduced.getDefiningOp();
      }
      SmallVector<Value> inputs;
      int64_t elements = 0;
      // The wire type: the gradients' own when they are all of one 16-bit
      // type (and the option asks for it), else f32.
      Type wire = cast<RankedTensorType>(x.operand.front().first.getType())
                      .getElementType();
      for (auto &entry : x.operand) {
        auto type = cast<RankedTensorType>(entry.first.getType());
        inputs.push_back(entry.first);
        elements += type.getNumElements();
        if (type.getElementType() != wire)
          wire = b.getF32Type();
      }
      if (!lowPrecisionExchange || wire.getIntOrFloatBitWidth() != 16)
        wire = b.getF32Type();
      // Gradient accumulation skips the updates of the steps that only
      // add (the only guard before amp-loss-scale): the exchange too.
      x.skip = bucket.front().update.getSkip();
      for (Member &m : bucket)
        if (m.update.getSkip() != x.skip)
          x.skip = nullptr;
      if (Operation *def = x.skip ? x.skip.getDefiningOp() : nullptr;
          def && def != last && !def->isBeforeInBlock(last))
        x.skip = nullptr;
      if (x.skip)
        inputs.push_back(x.skip);
      // After the previous start when one op made the last gradients of
      // both buckets: the starts keep the buckets' order.
      Operation *after = last;
      if (exchanges.size() > 1 &&
          last->isBeforeInBlock(exchanges[exchanges.size() - 2].start))
        after = exchanges[exchanges.size() - 2].start;
      b.setInsertionPointAfter(after);
      x.start = graph::AllReduceStartOp::create(
          b, last->getLoc(), RankedTensorType::get({elements}, wire), inputs,
          b.getI64IntegerAttr(worldSize));
    }

    llvm::SetVector<Operation *> oldCasts;
    // The last op placed for the previous bucket (its wait, casts and
    // updates): the waits keep the buckets' order.
    Operation *previous = nullptr;
    for (auto [k, x] : llvm::enumerate(exchanges)) {
      // With overlap, bucket k's exchange runs while the backward pass
      // makes bucket k+1 and until that bucket's exchange has started (one
      // wait at a time, at most two buffers in flight).
      Operation *waitAfter = overlap && k + 1 < exchanges.size()
                                 ? exchanges[k + 1].start.getOperation()
                                 : x.start.getOperation();
      if (previous && waitAfter->isBeforeInBlock(previous))
        waitAfter = previous;
      b.setInsertionPointAfter(waitAfter);
      SmallVector<Type> types;
      for (auto &entry : x.operand)
        types.push_back(entry.first.getType());
      auto wait = graph::AllReduceWaitOp::create(
          b, x.start.getLoc(), types, x.start.getExchange(), x.skip,
          b.getI64IntegerAttr(worldSize));
      Operation *anchor = wait;
      // The cast after the mean of each widened gradient, made once.
      llvm::DenseMap<Operation *, Value> recast;
      SmallVector<Operation *> updates;
      for (Member &m : x.members) {
        Value averaged = wait.getMeans()[x.operand.lookup(m.reduced)];
        Value read = averaged;
        if (m.widening) {
          Value &c = recast[m.widening];
          if (!c) {
            b.setInsertionPointAfter(anchor);
            auto made = amp::CastOp::create(b, m.widening.getLoc(),
                                            m.widening.getType(), averaged);
            made->setAttrs(m.widening->getAttrs());
            anchor = made;
            c = made;
          }
          read = c;
          oldCasts.insert(m.widening);
        }
        m.update.getGradMutable().set(read);
        updates.push_back(m.update);
      }
      previous = moveAfter(updates, anchor);
    }
    // The casts the updates read before are dead now, unless the step
    // reads them elsewhere.
    for (Operation *c : oldCasts)
      if (c->use_empty())
        c->erase();
    f->setAttr(graph::kWorldSizeAttr,
               IntegerAttr::get(IntegerType::get(f.getContext(), 64),
                                static_cast<int64_t>(worldSize)));
  }
};

} // namespace
} // namespace ampc
