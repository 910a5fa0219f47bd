//===- GraphOps.cpp - the graph dialect -----------------------------------===//
//
// Type inference and verifiers of the graph ops. Shapes come from
// ShapeInference.h; element-type rules live here. Every message names the
// op and the operands that disagree.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeInference.h"
#include "dialects/Graph/VerifyHelpers.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/Support/MathExtras.h"

#include "dialects/Graph/GraphEnums.cpp.inc"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;
namespace sh = ampc::shape;

#include "dialects/Graph/GraphDialect.cpp.inc"

void GraphDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Graph/GraphOps.cpp.inc"
      >();
}

Operation *GraphDialect::materializeConstant(OpBuilder &builder,
                                             Attribute value, Type type,
                                             Location loc) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || elements.getType() != type)
    return nullptr;
  return ConstantOp::create(builder, loc, elements);
}

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

LogicalResult GeluOp::verify() {
  return verifyCase<GeluApproximate>(*this, "approximate", getApproximate());
}

LogicalResult ClipOp::verify() {
  return verifyClipBounds(*this, getMin(), getMax());
}

static LogicalResult inferBinary(std::optional<Location> loc, StringRef op,
                                 Value lhs, Value rhs,
                                 SmallVectorImpl<Type> &types) {
  if (failed(sameElementType(loc, op, {{"lhs", lhs}, {"rhs", rhs}})))
    return failure();
  std::string error;
  return infer(loc, op, sh::broadcast(shapeOf(lhs), shapeOf(rhs), error), error,
               elemOf(lhs), types);
}

#define AMPC_BINARY_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    return inferBinary(loc, getOperationName(), adaptor.getLhs(),              \
                       adaptor.getRhs(), types);                               \
  }
AMPC_BINARY_INFER(AddOp)
AMPC_BINARY_INFER(SubOp)
AMPC_BINARY_INFER(MulOp)
AMPC_BINARY_INFER(DivOp)
AMPC_BINARY_INFER(PowOp)
#undef AMPC_BINARY_INFER

LogicalResult WhereOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(loc, op,
                             {{"x", adaptor.getX()}, {"y", adaptor.getY()}})))
    return failure();
  std::string error;
  auto xy =
      sh::broadcast(shapeOf(adaptor.getX()), shapeOf(adaptor.getY()), error);
  if (!xy)
    return fail(loc, op, error);
  return infer(loc, op,
               sh::broadcast(shapeOf(adaptor.getCondition()), *xy, error),
               error, elemOf(adaptor.getX()), types);
}

LogicalResult CastOp::verify() {
  if (shapeOf(getInput()) != shapeOf(getOutput()))
    return emitOpError("changes the shape from ")
           << getInput().getType() << " to " << getOutput().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(
          loc, op, {{"lhs", adaptor.getLhs()}, {"rhs", adaptor.getRhs()}})))
    return failure();
  std::string error;
  return infer(
      loc, op,
      sh::matmul(shapeOf(adaptor.getLhs()), shapeOf(adaptor.getRhs()), error),
      error, elemOf(adaptor.getLhs()), types);
}

LogicalResult GemmOp::inferReturnTypes(MLIRContext *,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(loc, op,
                             {{"a", adaptor.getA()},
                              {"b", adaptor.getB()},
                              {"c", adaptor.getC()}})))
    return failure();
  std::optional<ArrayRef<int64_t>> c;
  if (adaptor.getC())
    c = shapeOf(adaptor.getC());
  std::string error;
  return infer(loc, op,
               sh::gemm(shapeOf(adaptor.getA()), shapeOf(adaptor.getB()), c,
                        adaptor.getTransA(), adaptor.getTransB(), error),
               error, elemOf(adaptor.getA()), types);
}

LogicalResult Conv2dOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(loc, op,
                             {{"input", adaptor.getInput()},
                              {"filter", adaptor.getFilter()},
                              {"bias", adaptor.getBias()}})))
    return failure();
  std::string error;
  auto shape =
      sh::conv2d(shapeOf(adaptor.getInput()), shapeOf(adaptor.getFilter()),
                 adaptor.getStrides(), adaptor.getPads(),
                 adaptor.getDilations(), adaptor.getGroup(), error);
  if (shape && adaptor.getBias() &&
      failed(
          checkChannelVector(loc, op, "bias", adaptor.getBias(), (*shape)[1])))
    return failure();
  return infer(loc, op, shape, error, elemOf(adaptor.getInput()), types);
}

LogicalResult MaxPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  std::string error;
  return infer(loc, getOperationName(),
               sh::pool2d(shapeOf(adaptor.getInput()), adaptor.getKernelShape(),
                          adaptor.getStrides(), adaptor.getPads(),
                          adaptor.getDilations(), adaptor.getCeilMode(), error),
               error, elemOf(adaptor.getInput()), types);
}

LogicalResult AvgPool2dOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  std::string error;
  int64_t ones[] = {1, 1};
  return infer(loc, getOperationName(),
               sh::pool2d(shapeOf(adaptor.getInput()), adaptor.getKernelShape(),
                          adaptor.getStrides(), adaptor.getPads(), ones,
                          adaptor.getCeilMode(), error),
               error, elemOf(adaptor.getInput()), types);
}

LogicalResult GlobalAvgPoolOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (in.size() < 3)
    return fail(loc, getOperationName(),
                "expects [N, C, spatial...] of rank >= 3, got " + sh::str(in));
  sh::Shape out(in.begin(), in.end());
  std::fill(out.begin() + 2, out.end(), 1);
  types.push_back(tensorOf(out, elemOf(adaptor.getInput())));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, losses
//===----------------------------------------------------------------------===//

#define AMPC_REDUCE_INFER(OP)                                                  \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *, std::optional<Location> loc, Adaptor adaptor,             \
      SmallVectorImpl<Type> &types) {                                          \
    if (adaptor.getAxes().empty())                                             \
      return fail(loc, getOperationName(), "has no axes");                     \
    std::string error;                                                         \
    return infer(loc, getOperationName(),                                      \
                 sh::reduce(shapeOf(adaptor.getInput()), adaptor.getAxes(),    \
                            adaptor.getKeepdims(), error),                     \
                 error, elemOf(adaptor.getInput()), types);                    \
  }
AMPC_REDUCE_INFER(ReduceSumOp)
AMPC_REDUCE_INFER(ReduceMeanOp)
AMPC_REDUCE_INFER(ReduceMaxOp)
#undef AMPC_REDUCE_INFER

template <typename OpTy> static LogicalResult verifySoftmaxAxis(OpTy op) {
  return verifyAxis(op, op.getAxisAttr(),
                    cast<ShapedType>(op.getInput().getType()).getRank());
}
LogicalResult SoftmaxOp::verify() { return verifySoftmaxAxis(*this); }
LogicalResult LogSoftmaxOp::verify() { return verifySoftmaxAxis(*this); }

LogicalResult SoftmaxCrossEntropyOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(inferLoss(loc, getOperationName(), adaptor.getScores(),
                       adaptor.getLabels(), adaptor.getWeights(),
                       adaptor.getReduction(), types)))
    return failure();
  types.push_back(adaptor.getScores().getType());
  return success();
}

LogicalResult NllLossOp::inferReturnTypes(MLIRContext *,
                                          std::optional<Location> loc,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  return inferLoss(loc, getOperationName(), adaptor.getInput(),
                   adaptor.getTarget(), adaptor.getWeight(),
                   adaptor.getReduction(), types);
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

static LogicalResult checkBatchNorm(std::optional<Location> loc, StringRef op,
                                    Value input, ArrayRef<Value> stats,
                                    double epsilon) {
  static const char *names[] = {"scale", "bias", "mean", "var"};
  ArrayRef<int64_t> in = shapeOf(input);
  if (in.size() < 2)
    return fail(loc, op,
                "expects input [N, C, ...] of rank >= 2, got " + sh::str(in));
  for (auto [i, v] : llvm::enumerate(stats)) {
    if (failed(checkChannelVector(loc, op, names[i], v, in[1])))
      return failure();
    if (elemOf(v) != elemOf(stats[0]))
      return fail(loc, op,
                  Twine(names[i]) + " element type differs from scale's");
  }
  if (!(epsilon >= 0))
    return fail(loc, op,
                "epsilon must be >= 0, got " + std::to_string(epsilon));
  return success();
}

LogicalResult BatchNormInferenceOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(checkBatchNorm(loc, getOperationName(), adaptor.getInput(),
                            {adaptor.getScale(), adaptor.getBias(),
                             adaptor.getMean(), adaptor.getVar()},
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult BatchNormTrainingOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  if (failed(checkBatchNorm(loc, getOperationName(), adaptor.getInput(),
                            {adaptor.getScale(), adaptor.getBias(),
                             adaptor.getRunningMean(), adaptor.getRunningVar()},
                            adaptor.getEpsilon().convertToDouble())))
    return failure();
  double momentum = adaptor.getMomentum().convertToDouble();
  if (!(momentum >= 0 && momentum <= 1))
    return fail(loc, getOperationName(),
                "momentum must be in [0, 1], got " + std::to_string(momentum));
  types.push_back(adaptor.getInput().getType());
  for (int i = 0; i < 4; ++i)
    types.push_back(adaptor.getRunningMean().getType());
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *ctx,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  if (axis < 0 || axis >= static_cast<int64_t>(in.size()))
    return fail(loc, op,
                "axis " + Twine(axis) + " is out of range [0, " +
                    Twine(in.size()) + ")");
  ArrayRef<int64_t> normalized = in.drop_front(axis);
  for (auto [name, v] :
       {std::pair<StringRef, Value>{"scale", adaptor.getScale()},
        {"bias", adaptor.getBias()}}) {
    if (!v)
      continue;
    if (!sh::broadcastsTo(shapeOf(v), normalized))
      return fail(loc, op,
                  name + " " + sh::str(shapeOf(v)) +
                      " does not broadcast to the normalized shape " +
                      sh::str(normalized));
  }
  if (failed(sameElementType(
          loc, op,
          {{"scale", adaptor.getScale()}, {"bias", adaptor.getBias()}})))
    return failure();
  types.push_back(adaptor.getInput().getType());
  sh::Shape stat(in.begin(), in.end());
  std::fill(stat.begin() + axis, stat.end(), 1);
  Type statType = elemOf(adaptor.getInput()).isF64()
                      ? Type(Float64Type::get(ctx))
                      : Type(Float32Type::get(ctx));
  types.push_back(tensorOf(stat, statType));
  types.push_back(tensorOf(stat, statType));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement and constants
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = cast<ShapedType>(getInput().getType());
  auto out = cast<ShapedType>(getOutput().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType();
  if (in.getNumElements() != out.getNumElements())
    return emitOpError("has ")
           << in.getNumElements() << " input elements " << in << " but "
           << out.getNumElements() << " result elements " << out;
  return success();
}

LogicalResult BroadcastToOp::verify() {
  auto in = cast<ShapedType>(getInput().getType());
  auto out = cast<ShapedType>(getOutput().getType());
  if (in.getElementType() != out.getElementType())
    return emitOpError("changes the element type from ")
           << in.getElementType() << " to " << out.getElementType();
  if (!sh::broadcastsTo(in.getShape(), out.getShape()))
    return emitOpError("input ") << in << " does not broadcast to " << out;
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *,
                                            std::optional<Location> loc,
                                            Adaptor adaptor,
                                            SmallVectorImpl<Type> &types) {
  std::string error;
  return infer(
      loc, getOperationName(),
      sh::transpose(shapeOf(adaptor.getInput()), adaptor.getPerm(), error),
      error, elemOf(adaptor.getInput()), types);
}

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (adaptor.getInputs().empty())
    return fail(loc, op, "needs at least one input");
  SmallVector<sh::Shape> shapes;
  for (Value v : adaptor.getInputs()) {
    if (elemOf(v) != elemOf(adaptor.getInputs()[0]))
      return fail(loc, op, "inputs have different element types");
    shapes.emplace_back(shapeOf(v));
  }
  std::string error;
  return infer(loc, op, sh::concat(shapes, adaptor.getAxis(), error), error,
               elemOf(adaptor.getInputs()[0]), types);
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *,
                                        std::optional<Location> loc,
                                        Adaptor adaptor,
                                        SmallVectorImpl<Type> &types) {
  std::string error;
  return infer(loc, getOperationName(),
               sh::slice(shapeOf(adaptor.getInput()), adaptor.getStarts(),
                         adaptor.getEnds(), adaptor.getSteps(), error),
               error, elemOf(adaptor.getInput()), types);
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  std::string error;
  return infer(loc, getOperationName(),
               sh::gather(shapeOf(adaptor.getData()),
                          shapeOf(adaptor.getIndices()), adaptor.getAxis(),
                          error),
               error, elemOf(adaptor.getData()), types);
}

LogicalResult DropoutOp::inferReturnTypes(MLIRContext *ctx,
                                          std::optional<Location>,
                                          Adaptor adaptor,
                                          SmallVectorImpl<Type> &types) {
  types.push_back(adaptor.getInput().getType());
  types.push_back(
      tensorOf(shapeOf(adaptor.getInput()), IntegerType::get(ctx, 1)));
  return success();
}

LogicalResult DropoutOp::verify() {
  double ratio = getRatio().convertToDouble();
  if (!(ratio >= 0 && ratio < 1))
    return emitOpError("ratio must be in [0, 1), got ") << ratio;
  return success();
}

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *,
                                           std::optional<Location> loc,
                                           Adaptor adaptor,
                                           SmallVectorImpl<Type> &types) {
  auto value = adaptor.getValue();
  if (!value)
    return fail(loc, getOperationName(), "has no value");
  types.push_back(value.getType());
  return success();
}

OpFoldResult ConstantOp::fold(FoldAdaptor) { return getValue(); }

//===----------------------------------------------------------------------===//
// Folding of small integer constants
//===----------------------------------------------------------------------===//
//
// Shapes are static, so the shape arithmetic that exporters emit (Shape,
// Gather, Concat, Reshape on i64) folds away at compile time. Only small
// integer tensors fold: floats and large tensors are runtime data.

namespace {
constexpr int64_t kMaxFoldElements = 4096;

std::optional<SmallVector<int64_t>> foldableInts(Attribute a) {
  auto d = dyn_cast_or_null<DenseIntElementsAttr>(a);
  if (!d || d.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  SmallVector<int64_t> v;
  for (const APInt &x : d.getValues<APInt>())
    v.push_back(x.getBitWidth() == 1 ? x.getZExtValue() : x.getSExtValue());
  return v;
}

/// The values as an attribute of `type`, or null if one does not fit.
Attribute intsAttr(Type type, ArrayRef<int64_t> values) {
  auto t = cast<ShapedType>(type);
  if (!t.getElementType().isSignlessInteger())
    return {};
  unsigned w = t.getElementTypeBitWidth();
  SmallVector<APInt> ap;
  for (int64_t v : values) {
    if (w == 1) {
      ap.push_back(APInt(1, v != 0));
      continue;
    }
    if (w < 64 &&
        (v < -(int64_t(1) << (w - 1)) || v >= (int64_t(1) << (w - 1))))
      return {};
    ap.push_back(APInt(w, static_cast<uint64_t>(v), /*isSigned=*/true,
                       /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(t, ap);
}

/// Multi-index of element `flat` in `shape`.
SmallVector<int64_t> unravel(int64_t flat, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> idx(shape.size());
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return idx;
}

int64_t ravel(ArrayRef<int64_t> idx, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + idx[i];
  return flat;
}

/// Element of a right-aligned broadcast operand at output index `idx`.
int64_t broadcastAt(ArrayRef<int64_t> values, ArrayRef<int64_t> shape,
                    ArrayRef<int64_t> idx) {
  size_t off = idx.size() - shape.size();
  SmallVector<int64_t> in(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    in[i] = shape[i] == 1 ? 0 : idx[off + i];
  return values[ravel(in, shape)];
}

template <typename Fn>
OpFoldResult foldBinary(Operation *op, Attribute lhsAttr, Attribute rhsAttr,
                        Fn fn) {
  auto lhs = foldableInts(lhsAttr), rhs = foldableInts(rhsAttr);
  auto outType = cast<ShapedType>(op->getResult(0).getType());
  // Broadcasting two small operands can make a large result.
  if (!lhs || !rhs || outType.getNumElements() > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> ls = shapeOf(op->getOperand(0)),
                    rs = shapeOf(op->getOperand(1));
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    std::optional<int64_t> v =
        fn(broadcastAt(*lhs, ls, idx), broadcastAt(*rhs, rs, idx));
    if (!v)
      return {};
    out.push_back(*v);
  }
  return intsAttr(outType, out);
}
} // namespace

/// x op y, or std::nullopt when it overflows int64 (LLVM's *Overflow
/// helpers return non-zero on overflow).
template <int64_t (*Op)(int64_t, int64_t, int64_t &)>
static std::optional<int64_t> checked(int64_t x, int64_t y) {
  int64_t r;
  if (Op(x, y, r))
    return std::nullopt;
  return r;
}

OpFoldResult AddOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::AddOverflow<int64_t>>);
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::SubOverflow<int64_t>>);
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::MulOverflow<int64_t>>);
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](int64_t x, int64_t y) -> std::optional<int64_t> {
                      if (y == 0 || (x == INT64_MIN && y == -1))
                        return std::nullopt;
                      return x / y;
                    });
}

OpFoldResult ReshapeOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto d = dyn_cast_or_null<DenseElementsAttr>(a.getInput()))
    if (d.getNumElements() <= kMaxFoldElements)
      return d.reshape(cast<ShapedType>(getType()));
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  auto outType = cast<ShapedType>(getType());
  if (auto f = dyn_cast<FloatType>(outType.getElementType())) {
    SmallVector<APFloat> out;
    for (int64_t v : *values) {
      APFloat x(f.getFloatSemantics());
      x.convertFromAPInt(APInt(64, static_cast<uint64_t>(v), true), true,
                         APFloat::rmNearestTiesToEven);
      out.push_back(x);
    }
    return DenseElementsAttr::get(outType, out);
  }
  return intsAttr(outType, *values);
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto values = foldableInts(a.getInput());
  auto outType = cast<ShapedType>(getType());
  if (!values || outType.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i)
    out.push_back(broadcastAt(*values, shapeOf(getInput()),
                              unravel(i, outType.getShape())));
  return intsAttr(outType, out);
}

OpFoldResult ConcatOp::fold(FoldAdaptor a) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  SmallVector<SmallVector<int64_t>> inputs;
  for (Attribute attr : a.getInputs()) {
    auto v = foldableInts(attr);
    if (!v)
      return {};
    inputs.push_back(*v);
  }
  auto outType = cast<ShapedType>(getType());
  if (outType.getNumElements() > kMaxFoldElements)
    return {}; // many small inputs
  int64_t axis = getAxis();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    for (auto [k, v] : llvm::enumerate(getInputs())) {
      ArrayRef<int64_t> s = shapeOf(v);
      if (idx[axis] < s[axis]) {
        out.push_back(inputs[k][ravel(idx, s)]);
        break;
      }
      idx[axis] -= s[axis];
    }
  }
  return intsAttr(outType, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  auto outType = cast<ShapedType>(getType());
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    for (size_t d = 0; d < idx.size(); ++d)
      idx[d] = getStarts()[d] + idx[d] * getSteps()[d];
    out.push_back((*values)[ravel(idx, shapeOf(getInput()))]);
  }
  return intsAttr(outType, out);
}

OpFoldResult GatherOp::fold(FoldAdaptor a) {
  auto data = foldableInts(a.getData()), indices = foldableInts(a.getIndices());
  auto outType = cast<ShapedType>(getType());
  // Up to 4096 indices, each picking a slice of up to 4096 elements.
  if (!data || !indices || outType.getNumElements() > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> ds = shapeOf(getData());
  int64_t axis = getAxis(), rank = shapeOf(getIndices()).size();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    SmallVector<int64_t> ii(idx.begin() + axis, idx.begin() + axis + rank);
    int64_t k = (*indices)[ravel(ii, shapeOf(getIndices()))];
    if (k < 0)
      k += ds[axis];
    if (k < 0 || k >= ds[axis])
      return {}; // out of range: left for the kernel to report
    SmallVector<int64_t> src(idx.begin(), idx.begin() + axis);
    src.push_back(k);
    src.append(idx.begin() + axis + rank, idx.end());
    out.push_back((*data)[ravel(src, ds)]);
  }
  return intsAttr(outType, out);
}

namespace ampc::graph {
// The custom<UpdateGuards> directive of the optimizer updates
// (OptimizerOps.cpp).
ParseResult
parseUpdateGuards(OpAsmParser &p,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &guards);
void printUpdateGuards(OpAsmPrinter &p, Operation *op, OperandRange guards);
} // namespace ampc::graph

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"
