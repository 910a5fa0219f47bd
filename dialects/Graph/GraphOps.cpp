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

#define AMPC_COMPARE_INFER(OP)                                                 \
  LogicalResult OP::inferReturnTypes(                                          \
      MLIRContext *ctx, std::optional<Location> loc, Adaptor adaptor,          \
      SmallVectorImpl<Type> &types) {                                          \
    if (failed(inferBinary(loc, getOperationName(), adaptor.getLhs(),          \
                           adaptor.getRhs(), types)))                          \
      return failure();                                                        \
    types[0] = cast<ShapedType>(types[0]).clone(IntegerType::get(ctx, 1));     \
    return success();                                                          \
  }
AMPC_COMPARE_INFER(EqualOp)
AMPC_COMPARE_INFER(LessOp)
AMPC_COMPARE_INFER(LessEqualOp)
AMPC_COMPARE_INFER(GreaterOp)
AMPC_COMPARE_INFER(GreaterEqualOp)
AMPC_COMPARE_INFER(LogicalAndOp)
AMPC_COMPARE_INFER(LogicalOrOp)
AMPC_COMPARE_INFER(LogicalXorOp)
#undef AMPC_COMPARE_INFER

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

LogicalResult
ConvTranspose2dOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                    Adaptor adaptor,
                                    SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(
          loc, op,
          {{"input", adaptor.getInput()}, {"filter", adaptor.getFilter()}})))
    return failure();
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput()),
                    w = shapeOf(adaptor.getFilter());
  ArrayRef<int64_t> s = adaptor.getStrides(), p = adaptor.getPads(),
                    d = adaptor.getDilations(),
                    extra = adaptor.getOutputPadding();
  int64_t g = adaptor.getGroup();
  if (in.size() != 4 || w.size() != 4)
    return fail(loc, op, "input and filter must be 4-D");
  if (s.size() != 2 || d.size() != 2 || p.size() != 4 || extra.size() != 2)
    return fail(loc, op,
                "strides, dilations and output_padding need 2 entries and "
                "pads 4");
  if (g < 1 || in[1] % g != 0 || w[0] != in[1])
    return fail(loc, op,
                "the filter's first dimension must be the input's channels, "
                "a multiple of group");
  int64_t channels;
  if (llvm::MulOverflow(w[1], g, channels))
    return fail(loc, op, "the output channels overflow int64");
  SmallVector<int64_t> out{in[0], channels};
  for (int i = 0; i < 2; ++i) {
    // output_padding below the stride: conv2d of the result must give
    // the input's shape back (the kernels and the gradient rely on it).
    if (s[i] < 1 || d[i] < 1 || w[2 + i] < 1 || p[i] < 0 || p[i + 2] < 0 ||
        extra[i] < 0 || extra[i] >= s[i])
      return fail(loc, op,
                  "strides, dilations and kernel must be >= 1, pads >= 0, "
                  "and output_padding below the stride");
    // stride * (in - 1) + output_padding + (k - 1) * dilation + 1 - pads
    int64_t span, grown, o;
    if (in[2 + i] < 1 || llvm::MulOverflow(w[2 + i] - 1, d[i], span) ||
        llvm::MulOverflow(s[i], in[2 + i] - 1, grown) ||
        llvm::AddOverflow(grown, extra[i] + span + 1, o) ||
        llvm::SubOverflow(o, p[i], o) || llvm::SubOverflow(o, p[i + 2], o))
      return fail(loc, op, "the output size overflows int64");
    if (o < 1)
      return fail(loc, op, "the output would be empty");
    out.push_back(o);
  }
  types.push_back(RankedTensorType::get(out, elemOf(adaptor.getInput())));
  return success();
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

LogicalResult CumSumOp::verify() {
  return verifyAxis(*this, getAxisAttr(),
                    cast<ShapedType>(getInput().getType()).getRank());
}

/// The input's shape with `axis` set to `size` (or dropped when `keep` is
/// false); error when the axis is out of range.
static std::optional<sh::Shape> alongAxis(ArrayRef<int64_t> in, int64_t axis,
                                          int64_t size, bool keep,
                                          std::string &error) {
  int64_t rank = static_cast<int64_t>(in.size());
  if (axis < 0 || axis >= rank) {
    error = "axis " + std::to_string(axis) + " is out of range [0, " +
            std::to_string(rank) + ")";
    return std::nullopt;
  }
  sh::Shape out(in.begin(), in.end());
  if (keep)
    out[axis] = size;
  else
    out.erase(out.begin() + axis);
  return out;
}

LogicalResult ArgMaxOp::inferReturnTypes(MLIRContext *ctx,
                                         std::optional<Location> loc,
                                         Adaptor adaptor,
                                         SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis();
  std::string error;
  std::optional<sh::Shape> out =
      alongAxis(in, axis, 1, adaptor.getKeepdims(), error);
  if (out && in[axis] == 0)
    return fail(loc, getOperationName(),
                "axis " + std::to_string(axis) +
                    " is empty: it has no maximum");
  return infer(loc, getOperationName(), out, error, IntegerType::get(ctx, 64),
               types);
}

LogicalResult TopKOp::inferReturnTypes(MLIRContext *ctx,
                                       std::optional<Location> loc,
                                       Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  int64_t axis = adaptor.getAxis(), k = adaptor.getK();
  std::string error;
  std::optional<sh::Shape> out = alongAxis(in, axis, k, true, error);
  if (out && (k < 0 || k > in[axis]))
    return fail(loc, getOperationName(),
                "k = " + std::to_string(k) + " is not in [0, " +
                    std::to_string(in[axis]) + "], the size of axis " +
                    std::to_string(axis));
  if (failed(infer(loc, getOperationName(), out, error,
                   elemOf(adaptor.getInput()), types)))
    return failure();
  types.push_back(tensorOf(*out, IntegerType::get(ctx, 64)));
  return success();
}

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

LogicalResult BatchNormTrainingOp::verify() {
  if (auto n = getSyncRanksAttr(); n && n.getInt() < 2)
    return emitOpError("sync_ranks must be >= 2, got ") << n.getInt();
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

namespace ampc::graph {
// The custom<UpdateGuards> directive of the optimizer updates and
// all_reduce_start's custom<GradsAndSkip> (OptimizerOps.cpp).
ParseResult
parseUpdateGuards(OpAsmParser &p,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &guards);
void printUpdateGuards(OpAsmPrinter &p, Operation *op, OperandRange guards);
ParseResult
parseGradsAndSkip(OpAsmParser &p,
                  SmallVectorImpl<OpAsmParser::UnresolvedOperand> &inputs);
void printGradsAndSkip(OpAsmPrinter &p, Operation *op, OperandRange inputs);
} // namespace ampc::graph

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.cpp.inc"
