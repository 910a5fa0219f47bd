//===- OptimizerOps.cpp - verifiers of the parameter updates --------------===//

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/VerifyHelpers.h"

#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {
/// The parameter, its state and every result share one type. The gradient
/// has the parameter's shape and either its type or, for an f32 parameter,
/// f16 or bf16: the low-precision gradient of an AMP step, which the update
/// widens as it reads it.
LogicalResult sameAsParam(Operation *op, Value param, Value grad,
                          ArrayRef<std::pair<StringRef, Value>> others) {
  for (auto [name, v] : others)
    if (v.getType() != param.getType())
      return op->emitOpError() << name << " has type " << v.getType()
                               << " but param has " << param.getType();
  auto p = cast<ShapedType>(param.getType());
  auto g = cast<ShapedType>(grad.getType());
  if (g == p)
    return success();
  bool widened = p.getElementType().isF32() &&
                 (g.getElementType().isF16() || g.getElementType().isBF16());
  if (!widened || g.getShape() != p.getShape())
    return op->emitOpError()
           << "grad has type " << g << " but param has " << p
           << " (a gradient has the parameter's type, or f16/bf16 of its "
              "shape for an f32 parameter)";
  return success();
}

/// At most `skip` (i1) then `loss_scale` (f32): a loss-scaled gradient can
/// overflow, and the step that overflows must be skipped.
LogicalResult checkGuards(Operation *op, ValueRange guards) {
  auto isScalar = [](Value v, bool i1) {
    auto t = cast<ShapedType>(v.getType());
    return t.getRank() == 0 &&
           (i1 ? t.getElementType().isInteger(1) : t.getElementType().isF32());
  };
  if (guards.size() > 2)
    return op->emitOpError("has ")
           << guards.size() << " guards; at most skip and loss_scale";
  if (!guards.empty() && !isScalar(guards[0], true))
    return op->emitOpError("skip must be an i1 scalar, got ")
           << guards[0].getType()
           << " (a loss_scale needs a skip before it: a loss-scaled gradient "
              "can overflow, and the check's found_inf must be able to skip "
              "the update)";
  if (guards.size() == 2 && !isScalar(guards[1], false))
    return op->emitOpError("loss_scale must be an f32 scalar, got ")
           << guards[1].getType();
  return success();
}

LogicalResult inUnitInterval(Operation *op, StringRef name, double v) {
  if (!(v >= 0 && v <= 1))
    return op->emitOpError() << name << " must be in [0, 1], got " << v;
  return success();
}
} // namespace

LogicalResult SgdUpdateOp::verify() {
  if (failed(checkGuards(*this, getGuards())))
    return failure();
  return sameAsParam(*this, getParam(), getGrad(),
                     {{"new_param", getNewParam()}});
}

LogicalResult MomentumUpdateOp::verify() {
  if (failed(verifyCase<MomentumMode>(*this, "mode", getMode())))
    return failure();
  if (failed(checkGuards(*this, getGuards())))
    return failure();
  return sameAsParam(*this, getParam(), getGrad(),
                     {{"velocity", getVelocity()},
                      {"new_param", getNewParam()},
                      {"new_velocity", getNewVelocity()}});
}

LogicalResult AdamUpdateOp::verify() {
  if (failed(verifyCase<AdamMode>(*this, "mode", getMode())))
    return failure();
  double alpha = getAlpha().convertToDouble(),
         beta = getBeta().convertToDouble();
  if (failed(inUnitInterval(*this, "alpha", alpha)) ||
      failed(inUnitInterval(*this, "beta", beta)))
    return failure();
  bool torch = symbolizeAdamMode(getMode()) == AdamMode::Pytorch;
  // PyTorch's bias correction divides by 1 - beta^t.
  if (torch && (alpha == 1 || beta == 1))
    return emitOpError("alpha and beta must be < 1 in mode \"pytorch\", got ")
           << alpha << " and " << beta;
  if (!torch && getWeightDecay().convertToDouble() != 0)
    return emitOpError("weight_decay (decoupled) is for mode \"pytorch\"; "
                       "mode \"onnx\" has norm_coefficient_post");
  if (torch && getNormCoefficientPost().convertToDouble() != 0)
    return emitOpError("norm_coefficient_post is for mode \"onnx\"; mode "
                       "\"pytorch\" has weight_decay");
  if (!(getEpsilon().convertToDouble() >= 0))
    return emitOpError("epsilon must be >= 0, got ")
           << getEpsilon().convertToDouble();
  if (failed(checkGuards(*this, getGuards())))
    return failure();
  return sameAsParam(*this, getParam(), getGrad(),
                     {{"m", getM()},
                      {"v", getV()},
                      {"new_param", getNewParam()},
                      {"new_m", getNewM()},
                      {"new_v", getNewV()}});
}

LogicalResult AdagradUpdateOp::verify() {
  if (!(getDecayFactor().convertToDouble() >= 0))
    return emitOpError("decay_factor must be >= 0, got ")
           << getDecayFactor().convertToDouble();
  if (!(getEpsilon().convertToDouble() >= 0))
    return emitOpError("epsilon must be >= 0, got ")
           << getEpsilon().convertToDouble();
  if (failed(checkGuards(*this, getGuards())))
    return failure();
  return sameAsParam(*this, getParam(), getGrad(),
                     {{"accumulator", getAccumulator()},
                      {"new_param", getNewParam()},
                      {"new_accumulator", getNewAccumulator()}});
}

LogicalResult LrScheduleOp::verify() {
  if (failed(verifyCase<LrScheduleKind>(*this, "kind", getKind())))
    return failure();
  // I64Attr's getters are unsigned: read the attributes as signed.
  int64_t stepSize = getStepSizeAttr().getInt();
  int64_t totalSteps = getTotalStepsAttr().getInt();
  if (stepSize < 1)
    return emitOpError("step_size must be >= 1, got ") << stepSize;
  if (totalSteps < 1)
    return emitOpError("total_steps must be >= 1, got ") << totalSteps;
  return success();
}

/// Whether `v` is a skip flag (an i1 scalar), not a gradient.
static bool isSkipFlag(Value v) {
  return cast<ShapedType>(v.getType()).getElementType().isInteger(1);
}

/// Every operand of `all` but a trailing skip flag.
static OperandRange gradsOf(OperandRange all) {
  return all.drop_back(!all.empty() && isSkipFlag(all.back()) ? 1 : 0);
}

Operation::operand_range AllReduceStartOp::getGrads() {
  return gradsOf(getInputs());
}

Value AllReduceStartOp::getSkip() {
  OperandRange all = getInputs();
  return getGrads().size() < all.size() ? all.back() : Value();
}

static int64_t elementsOf(TypeRange types) {
  int64_t n = 0;
  for (Type t : types)
    n += cast<ShapedType>(t).getNumElements();
  return n;
}

/// The exchange buffer holds every value of `types` (the gradients' or the
/// results', as `whose` says), and a 16-bit one values of its own type only.
static LogicalResult verifyExchange(Operation *op, Value exchangeValue,
                                    TypeRange types, StringRef whose) {
  auto exchange = cast<RankedTensorType>(exchangeValue.getType());
  int64_t n = elementsOf(types);
  if (!exchange.hasStaticShape() || exchange.getDimSize(0) != n)
    return op->emitOpError("the exchange buffer must have ")
           << n << " elements (the " << whose << "), got " << exchange;
  Type wire = exchange.getElementType();
  if (wire.isF32())
    return success();
  for (Type g : types)
    if (cast<ShapedType>(g).getElementType() != wire)
      return op->emitOpError("a ") << wire << " exchange buffer carries "
                                   << wire << " gradients only, got " << g;
  return success();
}

/// Reads world_size as signed (I64Attr's getter is unsigned).
static LogicalResult verifyWorldSize(Operation *op, IntegerAttr attr) {
  if (int64_t n = attr.getInt(); n < 2)
    return op->emitOpError("world_size must be >= 2, got ") << n;
  return success();
}

LogicalResult AllReduceStartOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  for (Value g : getGrads())
    if (isSkipFlag(g))
      return emitOpError("takes its skip flag last, after the gradients");
  if (failed(verifyWorldSize(*this, getWorldSizeAttr())))
    return failure();
  return verifyExchange(*this, getExchange(), getGrads().getTypes(),
                        "gradients'");
}

LogicalResult AllReduceWaitOp::verify() {
  if (failed(verifyWorldSize(*this, getWorldSizeAttr())))
    return failure();
  if (getMeans().empty())
    return emitOpError("needs at least one result");
  if (failed(verifyExchange(*this, getExchange(), getMeans().getTypes(),
                            "results'")))
    return failure();
  // Where the start is in sight (before the lowering wraps ops into
  // kernels), the pair must agree.
  auto start = getExchange().getDefiningOp<AllReduceStartOp>();
  if (!start)
    return success();
  if (start.getWorldSizeAttr().getInt() != getWorldSizeAttr().getInt())
    return emitOpError("has world_size ")
           << getWorldSizeAttr().getInt() << " but its start has "
           << start.getWorldSizeAttr().getInt();
  if (start.getSkip() != getSkip())
    return emitOpError("must take the skip flag its start takes");
  if (TypeRange(getMeans().getTypes()) !=
      TypeRange(start.getGrads().getTypes()))
    return emitOpError("results must have the types of its start's "
                       "gradients, one each");
  return success();
}

bool ampc::graph::isUpdateWithWorkingCopy(Block &body) {
  auto ops = body.without_terminator();
  if (std::distance(ops.begin(), ops.end()) != 2)
    return false;
  auto update = dyn_cast<OptimizerUpdateOpInterface>(*ops.begin());
  auto c = dyn_cast<CastOp>(*std::next(ops.begin()));
  return update && c && c.getInput() == update->getResult(0);
}

ampc::graph::BodyAliasing ampc::graph::aliasingOfBody(Block &body,
                                                      unsigned numResults) {
  auto ops = body.without_terminator();
  if (numResults == 1 && llvm::all_of(ops, [](Operation &o) {
        return o.hasTrait<OpTrait::Fusible>();
      }))
    return BodyAliasing::Elementwise;
  if ((llvm::hasSingleElement(ops) &&
       isa<OptimizerUpdateOpInterface>(*ops.begin())) ||
      isUpdateWithWorkingCopy(body))
    return BodyAliasing::InPlaceUpdate;
  return BodyAliasing::None;
}

OperandRange ampc::graph::OptimizerUpdateOpInterface::getStateOperands() {
  OperandRange all = (*this)->getOperands();
  unsigned first = getGradMutable().getOperandNumber() + 1;
  unsigned end = all.size() - getGuards().size();
  return all.slice(first, end - first);
}

Value ampc::graph::OptimizerUpdateOpInterface::getSkip() {
  ValueRange g = getGuards();
  return g.empty() ? Value() : g[0];
}

Value ampc::graph::OptimizerUpdateOpInterface::getLossScale() {
  ValueRange g = getGuards();
  return g.size() < 2 ? Value() : g[1];
}

void ampc::graph::OptimizerUpdateOpInterface::setGuards(Value skip,
                                                        Value lossScale) {
  assert((skip || !lossScale) && "a loss_scale needs a skip");
  SmallVector<Value, 2> guards;
  if (skip)
    guards.push_back(skip);
  if (lossScale)
    guards.push_back(lossScale);
  getGuardsMutable().assign(guards);
}

#include "dialects/Graph/OptimizerUpdateOpInterface.cpp.inc"

namespace ampc::graph {

/// `skip %s` and `loss_scale %S`, each optional, in that order.
ParseResult
parseUpdateGuards(OpAsmParser &p,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &guards) {
  // A loss_scale without a skip parses, so that the verifier can say why
  // it is wrong.
  for (StringRef keyword : {"skip", "loss_scale"})
    if (succeeded(p.parseOptionalKeyword(keyword)) &&
        p.parseOperand(guards.emplace_back()))
      return failure();
  return success();
}

/// `%g0, %g1 skip %s`: all_reduce_start's gradients, then its optional
/// skip flag.
ParseResult
parseGradsAndSkip(OpAsmParser &p,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs) {
  if (p.parseOperandList(inputs))
    return failure();
  if (succeeded(p.parseOptionalKeyword("skip")) &&
      p.parseOperand(inputs.emplace_back()))
    return failure();
  return success();
}

void printGradsAndSkip(OpAsmPrinter &p, Operation *, OperandRange inputs) {
  OperandRange grads = gradsOf(inputs);
  p.printOperands(grads);
  if (grads.size() < inputs.size()) {
    p << " skip ";
    p.printOperand(inputs.back());
  }
}

void printUpdateGuards(OpAsmPrinter &p, Operation *, OperandRange guards) {
  static constexpr StringRef kKeywords[] = {"skip", "loss_scale"};
  for (auto [i, g] : llvm::enumerate(guards)) {
    p << ' ' << (i < 2 ? kKeywords[i] : StringRef("guard")) << ' ';
    p.printOperand(g);
  }
}

} // namespace ampc::graph
