//===- BuildTraining.cpp - the graph-build-training pass ------------------===//
//
// Reverse-mode differentiation over the single block of @forward, then one
// optimizer update per trained parameter. See Passes.td for the contract.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Transforms/ConvertElements.h"
#include "compiler/Transforms/LossResult.h"
#include "compiler/Transforms/Optimizers.h"
#include "compiler/Transforms/OptionChecks.h"
#include "compiler/Transforms/StepState.h"
#include "compiler/Transforms/WorkingCopies.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GradientOpInterface.h"
#include "dialects/Graph/ShapeInference.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

namespace ampc {
#define GEN_PASS_DEF_GRAPHBUILDTRAININGPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

std::string nameOf(func::FuncOp f, unsigned i, bool result) {
  auto n = result ? f.getResultAttrOfType<StringAttr>(i, graph::kNameAttr)
                  : f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
  if (n)
    return n.getValue().str();
  return (result ? "result " : "argument ") + std::to_string(i);
}

/// The result to minimize: named by the option, else "loss", else the only
/// scalar float result.
FailureOr<unsigned> findLoss(func::FuncOp f, StringRef wanted) {
  auto results = f.getFunctionType().getResults();
  auto list = [&] {
    std::string s;
    for (unsigned i = 0; i < results.size(); ++i)
      s += (i ? ", '" : "'") + nameOf(f, i, true) + "' (" +
           llvm::formatv("{0}", results[i]).str() + ")";
    return s.empty() ? std::string("none") : s;
  };
  std::optional<unsigned> found;
  if (!wanted.empty()) {
    for (unsigned i = 0; i < results.size(); ++i)
      if (nameOf(f, i, true) == wanted)
        found = i;
    if (!found)
      return f.emitError("graph-build-training: @forward has no output named '")
                 << wanted << "'; its outputs are " << list(),
             failure();
  } else {
    found = defaultLossResult(f);
    if (!found)
      return f.emitError("graph-build-training: cannot tell which output "
                         "is the loss (no output is named 'loss' and ")
                 << llvm::count_if(results, isFloatScalar)
                 << " are float scalars); name it with the 'loss' option. "
                    "Outputs: "
                 << list(),
             failure();
  }
  if (!isFloatScalar(results[*found]))
    return f.emitError("graph-build-training: the loss '")
               << nameOf(f, *found, true) << "' must be a float scalar, not "
               << results[*found],
           failure();
  return *found;
}

class TrainingBuilder {
public:
  TrainingBuilder(func::FuncOp f, const OptimizerConfig &c, int64_t accumulate)
      : f(f), config(c), accumulate(accumulate) {}

  LogicalResult run(StringRef lossName, ArrayRef<std::string> freeze) {
    FailureOr<unsigned> loss = findLoss(f, lossName);
    if (failed(loss) || failed(pickTrained(freeze)))
      return failure();
    Block &block = f.getBody().front();
    auto ret = cast<func::ReturnOp>(block.getTerminator());
    Value lossValue = ret.getOperand(*loss);
    f->setAttr(graph::kLossAttr,
               StringAttr::get(f.getContext(), nameOf(f, *loss, true)));
    if (failed(differentiate(block, ret, lossValue)))
      return failure();
    reportUntrained(block);
    addUpdates(block, ret);
    // Gradient ops of operands that need none (the input batch, labels).
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(block)))
      if (&op != ret && isOpTriviallyDead(&op))
        op.erase();
    return makeWorkingCopiesState(f);
  }

private:
  /// 'a', 'b' of the arguments `args`.
  std::string listOf(ArrayRef<unsigned> args) const {
    std::string list;
    for (unsigned i : args)
      list += (list.empty() ? "'" : ", '") + nameOf(f, i, false) + "'";
    return list;
  }

  /// Trainable parameters: initializers marked trainable with a float type,
  /// less the frozen ones (each of which must name a parameter).
  LogicalResult pickTrained(ArrayRef<std::string> freeze) {
    llvm::StringSet<> params, frozen;
    for (const std::string &n : freeze)
      frozen.insert(n);
    for (unsigned i = 0; i < f.getNumArguments(); ++i)
      if (f.getArgAttr(i, graph::kInitAttr)) {
        params.insert(nameOf(f, i, false));
        paramArgs.push_back(i);
      }
    for (const std::string &n : freeze)
      if (!params.contains(n))
        return f.emitError("graph-build-training: freeze names '")
               << n << "', which is no parameter; the parameters are "
               << (paramArgs.empty() ? "none" : listOf(paramArgs));
    for (unsigned i : paramArgs) {
      auto attr = f.getArgAttrOfType<BoolAttr>(i, graph::kTrainableAttr);
      if (attr && attr.getValue() && autodiff::isFloat(f.getArgument(i)))
        trainable.push_back(i);
    }
    for (unsigned i : trainable)
      if (!frozen.contains(nameOf(f, i, false)))
        trained.push_back(i);
    // A weight must start finite: an inf or NaN one is a buffer exported as
    // a weight (a 0/-inf mask, whose finite entries training would move
    // while its infinite ones stay) or a broken file, and a NaN one makes
    // every update NaN.
    for (unsigned i : trained) {
      auto init = f.getArgAttrOfType<ElementsAttr>(i, graph::kInitAttr);
      std::optional<NonFiniteElement> bad = firstNonFinite(init);
      if (!bad)
        continue;
      // Its index in each dimension, as the runtime's checks print it.
      shape::Shape at = shape::unravel(
          bad->index, cast<ShapedType>(init.getType()).getShape());
      auto err = f.emitError("graph-build-training: parameter '")
                 << nameOf(f, i, false) << "' starts non-finite: ";
      if (at.empty()) {
        err << "its value";
      } else {
        err << "element [";
        llvm::interleaveComma(at, err);
        err << "]";
      }
      return err << " is " << bad->what
                 << ", and a weight must start finite; if it is a buffer, not "
                    "a weight, freeze it (the freeze option, amp-run "
                    "--freeze, or the model's ampc.frozen metadata)";
    }
    return success();
  }

  /// Says, in one warning, which trained parameters the loss has no
  /// differentiable path from: they get no gradient and keep their value.
  /// A batch norm's running statistics are state, not such parameters.
  void reportUntrained(Block &block) {
    llvm::DenseSet<Value> statistics;
    for (auto bn : block.getOps<graph::BatchNormTrainingOp>()) {
      statistics.insert(bn.getRunningMean());
      statistics.insert(bn.getRunningVar());
    }
    SmallVector<unsigned> idle;
    for (unsigned i : trained)
      if (!grads.lookup(f.getArgument(i)) &&
          !statistics.contains(f.getArgument(i)))
        idle.push_back(i);
    if (!idle.empty())
      f.emitWarning("graph-build-training: not trained, the loss has no "
                    "differentiable path from ")
          << listOf(idle);
  }

  /// Whether the step updates the running statistics of a training-mode
  /// batch norm: then it does something even when no parameter is trained
  /// (re-estimating the statistics of a frozen model).
  bool updatesStatistics(Block &block) {
    for (auto bn : block.getOps<graph::BatchNormTrainingOp>())
      for (Value stat : {bn.getRunningMean(), bn.getRunningVar()})
        if (auto arg = dyn_cast<BlockArgument>(stat))
          if (f.getArgAttr(arg.getArgNumber(), graph::kInitAttr))
            return true;
    return false;
  }

  /// A step whose loss depends on no trained parameter would run and change
  /// nothing; the message says why there is nothing.
  LogicalResult nothingToTrain() {
    auto err = f.emitError("graph-build-training: ");
    if (!trained.empty())
      err << "the loss '"
          << f->getAttrOfType<StringAttr>(graph::kLossAttr).getValue()
          << "' depends on none of the trained parameters (" << listOf(trained)
          << ")";
    else if (!trainable.empty())
      err << "freeze names every trainable parameter (" << listOf(trainable)
          << ")";
    else if (!paramArgs.empty())
      err << "no parameter of @forward is trainable (" << listOf(paramArgs)
          << " are frozen or not float)";
    else
      err << "@forward has no parameters (the model has no float "
             "initializers)";
    return err << ": nothing to train";
  }

  LogicalResult differentiate(Block &block, func::ReturnOp ret, Value loss) {
    // Values that depend on a trained parameter: only they need gradients.
    for (unsigned i : trained)
      active.insert(f.getArgument(i));
    SmallVector<Operation *> forward;
    for (Operation &op : block.without_terminator()) {
      forward.push_back(&op);
      if (llvm::any_of(op.getOperands(),
                       [&](Value v) { return active.contains(v); }))
        for (Value r : op.getResults())
          if (autodiff::isFloat(r))
            active.insert(r);
    }
    if (!active.contains(loss))
      return updatesStatistics(block) ? success() : nothingToTrain();

    OpBuilder b(ret);
    Value seed = autodiff::splat(b, ret.getLoc(), autodiff::typeOf(loss), 1.0);
    seed.getDefiningOp()->setAttr(graph::kLossSeedAttr, b.getUnitAttr());
    grads[loss] = seed;
    for (Operation *op : llvm::reverse(forward)) {
      SmallVector<Value> dys;
      bool any = false;
      for (Value r : op->getResults()) {
        dys.push_back(grads.lookup(r));
        any |= static_cast<bool>(dys.back());
      }
      if (!any)
        continue;
      auto iface = dyn_cast<graph::GradientOpInterface>(op);
      if (!iface)
        return op->emitOpError("has no gradient rule, but the loss depends "
                               "on a trained parameter through it");
      SmallVector<Value> dxs;
      if (failed(iface.buildGradients(b, dys, dxs)))
        return failure();
      for (auto [operand, dx] : llvm::zip(op->getOperands(), dxs)) {
        if (!dx || !active.contains(operand))
          continue;
        Value &sum = grads[operand];
        sum = sum ? autodiff::add(b, op->getLoc(), sum, dx) : dx;
      }
    }
    return success();
  }

  void addUpdates(Block &block, func::ReturnOp ret) {
    MLIRContext *ctx = f.getContext();
    OpBuilder b(ctx);
    Location loc = f.getLoc();
    auto i64 = RankedTensorType::get({}, IntegerType::get(ctx, 64));
    SmallVector<std::pair<Value, unsigned>> newState; // value, argument

    auto addStateArg = [&](Type type, StringRef name, Attribute init) {
      return addStateArgument(f, type, name, init, loc);
    };
    auto zerosOf = [&](Type t) { return b.getZeroAttr(t); };

    Value step = addStateArg(i64, kStepName, zerosOf(i64));
    unsigned stepArg = f.getNumArguments() - 1;
    b.setInsertionPointToStart(&block);
    Value lr = buildLearningRate(b, loc, config, step);
    Operation *lrOp = lr.getDefiningOp();

    // Gradient accumulation: `between` is true on the steps that only add
    // their gradients, when the micro-step counter does not reach N.
    Value between;
    if (accumulate > 1) {
      Value micro = addStateArg(i64, kMicroStepName, zerosOf(i64));
      Value next =
          autodiff::add(b, loc, micro, autodiff::splat(b, loc, i64, 1));
      Value left = autodiff::sub(
          b, loc, autodiff::splat(b, loc, i64, static_cast<double>(accumulate)),
          next);
      between = graph::CastOp::create(
          b, loc, RankedTensorType::get({}, b.getI1Type()), left);
      newState.push_back(
          {graph::WhereOp::create(b, loc, i64, between, next,
                                  autodiff::splat(b, loc, i64, 0)),
           f.getNumArguments() - 1});
      lrOp = between.getDefiningOp();
    }

    for (unsigned i : trained) {
      BlockArgument p = f.getArgument(i);
      Value g = grads.lookup(p);
      if (!g)
        continue; // the loss does not depend on it
      std::string pname = nameOf(f, i, false);
      SmallVector<Value> state;
      SmallVector<unsigned> stateArgs;
      for (StringRef s : optimizerState(config)) {
        state.push_back(addStateArg(p.getType(), pname + "." + s.str(),
                                    zerosOf(p.getType())));
        stateArgs.push_back(f.getNumArguments() - 1);
      }
      b.setInsertionPoint(ret);
      if (between) {
        auto t = cast<RankedTensorType>(g.getType());
        Value sum = addStateArg(t, pname + kGradSumSuffix.str(), zerosOf(t));
        unsigned sumArg = f.getNumArguments() - 1;
        Value total = autodiff::add(b, p.getLoc(), sum, g);
        auto scalar = RankedTensorType::get({}, t.getElementType());
        newState.push_back(
            {graph::WhereOp::create(b, p.getLoc(), t, between, total,
                                    autodiff::splat(b, p.getLoc(), scalar, 0)),
             sumArg});
        g = graph::MulOp::create(
            b, p.getLoc(), t, total,
            autodiff::splat(b, p.getLoc(), scalar,
                            1.0 / static_cast<double>(accumulate)));
      }
      // A parameter used through a cast (a working copy) has the cast's
      // gradient, built when the backward walk reaches the cast at the top
      // of the step: last of all. It needs only its input, so it moves right
      // after it, and the update can follow the gradient as soon as it
      // exists instead of the whole backward pass.
      if (auto c = g.getDefiningOp<amp::CastOp>())
        if (Operation *src = c.getInput().getDefiningOp();
            src && src->getBlock() == &block)
          c->moveAfter(src);
      Operation *upd =
          buildUpdate(b, p.getLoc(), config, lr, step, p, g, state);
      if (between)
        cast<graph::OptimizerUpdateOpInterface>(upd).setGuards(between);
      placeAfterLastUse(upd, block, lrOp, step);
      newState.push_back({upd->getResult(0), i});
      for (auto [k, a] : llvm::enumerate(stateArgs))
        newState.push_back({upd->getResult(k + 1), a});
    }

    // Running statistics of training-mode batch normalization.
    for (auto bn : block.getOps<graph::BatchNormTrainingOp>())
      for (auto [stat, next] : {std::pair<Value, Value>{bn.getRunningMean(),
                                                        bn.getNewRunningMean()},
                                {bn.getRunningVar(), bn.getNewRunningVar()}}) {
        auto arg = dyn_cast<BlockArgument>(stat);
        if (arg && f.getArgAttr(arg.getArgNumber(), graph::kInitAttr) &&
            !llvm::any_of(newState, [&](auto &s) {
              return s.second == arg.getArgNumber();
            }))
          newState.push_back({next, arg.getArgNumber()});
      }

    b.setInsertionPoint(ret);
    Value one = autodiff::splat(b, loc, i64, 1.0);
    Value nextStep = autodiff::add(b, loc, step, one);
    if (between) // counts updates, not micro-steps
      nextStep = graph::WhereOp::create(b, loc, i64, between, step, nextStep);
    newState.push_back({nextStep, stepArg});

    SmallVector<StepResult> results;
    for (auto [v, arg] : newState)
      results.push_back({v, arg, ""});
    appendResults(f, results);
  }

  /// Moves `upd` right after the last op that uses its parameter or state
  /// (other than itself) or defines one of its operands, so the parameter
  /// dies at the update and the gradient lives no longer than needed. The
  /// step counter is read by every update and does not order them.
  static void placeAfterLastUse(Operation *upd, Block &block, Operation *floor,
                                Value step) {
    Operation *anchor = floor;
    auto later = [&](Operation *op) {
      if (op && op->getBlock() == &block && op != upd &&
          anchor->isBeforeInBlock(op))
        anchor = op;
    };
    for (Value v : upd->getOperands()) {
      later(v.getDefiningOp());
      if (!isa<BlockArgument>(v) || v == step)
        continue;
      for (Operation *user : v.getUsers()) {
        later(user);
        // The parameter's cast (its working copy) is read until its last
        // user: the update, which writes the next one, comes after that.
        if (isa<amp::CastOp>(user))
          for (Operation *reader : user->getUsers())
            later(reader);
      }
    }
    upd->moveAfter(anchor);
  }

  func::FuncOp f;
  const OptimizerConfig &config;
  int64_t accumulate;
  // Arguments with an initial value, those of them that may be trained,
  // and those that are (the trainable ones not frozen).
  SmallVector<unsigned> paramArgs, trainable, trained;
  llvm::DenseSet<Value> active;
  llvm::DenseMap<Value, Value> grads;
};

struct GraphBuildTrainingPass
    : impl::GraphBuildTrainingPassBase<GraphBuildTrainingPass> {
  using Base::Base;
  GraphBuildTrainingPassOptions options() const {
    GraphBuildTrainingPassOptions o;
    o.loss = loss;
    o.optimizer = optimizer;
    o.lr = lr;
    o.momentum = momentum;
    o.dampening = dampening;
    o.beta1 = beta1;
    o.beta2 = beta2;
    o.epsilon = epsilon;
    o.weightDecay = weightDecay;
    o.lrDecay = lrDecay;
    o.lrSchedule = lrSchedule;
    o.lrStepSize = lrStepSize;
    o.lrGamma = lrGamma;
    o.lrTotalSteps = lrTotalSteps;
    o.lrMin = lrMin;
    o.freeze.assign(freeze.begin(), freeze.end());
    o.accumulate = accumulate;
    return o;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    GraphBuildTrainingPassOptions o = options();
    auto refuse = [&](ArrayRef<StringRef> names, const Twine &why) {
      emitOptionError(module.getLoc(), getArgument(), names, why);
    };
    if (failed(checkPassOptions(o, refuse)))
      return signalPassFailure();
    auto f = module.lookupSymbol<func::FuncOp>("forward");
    if (!f || f.isExternal()) {
      module.emitError("graph-build-training: the module has no @forward "
                       "function with a body");
      return signalPassFailure();
    }
    if (module.lookupSymbol("train_step")) {
      module.emitError("graph-build-training: the module already has "
                       "@train_step");
      return signalPassFailure();
    }
    if (!f.getBody().hasOneBlock()) {
      f.emitError("graph-build-training: @forward must have one block");
      return signalPassFailure();
    }
    OptimizerConfig c = optimizerConfigOf(o);
    f.setSymName("train_step");
    TrainingBuilder builder(f, c, o.accumulate);
    if (failed(builder.run(o.loss, o.freeze)))
      return signalPassFailure();
    // The host loop counts updates and checks overflow every N-th step:
    // the step says N, so a Program run elsewhere (amp-exec) knows it.
    if (o.accumulate > 1)
      f->setAttr(
          graph::kAccumulateStepsAttr,
          IntegerAttr::get(IntegerType::get(f.getContext(), 64), o.accumulate));
    // The backward contractions of a low-precision forward are low
    // precision too, and say so like the forward ones.
    f.walk([](Operation *op) { graph::markAccumulation(op); });
  }
};

} // namespace
} // namespace ampc
