//===- FoldCasts.cpp - the amp-fold-casts pass ----------------------------===//
//
// One walk over the amp.casts of a function in program order: shortens
// chains whose early steps are exact, shares casts of one value to one type,
// converts casts of constants, then erases what lost its users.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/FoldCasts.h"

#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"

namespace ampc {
#define GEN_PASS_DEF_AMPFOLDCASTSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// Whether converting `from` to `to` keeps every value of `from`.
bool isExact(Type from, Type to) {
  auto a = cast<FloatType>(cast<ShapedType>(from).getElementType());
  auto b = cast<FloatType>(cast<ShapedType>(to).getElementType());
  return APFloat::isRepresentableBy(a.getFloatSemantics(),
                                    b.getFloatSemantics());
}

/// `value` as elements of `type`, rounded to nearest even as amp.cast
/// rounds; null when the storage is not inline dense floats (resources).
ElementsAttr convertConstant(ElementsAttr value, Type type) {
  auto dense = dyn_cast<DenseFPElementsAttr>(value);
  if (!dense)
    return {};
  auto to = cast<FloatType>(cast<ShapedType>(type).getElementType());
  return dense.mapValues(to, [&](const APFloat &v) {
    APFloat x = v;
    bool losesInfo;
    x.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
    return x.bitcastToAPInt();
  });
}

/// Whether `op` is a cast of `v` or of a sibling of `v` (a result of the same
/// op, an argument of the same block): the casts already hoisted to where
/// `v` is defined.
bool castsSibling(Operation &op, Value v) {
  auto c = dyn_cast<amp::CastOp>(op);
  if (!c)
    return false;
  Value in = c.getInput();
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto inArg = dyn_cast<BlockArgument>(in);
    return inArg && inArg.getOwner() == arg.getOwner();
  }
  return in.getDefiningOp() == v.getDefiningOp();
}

/// Moves the cast `op` of `v` right after the definition of `v` (to the top
/// of the block for an argument), behind the casts hoisted there before it,
/// so that it dominates every use of `v` and hoisted casts keep their order.
void hoistToDefinition(Operation *op, Value v) {
  Block *block;
  Block::iterator it;
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    block = arg.getOwner();
    it = block->begin();
  } else {
    block = v.getDefiningOp()->getBlock();
    it = std::next(v.getDefiningOp()->getIterator());
  }
  for (; it != block->end() && castsSibling(*it, v); ++it)
    if (&*it == op)
      return;
  op->moveBefore(block, it);
}

/// Moves each cast of a parameter (inference's low copy of a weight, O1's
/// per-step working copy) to right before its first user. Hoisted to the
/// top of the function, every copy was live from the first kernel on, so
/// the arena held all of them at once. (An O2 working copy's cast in a
/// training step is replaced by state the update writes, wherever it is.)
void sinkParameterCasts(func::FuncOp func) {
  Block &block = func.getBody().front();
  SmallVector<amp::CastOp> casts;
  for (auto c : block.getOps<amp::CastOp>()) {
    auto arg = dyn_cast<BlockArgument>(c.getInput());
    if (arg && arg.getOwner() == &block &&
        func.getArgAttr(arg.getArgNumber(), graph::kInitAttr))
      casts.push_back(c);
  }
  if (casts.empty())
    return;
  // Positions before any move (a move makes isBeforeInBlock renumber the
  // block: quadratic in a model with thousands of parameters). Moving the
  // casts keeps the order of everything else.
  DenseMap<Operation *, unsigned> position;
  for (Operation &op : block)
    position[&op] = position.size();
  for (amp::CastOp c : casts) {
    Operation *first = nullptr;
    for (Operation *user : c->getUsers()) {
      Operation *at = block.findAncestorOpInBlock(*user);
      if (at && (!first || position.lookup(at) < position.lookup(first)))
        first = at;
    }
    if (first && first != c->getNextNode())
      c->moveBefore(first);
  }
}

class CastFolder {
public:
  unsigned run(func::FuncOp func) {
    SmallVector<amp::CastOp> casts;
    func.walk([&](amp::CastOp c) { casts.push_back(c); });
    // In program order an input is final before its users are visited.
    for (amp::CastOp c : casts)
      visit(c);
    readGradientsAsMade(func);
    eraseDead(func);
    sinkParameterCasts(func);
    return removed;
  }

private:
  void visit(amp::CastOp c) {
    if (c.use_empty()) {
      erase(c);
      return;
    }
    // Only the last step rounds when every step before it is exact.
    Value in = c.getInput();
    while (auto inner = in.getDefiningOp<amp::CastOp>()) {
      if (!isExact(inner.getInput().getType(), inner.getType()))
        break;
      in = inner.getInput();
    }
    if (in.getType() == c.getType())
      return replace(c, in);
    if (in != c.getInput())
      c.getInputMutable().assign(in);

    auto [it, fresh] = shared.try_emplace({in, c.getType()}, Value());
    if (!fresh) {
      Value kept = it->second;
      if (auto keptCast = kept.getDefiningOp<amp::CastOp>())
        hoistToDefinition(keptCast, in);
      return replace(c, kept);
    }
    if (auto k = in.getDefiningOp<graph::ConstantOp>()) {
      if (ElementsAttr value = convertConstant(k.getValue(), c.getType())) {
        // Before the original, which this usually leaves dead: the new
        // constant takes its place and dominates whatever it dominated.
        OpBuilder b(k);
        auto converted = graph::ConstantOp::create(b, k.getLoc(), value);
        convertedFrom.insert(k);
        it->second = converted;
        return replace(c, converted);
      }
    }
    it->second = c.getResult();
  }

  /// An optimizer update of an f32 parameter and the overflow check read an
  /// f16/bf16 gradient as it is: the f32 cast in front of them (the
  /// gradient of a working copy's cast) is exact, so reading the narrow
  /// value gives the same numbers without an f32 copy of the gradient.
  void readGradientsAsMade(func::FuncOp func) {
    auto narrowSource = [](Value v) -> Value {
      auto c = v.getDefiningOp<amp::CastOp>();
      if (!c || !isExact(c.getInput().getType(), c.getType()))
        return {};
      Type from = cast<ShapedType>(c.getInput().getType()).getElementType();
      return from.isF16() || from.isBF16() ? c.getInput() : Value();
    };
    func.walk([&](Operation *op) {
      if (auto update = dyn_cast<graph::OptimizerUpdateOpInterface>(op)) {
        OpOperand &grad = update.getGradMutable();
        Value param = update.getParam();
        if (Value narrow = narrowSource(grad.get());
            narrow && getElementTypeOrSelf(param.getType()).isF32())
          grad.set(narrow);
      } else if (auto check = dyn_cast<amp::CheckFiniteOp>(op)) {
        for (OpOperand &g : check.getGradsMutable())
          if (Value narrow = narrowSource(g.get()))
            g.set(narrow);
      }
    });
  }

  void replace(amp::CastOp c, Value v) {
    c.getResult().replaceAllUsesWith(v);
    erase(c);
  }

  void erase(amp::CastOp c) {
    c.erase();
    ++removed;
  }

  /// Erases, last first so that chains go too, the casts left without users
  /// and the constants whose every cast was converted.
  void eraseDead(func::FuncOp func) {
    SmallVector<Operation *> candidates;
    func.walk([&](Operation *op) {
      if (isa<amp::CastOp>(op) || convertedFrom.contains(op))
        candidates.push_back(op);
    });
    for (Operation *op : llvm::reverse(candidates)) {
      if (!op->use_empty())
        continue;
      if (auto c = dyn_cast<amp::CastOp>(op))
        erase(c);
      else
        op->erase();
    }
  }

  /// The one cast (or converted constant) of a value to a type.
  llvm::DenseMap<std::pair<Value, Type>, Value> shared;
  llvm::SmallPtrSet<Operation *, 8> convertedFrom;
  unsigned removed = 0;
};

struct AmpFoldCastsPass : impl::AmpFoldCastsPassBase<AmpFoldCastsPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto f : getOperation().getOps<func::FuncOp>())
      foldAmpCasts(f);
  }
};

} // namespace

unsigned foldAmpCasts(func::FuncOp func) { return CastFolder().run(func); }

} // namespace ampc
