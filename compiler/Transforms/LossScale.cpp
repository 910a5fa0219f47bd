//===- LossScale.cpp - the amp-loss-scale pass ----------------------------===//
//
// Loss scaling inside @train_step: the seed of the backward pass becomes the
// scale, one amp.check_finite reads every gradient an update uses, its
// found_inf skips the updates and keeps the other state, and each update
// unscales its gradient as it reads it. Everything is
// a value of the step, so no host synchronisation is needed. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Transforms/OptionChecks.h"
#include "compiler/Transforms/StepState.h"

#include "llvm/ADT/SetVector.h"

namespace ampc {
#define GEN_PASS_DEF_AMPLOSSSCALEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

constexpr llvm::StringLiteral kScaleName = "loss_scale";
constexpr llvm::StringLiteral kGoodName = "loss_scale.good_steps";
constexpr llvm::StringLiteral kBadName = "loss_scale.bad_steps";

bool hasF16(func::FuncOp f) {
  auto isF16 = [](Type t) {
    auto s = dyn_cast<ShapedType>(t);
    return s && s.getElementType().isF16();
  };
  if (llvm::any_of(f.getArgumentTypes(), isF16))
    return true;
  return f
      .walk([&](Operation *op) {
        return llvm::any_of(op->getResultTypes(), isF16)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

struct AmpLossScalePass : impl::AmpLossScalePassBase<AmpLossScalePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto refuse = [&](ArrayRef<StringRef> names, const Twine &why) {
      emitOptionError(module.getLoc(), getArgument(), names, why);
    };
    if (failed(checkPassOptions(options(), refuse)))
      return signalPassFailure();
    auto f = module.lookupSymbol<func::FuncOp>("train_step");
    if (!f || f.isExternal() || !f.getBody().hasOneBlock()) {
      module.emitError("amp-loss-scale: the module has no @train_step with "
                       "one block; run graph-build-training first");
      return signalPassFailure();
    }
    LossScaleMode m = mode;
    if (m == LossScaleMode::Auto)
      m = hasF16(f) ? LossScaleMode::Dynamic : LossScaleMode::None;
    if (m == LossScaleMode::None)
      return;
    if (failed(scale(f, m == LossScaleMode::Dynamic)))
      return signalPassFailure();
  }

  AmpLossScalePassOptions options() const {
    AmpLossScalePassOptions o;
    o.mode = mode;
    o.initScale = initScale;
    o.scaleGrowth = scaleGrowth;
    o.scaleBackoff = scaleBackoff;
    o.growthInterval = growthInterval;
    o.decrEveryN = decrEveryN;
    o.minScale = minScale;
    o.maxScale = maxScale;
    return o;
  }

  LogicalResult scale(func::FuncOp f, bool dynamic) {
    MLIRContext *ctx = f.getContext();
    Block &block = f.getBody().front();
    auto ret = cast<func::ReturnOp>(block.getTerminator());
    Location loc = f.getLoc();

    SmallVector<graph::OptimizerUpdateOpInterface> updates;
    SmallVector<Operation *> seeds;
    for (Operation &op : block) {
      if (auto u = dyn_cast<graph::OptimizerUpdateOpInterface>(op))
        updates.push_back(u);
      if (op.hasAttr(graph::kLossSeedAttr))
        seeds.push_back(&op);
    }
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (auto n = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
          n && n.getValue() == kScaleName)
        return f.emitError("amp-loss-scale: @train_step already has an "
                           "argument named '")
               << kScaleName << "': the step is scaled already";
    if (updates.empty())
      return success(); // nothing is trained: there is no gradient to scale
    if (seeds.size() != 1)
      return f.emitError("amp-loss-scale: @train_step has ")
             << seeds.size() << " ops marked " << graph::kLossSeedAttr
             << " (the seed of the backward pass) but needs exactly one; run "
                "amp-loss-scale right after graph-build-training, before "
                "canonicalization folds the seed";

    // Micro-steps of gradient accumulation: one `skip` shared by every
    // update.
    Value between;
    for (graph::OptimizerUpdateOpInterface u : updates) {
      Value v = u.getSkip();
      if (u.getOperation() != updates.front().getOperation() && v != between)
        return u->emitOpError("is skipped by another condition than the "
                              "first update of the step; amp-loss-scale "
                              "needs one condition for all of them");
      between = v;
    }

    OpBuilder b(ctx);
    auto f32 = RankedTensorType::get({}, b.getF32Type());
    auto i64 = RankedTensorType::get({}, b.getI64Type());
    auto addState = [&](Type type, StringRef name, Attribute init) {
      return addStateArgument(f, type, name, init, loc);
    };
    auto scaleInit =
        DenseElementsAttr::get(f32, APFloat(static_cast<float>(initScale)));
    Value scale, good, bad;
    b.setInsertionPointToStart(&block);
    if (dynamic) {
      scale = addState(f32, kScaleName, scaleInit);
      good = addState(i64, kGoodName, b.getZeroAttr(i64));
      bad = addState(i64, kBadName, b.getZeroAttr(i64));
    } else {
      scale = graph::ConstantOp::create(b, loc, scaleInit);
    }

    // d loss / d loss = S instead of 1.
    Operation *seed = seeds.front();
    Value seedValue = seed->getResult(0);
    b.setInsertionPoint(seed);
    Value scaled = scale;
    if (seedValue.getType() != f32)
      scaled =
          amp::CastOp::create(b, seed->getLoc(), seedValue.getType(), scale);
    seedValue.replaceAllUsesWith(scaled);
    seed->erase();

    // The updates wait for the one check: move them, and what reads what
    // they write, to the end of the step in their order.
    llvm::SetVector<Operation *> moved;
    for (graph::OptimizerUpdateOpInterface u : updates)
      moved.insert(u);
    for (Operation &op : block)
      if (&op != ret && llvm::any_of(op.getOperands(), [&](Value v) {
            return moved.contains(v.getDefiningOp());
          }))
        moved.insert(&op);
    SmallVector<Operation *> inOrder(moved.begin(), moved.end());
    llvm::sort(inOrder, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
    for (Operation *op : inOrder)
      op->moveBefore(ret);

    // One read-only check over the gradients as the updates read them; each
    // update applies 1/S itself as it reads its gradient, so no gradient is
    // rewritten (amp-fold-casts then lets both read the low-precision
    // gradient in place of its f32 cast).
    SmallVector<Value> grads;
    for (graph::OptimizerUpdateOpInterface u : updates)
      grads.push_back(u.getGrad());
    b.setInsertionPoint(inOrder.front());
    auto check = amp::CheckFiniteOp::create(
        b, loc, RankedTensorType::get({}, b.getI1Type()), grads, scale,
        between);
    Value found = check.getFoundInf();
    // At an update, skip if it overflowed; between updates, always.
    Value skip = found;
    if (between)
      skip = graph::WhereOp::create(b, loc, found.getType(), between, between,
                                    found);
    for (graph::OptimizerUpdateOpInterface u : updates)
      u.setGuards(skip, scale);

    // The rest of the state the step writes: the step counter, running
    // statistics. The working copies are the rounded parameters, which a
    // skipped update leaves as they were. Accumulated gradients restart
    // after an update whether it overflowed or not, as after PyTorch's
    // zero_grad. Between updates found_inf is false: nothing is kept.
    auto restartsAnyway = [&](unsigned arg) {
      auto n = f.getArgAttrOfType<StringAttr>(arg, graph::kNameAttr);
      return n && (n.getValue() == kMicroStepName ||
                   n.getValue().ends_with(kGradSumSuffix));
    };
    b.setInsertionPoint(ret);
    SmallVector<unsigned> guarded;
    SmallVector<Value> fresh, old;
    for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
      auto tied = f.getResultAttrOfType<IntegerAttr>(i, graph::kUpdatesAttr);
      if (!tied)
        continue;
      Value v = ret.getOperand(i);
      Operation *def = v.getDefiningOp();
      if (isa_and_nonnull<graph::OptimizerUpdateOpInterface>(def))
        continue;
      if (auto c = dyn_cast_or_null<amp::CastOp>(def);
          c && c->hasAttr(amp::kWorkingCopyAttr) &&
          c.getInput().getDefiningOp<graph::OptimizerUpdateOpInterface>())
        continue;
      if (restartsAnyway(tied.getInt()))
        continue;
      guarded.push_back(i);
      fresh.push_back(v);
      old.push_back(f.getArgument(tied.getInt()));
    }
    if (!guarded.empty()) {
      auto guard = amp::GuardUpdateOp::create(
          b, loc, ValueRange(fresh).getTypes(), found, fresh, old);
      for (auto [i, r] : llvm::zip(guarded, guard.getResults()))
        ret->setOperand(i, r);
    }

    SmallVector<StepResult> extra;
    if (dynamic) {
      auto next = amp::UpdateScaleOp::create(
          b, loc, TypeRange{f32, i64, i64}, scale, good, bad, found,
          b.getF64FloatAttr(scaleGrowth), b.getF64FloatAttr(scaleBackoff),
          b.getI64IntegerAttr(growthInterval), b.getI64IntegerAttr(decrEveryN),
          b.getF64FloatAttr(minScale), b.getF64FloatAttr(maxScale));
      SmallVector<Value> before = {scale, good, bad};
      SmallVector<Value> states(next.getResults());
      if (between) // the scale moves at updates only
        states = SmallVector<Value>(
            amp::GuardUpdateOp::create(b, loc, ValueRange(before).getTypes(),
                                       between, states, before)
                .getResults());
      for (auto [v, arg] : llvm::zip(states, before))
        extra.push_back({v, cast<BlockArgument>(arg).getArgNumber(), ""});
    }
    extra.push_back({found, std::nullopt, kFoundInfName.str()});
    appendResults(f, extra);
    return success();
  }
};

} // namespace
} // namespace ampc
