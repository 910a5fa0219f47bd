//===- AutoCast.cpp - the amp-auto-cast pass ------------------------------===//
//
// Decides the precision of every op of @forward in one walk in program
// order (an op's decision may depend on its producers', never on its
// users'), then realises it with casts shared per (value, dtype). Looking
// through the casts a previous run placed makes the pass idempotent: the
// decisions only read op categories and producers, and the cast cache is
// seeded with the casts already there. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Transforms/AmpLists.h"
#include "compiler/Transforms/AmpOperandPolicy.h"
#include "compiler/Transforms/AmpReport.h"
#include "compiler/Transforms/ConvertElements.h"
#include "compiler/Transforms/FoldCasts.h"
#include "compiler/Transforms/LossResult.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

namespace ampc {
#define GEN_PASS_DEF_AMPAUTOCASTPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

bool isCastable(Type elem) {
  return isa<Float32Type, Float16Type, BFloat16Type>(elem);
}

Type elemOf(Value v) { return cast<ShapedType>(v.getType()).getElementType(); }

Value lookThroughCasts(Value v) {
  while (auto c = v.getDefiningOp<amp::CastOp>())
    v = c.getInput();
  return v;
}

/// Operands an op keeps in f32 when it runs low (AmpOperandPolicy.td).
bool keepsOperandF32(Operation *op, unsigned i) {
  auto policy = dyn_cast<AmpOperandPolicyOpInterface>(op);
  return policy && policy.keepsOperandF32(i);
}

/// The ONNX node an op came from (its NameLoc), or "".
std::string nodeName(Location loc) {
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      if (std::string n = nodeName(l); !n.empty())
        return n;
  return "";
}

std::string typeName(Type t) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << t;
  return s;
}

using Level = AmpLevel;

class AutoCaster {
public:
  AutoCaster(func::FuncOp f, Level level, FloatType low, const AmpLists &lists,
             const llvm::StringSet<> &fp32Nodes,
             const llvm::StringSet<> &lowNodes, bool masterWeights)
      : f(f), block(f.getBody().front()), level(level), low(low), lists(lists),
        fp32Nodes(fp32Nodes), lowNodes(lowNodes), masterWeights(masterWeights) {
  }

  LogicalResult run(AmpReport &report) {
    report.level = stringifyAmpLevel(level).str();
    report.dtype = typeName(low);
    int64_t before = countCasts();
    findLossRegion();
    seedCastCache();
    SmallVector<Operation *> ops;
    for (Operation &op : block.without_terminator())
      ops.push_back(&op);
    for (Operation *op : ops)
      if (failed(visit(op, report)))
        return failure();
    if (level != Level::O0) {
      auto ret = cast<func::ReturnOp>(block.getTerminator());
      auto results = f.getFunctionType().getResults();
      for (unsigned i = 0; i < ret.getNumOperands(); ++i) {
        Type want = cast<ShapedType>(results[i]).getElementType();
        if (isCastable(want))
          ret.setOperand(i, castTo(ret.getOperand(i), want));
      }
      if (level == Level::O3 && !masterWeights && failed(storeParamsLow()))
        return failure();
      eraseDeadCasts();
      foldAmpCasts(f);
    }
    describeParams(report);
    report.castsInserted = countCasts() - before;
    return success();
  }

private:
  struct Decision {
    bool low;
    std::string rule;
  };

  int64_t countCasts() {
    int64_t n = 0;
    f.walk([&](amp::CastOp) { ++n; });
    return n;
  }

  /// A parameter, a constant, or a value computed from those alone (an
  /// RNN's summed biases, a reshaped affine scale): it is cast once where
  /// an op reads it low, as autocast casts a module's weights, and does
  /// not decide the op's precision as an activation would.
  bool isParamOrConstant(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v))
      return static_cast<bool>(
          f.getArgAttr(arg.getArgNumber(), graph::kInitAttr));
    auto [it, inserted] = paramDerived.try_emplace(v, false);
    if (!inserted)
      return it->second;
    Operation *def = v.getDefiningOp();
    bool derived = isa<graph::ConstantOp>(def) ||
                   (def->getNumRegions() == 0 && def->getNumOperands() > 0 &&
                    llvm::all_of(def->getOperands(), [&](Value operand) {
                      return isParamOrConstant(operand);
                    }));
    paramDerived[v] = derived;
    return derived;
  }

  void findLossRegion() {
    std::optional<unsigned> loss = defaultLossResult(f);
    if (!loss)
      return;
    Value v = lookThroughCasts(block.getTerminator()->getOperand(*loss));
    Operation *def = v.getDefiningOp();
    if (!def)
      return;
    SmallVector<Operation *> work{def};
    while (!work.empty()) {
      Operation *op = work.pop_back_val();
      if (isa<func::ReturnOp>(op) || !lossRegion.insert(op))
        continue;
      for (Operation *user : op->getUsers())
        work.push_back(user);
    }
  }

  void seedCastCache() {
    for (Operation &op : block) {
      auto c = dyn_cast<amp::CastOp>(op);
      if (!c || !isa<BlockArgument>(c.getInput()))
        break;
      hoistLast = &op;
    }
    block.walk([&](amp::CastOp c) {
      castCache.try_emplace({c.getInput(), elemOf(c.getOutput())},
                            c.getOutput());
    });
  }

  /// The value `v` as element type `want`: `v` itself, its root (through
  /// casts), or one shared cast of the root, placed right after the root is
  /// defined (at the top of the step for arguments).
  Value castTo(Value v, Type want) {
    Value root = lookThroughCasts(v);
    if (elemOf(root) == want)
      return root;
    auto [it, inserted] = castCache.try_emplace({root, want}, Value());
    if (!inserted)
      return it->second;
    OpBuilder b(f.getContext());
    if (isa<BlockArgument>(root)) {
      if (hoistLast)
        b.setInsertionPointAfter(hoistLast);
      else
        b.setInsertionPointToStart(&block);
    } else {
      b.setInsertionPointAfter(root.getDefiningOp());
    }
    auto type = RankedTensorType::get(
        cast<ShapedType>(root.getType()).getShape(), want);
    auto c = amp::CastOp::create(b, root.getLoc(), type, root);
    if (auto arg = dyn_cast<BlockArgument>(root)) {
      hoistLast = c;
      // With an f32 master, the low copy of a parameter is its working copy:
      // graph-build-training has the optimizer update write it (O1 casts
      // where used instead, as DESIGN.md says).
      if ((level == Level::O2 || (level == Level::O3 && masterWeights)) &&
          want == Type(low) &&
          f.getArgAttr(arg.getArgNumber(), graph::kInitAttr))
        c->setAttr(amp::kWorkingCopyAttr, b.getUnitAttr());
    }
    it->second = c.getOutput();
    return c.getOutput();
  }

  Decision decide(Operation *op, std::optional<AmpCategory> category) {
    std::string node = nodeName(op->getLoc());
    if (level == Level::O0)
      return {false, "O0: nothing changes"};
    if (lossRegion.contains(op))
      return {false, "loss: the loss and what follows it stay f32"};
    if (!node.empty() && fp32Nodes.contains(node))
      return {false, "fp32-nodes: node '" + node + "' forced to f32"};
    if (!node.empty() && lowNodes.contains(node))
      return {true, "low-nodes: node '" + node + "' forced low"};
    if (isa<graph::CastOp>(op))
      return {false, "model cast: keeps the types the model wrote"};
    if (!category)
      return {false, "not on the AMP lists: stays f32"};
    std::string list = (categoryName(*category) + " list").str();
    if (level == Level::O3)
      return {true, "O3: every op runs low"};
    // Autocast runs instance_norm in its input's type (statistics in f32
    // inside); ampc writes it as a layer norm, which computes in f32 inside.
    // At O1 that layer norm is decided as an infer op (at O2 every such
    // layer norm follows its input, below).
    if (level == Level::O1 && op->hasAttr(graph::kInstanceNormAttr) &&
        *category == AmpCategory::Deny &&
        op->hasTrait<graph::OpTrait::WideCompute>() &&
        !lists.movedByUser(op->getName().stripDialect())) {
      category = AmpCategory::Infer;
      list = "instance norm (a layer norm computing in f32 inside, infer as "
             "autocast runs it)";
    }
    if (*category == AmpCategory::Unlisted)
      return {false, "taken off its list: stays f32"};
    // A deny op that computes in f32 inside (layer norm, softmax) follows
    // its input at O2, unless the user put it on the deny list.
    bool wideAtO2 = *category == AmpCategory::Deny && level == Level::O2 &&
                    op->hasTrait<graph::OpTrait::WideCompute>() &&
                    !lists.movedByUser(op->getName().stripDialect());
    if (*category == AmpCategory::Deny && !wideAtO2)
      return {false, "deny list"};
    if (wideAtO2) {
      if (allActivationsFromF32Ops(op))
        return {false, "deny list (computes in f32 inside): every activation "
                       "input comes from an f32 op"};
      // Its result rounded to f16 would reach an f32 op that is sensitive
      // to it: probabilities below f16's range become 0 before a log.
      if (Operation *user = f32User(op))
        return {false, "deny list (computes in f32 inside): its result feeds " +
                           user->getName().getStringRef().str() +
                           ", which stays f32"};
      return {true, "O2: deny list, but computes in f32 inside: follows its "
                    "input"};
    }
    if (level == Level::O2) {
      // Deny spreads downstream: an infer/clear op fed only by f32 ops
      // stays f32 rather than cast in and (often) straight back out.
      if (*category != AmpCategory::Allow && allActivationsFromF32Ops(op))
        return {false, list + ": every activation input comes from an f32 op"};
      return {true, "O2: " + list + ", not deny"};
    }
    if (*category == AmpCategory::Allow)
      return {true, "allow list"};
    // O1 infer/clear: low only when every activation input is low, so a
    // chain between allow ops stays low and an f32 producer (a deny op, a
    // graph input) keeps its consumers f32 downstream.
    SmallVector<Value> inputs = activationInputs(op);
    if (inputs.empty())
      return {false, list + ": no activation input"};
    for (Value root : inputs)
      if (elemOf(root) != low)
        return {false, list + ": input " + describe(root) + " is " +
                           typeName(elemOf(root))};
    return {true, list + ": every activation input is " + typeName(low)};
  }

  /// A user of `op`'s results that stays f32 whatever its inputs: the loss
  /// and what follows it, or a deny (or unlisted) op that does not compute
  /// in f32 inside itself; null if none.
  Operation *f32User(Operation *op) {
    for (Operation *user : op->getUsers()) {
      if (lossRegion.contains(user))
        return user;
      std::optional<AmpCategory> c =
          lists.lookup(user->getName().stripDialect());
      if (c && (*c == AmpCategory::Deny || *c == AmpCategory::Unlisted) &&
          !user->hasTrait<graph::OpTrait::WideCompute>())
        return user;
    }
    return nullptr;
  }

  /// The float operands that decide an op's precision, through casts:
  /// parameters, constants and what is computed from them alone do not
  /// (they are cast once, or converted),
  /// nor do the f32 statistics and affine operands of normalizations.
  SmallVector<Value> activationInputs(Operation *op) {
    SmallVector<Value> roots;
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      if (!isCastable(elemOf(v)) || keepsOperandF32(op, i))
        continue;
      Value root = lookThroughCasts(v);
      if (!isParamOrConstant(root))
        roots.push_back(root);
    }
    return roots;
  }

  bool allActivationsFromF32Ops(Operation *op) {
    SmallVector<Value> inputs = activationInputs(op);
    return !inputs.empty() && llvm::all_of(inputs, [&](Value root) {
      return root.getDefiningOp() && elemOf(root) != low;
    });
  }

  /// How a report names a value: its ONNX node or argument name.
  std::string describe(Value v) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      auto n =
          f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), graph::kNameAttr);
      return "'" + (n ? n.getValue().str() : "arg") + "'";
    }
    Operation *def = v.getDefiningOp();
    std::string node = nodeName(def->getLoc());
    return "from " + def->getName().getStringRef().str() +
           (node.empty() ? "" : " (node '" + node + "')");
  }

  LogicalResult visit(Operation *op, AmpReport &report) {
    if (isa<amp::CastOp, graph::ConstantOp>(op) ||
        !isa<graph::GraphDialect>(op->getDialect()))
      return success();
    auto hasCastable = [](TypeRange types) {
      return llvm::any_of(types, [](Type t) {
        return isCastable(cast<ShapedType>(t).getElementType());
      });
    };
    auto hasF64 = [](TypeRange types) {
      return llvm::any_of(types, [](Type t) {
        return cast<ShapedType>(t).getElementType().isF64();
      });
    };
    if (!hasCastable(op->getOperandTypes()) &&
        !hasCastable(op->getResultTypes()))
      return success(); // integer-only ops have no precision to choose
    std::optional<AmpCategory> category =
        lists.lookup(op->getName().stripDialect());
    Decision d = hasF64(op->getOperandTypes()) || hasF64(op->getResultTypes())
                     ? Decision{false, "f64 data: never lowered"}
                     : decide(op, category);
    if (level != Level::O0 && failed(apply(op, d.low)))
      return failure();
    Type resultElem;
    for (Type t : op->getResultTypes())
      if (isCastable(cast<ShapedType>(t).getElementType())) {
        resultElem = cast<ShapedType>(t).getElementType();
        break;
      }
    report.ops.push_back(
        {nodeName(op->getLoc()), op->getName().stripDialect().str(),
         d.low ? typeName(low) : typeName(resultElem ? resultElem : f32()),
         d.rule});
    return success();
  }

  Type f32() { return Float32Type::get(f.getContext()); }

  Type originalElem(Value v) {
    auto it = originalType.find(v);
    return it != originalType.end() ? it->second : elemOf(v);
  }

  LogicalResult apply(Operation *op, bool runLow) {
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      Value v = op->getOperand(i);
      Type orig = originalElem(v);
      if (!isCastable(orig))
        continue;
      Type want = runLow && !keepsOperandF32(op, i) ? Type(low) : orig;
      Value nv = castTo(v, want);
      if (nv != v)
        op->setOperand(i, nv);
    }
    if (!runLow)
      return success();
    SmallVector<Type> types;
    if (auto infer = dyn_cast<InferTypeOpInterface>(op)) {
      if (failed(infer.inferReturnTypes(
              op->getContext(), op->getLoc(), op->getOperands(),
              op->getRawDictionaryAttrs(), op->getPropertiesStorage(),
              op->getRegions(), types)))
        return op->emitOpError("cannot run in ") << low;
    } else {
      for (Type t : op->getResultTypes()) {
        auto shaped = cast<ShapedType>(t);
        types.push_back(
            isCastable(shaped.getElementType()) ? shaped.clone(Type(low)) : t);
      }
    }
    for (auto [r, t] : llvm::zip(op->getResults(), types)) {
      if (r.getType() == t)
        continue;
      originalType.try_emplace(r, elemOf(r));
      r.setType(t);
    }
    graph::markAccumulation(op);
    return success();
  }

  /// O3 without master weights: a parameter that every user reads low is
  /// stored low, its initial value rounded once.
  LogicalResult storeParamsLow() {
    SmallVector<Type> argTypes(f.getArgumentTypes());
    for (BlockArgument arg : block.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto init = f.getArgAttrOfType<ElementsAttr>(i, graph::kInitAttr);
      if (!init || elemOf(arg) == low || !arg.hasOneUse())
        continue;
      auto c = dyn_cast<amp::CastOp>(*arg.getUsers().begin());
      if (!c || elemOf(c.getOutput()) != low)
        continue;
      auto name = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
      std::string n = name ? name.getValue().str() : std::to_string(i);
      FailureOr<ElementsAttr> converted = convertElements(init, low, n);
      if (failed(converted))
        return f.emitOpError("amp-auto-cast: cannot convert the initial "
                             "value of parameter '")
                   << n << "' to " << low,
               failure();
      arg.setType(c.getOutput().getType());
      f.setArgAttr(i, graph::kInitAttr, *converted);
      argTypes[i] = arg.getType();
      if (hoistLast == c.getOperation())
        hoistLast = c->getPrevNode();
      c.getOutput().replaceAllUsesWith(arg);
      castCache.erase({arg, low});
      c.erase();
    }
    f.setType(FunctionType::get(f.getContext(), argTypes,
                                f.getFunctionType().getResults()));
    return success();
  }

  void eraseDeadCasts() {
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (isa<amp::CastOp>(op) && op.use_empty())
        op.erase();
  }

  void describeParams(AmpReport &report) {
    for (BlockArgument arg : block.getArguments()) {
      unsigned i = arg.getArgNumber();
      if (!f.getArgAttr(i, graph::kInitAttr) || !isCastable(elemOf(arg)))
        continue;
      auto name = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
      AmpReport::Param p{name ? name.getValue().str() : std::to_string(i),
                         typeName(elemOf(arg)),
                         {}};
      for (Operation *user : arg.getUsers())
        if (auto c = dyn_cast<amp::CastOp>(user))
          p.workingCopies.push_back(typeName(elemOf(c.getOutput())));
      report.params.push_back(std::move(p));
    }
  }

  func::FuncOp f;
  Block &block;
  Level level;
  FloatType low;
  const AmpLists &lists;
  const llvm::StringSet<> &fp32Nodes;
  const llvm::StringSet<> &lowNodes;
  bool masterWeights;
  llvm::SetVector<Operation *> lossRegion;
  DenseMap<std::pair<Value, Type>, Value> castCache;
  DenseMap<Value, Type> originalType;
  DenseMap<Value, bool> paramDerived;
  /// The last cast of an argument at the top of the step: where the next
  /// one goes, so parameter casts stay together and in creation order.
  Operation *hoistLast = nullptr;
};

struct AmpAutoCastPass : impl::AmpAutoCastPassBase<AmpAutoCastPass> {
  using Base::Base;

  void getDependentDialects(DialectRegistry &registry) const override {
    Base::getDependentDialects(registry);
    registerAmpOperandPolicyModels(registry);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto fail = [&](const Twine &msg) {
      module.emitError(msg);
      signalPassFailure();
    };
    FloatType low = dtype == AmpDtype::F16
                        ? FloatType(Float16Type::get(&getContext()))
                        : FloatType(BFloat16Type::get(&getContext()));
    AmpLists lists = AmpLists::defaults();
    std::string error;
    for (auto [option, category, names] :
         {std::tuple<StringRef, AmpCategory, ArrayRef<std::string>>{
              "allow", AmpCategory::Allow, allow},
          {"deny", AmpCategory::Deny, deny},
          {"infer", AmpCategory::Infer, infer},
          {"clear", AmpCategory::Clear, clear}})
      if (failed(lists.edit(option, category, names, error)))
        return fail(error);

    auto forward = module.lookupSymbol<func::FuncOp>("forward");
    if (!forward || forward.isExternal())
      return fail("amp-auto-cast: the module has no @forward function with a "
                  "body; run it before graph-build-training");
    if (!forward.getBody().hasOneBlock())
      return fail("amp-auto-cast: @forward has several blocks");

    // Node overrides must name nodes that exist, and not both ways.
    llvm::StringSet<> nodes, fp32Set, lowSet;
    forward.walk([&](Operation *op) {
      if (std::string n = nodeName(op->getLoc()); !n.empty())
        nodes.insert(n);
    });
    for (auto [option, names, set] :
         {std::tuple<StringRef, ArrayRef<std::string>, llvm::StringSet<> *>{
              "fp32-nodes", fp32Nodes, &fp32Set},
          {"low-nodes", lowNodes, &lowSet}})
      for (const std::string &n : names) {
        if (!nodes.contains(n)) {
          std::vector<std::string> known;
          for (auto &k : nodes)
            known.push_back(k.getKey().str());
          llvm::sort(known);
          if (known.size() > 20) {
            known.resize(20);
            known.push_back("...");
          }
          return fail("amp-auto-cast: option '" + option + "' names node '" +
                      n + "', which no op of @forward comes from (nodes: " +
                      llvm::join(known, ", ") + ")");
        }
        set->insert(n);
      }
    for (auto &n : fp32Set)
      if (lowSet.contains(n.getKey()))
        return fail("amp-auto-cast: node '" + n.getKey() +
                    "' is in both fp32-nodes and low-nodes");

    AmpReport report;
    AutoCaster caster(forward, level, low, lists, fp32Set, lowSet,
                      masterWeights);
    if (failed(caster.run(report)))
      return signalPassFailure();
    if (!this->report.empty()) {
      std::string err;
      if (failed(report.write(this->report, err)))
        return fail("amp-auto-cast: " + err);
    }
  }
};

} // namespace
} // namespace ampc
