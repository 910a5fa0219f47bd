//===- GradientOps.cpp - verifiers of the gradient ops --------------------===//
//
// A gradient op is checked by running the forward op's shape rule on the
// shapes it claims and comparing with `grad`, so a backward graph that
// disagrees with its forward graph fails here, naming both shapes.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/VerifyHelpers.h"

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;

namespace {
/// `forward` (the forward rule's result, or nullopt with `error`) must be
/// `grad`'s shape.
LogicalResult matchesGrad(Operation *op,
                          const std::optional<sh::Shape> &forward,
                          const std::string &error, Value grad,
                          StringRef what) {
  if (!forward)
    return op->emitOpError() << what << ": " << error;
  if (ArrayRef<int64_t>(*forward) != shapeOf(grad))
    return op->emitOpError() << what << " gives " << sh::str(*forward)
                             << " but grad is " << sh::str(shapeOf(grad));
  return success();
}

LogicalResult sameElements(Operation *op, ArrayRef<Value> values) {
  for (Value v : values)
    if (elemOf(v) != elemOf(values.front()))
      return op->emitOpError("operands and results must share one element "
                             "type; got ")
             << elemOf(values.front()) << " and " << elemOf(v);
  return success();
}
} // namespace

LogicalResult GeluGradOp::verify() {
  return verifyCase<GeluApproximate>(*this, "approximate", getApproximate());
}

LogicalResult ClipGradOp::verify() {
  return verifyClipBounds(*this, getMin(), getMax());
}

LogicalResult Conv2dBackwardDataOp::verify() {
  if (failed(sameElements(*this, {getGrad(), getFilter(), getOutput()})))
    return failure();
  std::string error;
  auto fwd =
      sh::conv2d(shapeOf(getOutput()), shapeOf(getFilter()), getStrides(),
                 getPads(), getDilations(), getGroup(), error);
  return matchesGrad(*this, fwd, error, getGrad(),
                     "conv2d of the result type and the filter");
}

LogicalResult Conv2dBackwardFilterOp::verify() {
  if (failed(sameElements(*this, {getGrad(), getInput(), getOutput()})))
    return failure();
  std::string error;
  auto fwd = sh::conv2d(shapeOf(getInput()), shapeOf(getOutput()), getStrides(),
                        getPads(), getDilations(), getGroup(), error);
  return matchesGrad(*this, fwd, error, getGrad(),
                     "conv2d of the input and the result type");
}

LogicalResult MaxPool2dGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(
          loc, op,
          {{"grad", adaptor.getGrad()}, {"input", adaptor.getInput()}})))
    return failure();
  std::string error;
  auto fwd = sh::pool2d(shapeOf(adaptor.getInput()), adaptor.getKernelShape(),
                        adaptor.getStrides(), adaptor.getPads(),
                        adaptor.getDilations(), adaptor.getCeilMode(), error);
  if (!fwd)
    return fail(loc, op, error);
  if (ArrayRef<int64_t>(*fwd) != shapeOf(adaptor.getGrad()))
    return fail(loc, op,
                "max_pool2d of the input gives " + sh::str(*fwd) +
                    " but grad is " + sh::str(shapeOf(adaptor.getGrad())));
  types.push_back(adaptor.getInput().getType());
  return success();
}

LogicalResult AvgPool2dGradOp::verify() {
  if (failed(sameElements(*this, {getGrad(), getOutput()})))
    return failure();
  std::string error;
  int64_t ones[] = {1, 1};
  auto fwd = sh::pool2d(shapeOf(getOutput()), getKernelShape(), getStrides(),
                        getPads(), ones, getCeilMode(), error);
  return matchesGrad(*this, fwd, error, getGrad(),
                     "avg_pool2d of the result type");
}

LogicalResult ReduceMaxGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  if (failed(sameElementType(loc, op,
                             {{"grad", adaptor.getGrad()},
                              {"input", adaptor.getInput()},
                              {"output_value", adaptor.getOutputValue()}})))
    return failure();
  std::string error;
  auto fwd = sh::reduce(shapeOf(adaptor.getInput()), adaptor.getAxes(),
                        adaptor.getKeepdims(), error);
  if (!fwd)
    return fail(loc, op, error);
  for (Value v : {adaptor.getGrad(), adaptor.getOutputValue()})
    if (ArrayRef<int64_t>(*fwd) != shapeOf(v))
      return fail(loc, op,
                  "reduce_max of the input gives " + sh::str(*fwd) + ", not " +
                      sh::str(shapeOf(v)));
  types.push_back(adaptor.getInput().getType());
  return success();
}

template <typename OpTy> static LogicalResult verifySoftmaxGradAxis(OpTy op) {
  return verifyAxis(op, op.getAxisAttr(),
                    cast<ShapedType>(op.getGrad().getType()).getRank());
}
LogicalResult SoftmaxGradOp::verify() { return verifySoftmaxGradAxis(*this); }
LogicalResult LogSoftmaxGradOp::verify() {
  return verifySoftmaxGradAxis(*this);
}

LogicalResult SoftmaxCrossEntropyGradOp::inferReturnTypes(
    MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
    SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  SmallVector<Type, 1> loss;
  if (failed(inferLoss(loc, op, adaptor.getLogProb(), adaptor.getLabels(),
                       adaptor.getWeights(), adaptor.getReduction(), loss)))
    return failure();
  if (loss.front() != adaptor.getGrad().getType())
    return fail(loc, op,
                "grad has shape " + sh::str(shapeOf(adaptor.getGrad())) +
                    " but the loss has " +
                    sh::str(cast<ShapedType>(loss.front()).getShape()));
  types.push_back(adaptor.getLogProb().getType());
  return success();
}

LogicalResult SoftmaxCrossEntropyWithGradOp::verify() {
  SmallVector<Type, 1> loss;
  if (failed(inferLoss(getLoc(), getOperationName(), getScores(), getLabels(),
                       getWeights(), getReduction(), loss)))
    return failure();
  if (getLoss().getType() != loss.front())
    return emitOpError("loss has type ")
           << getLoss().getType() << " but the scores make " << loss.front();
  if (getGrad().getType() != loss.front())
    return emitOpError("grad has type ")
           << getGrad().getType() << " but the loss has " << loss.front();
  auto scores = cast<ShapedType>(getScores().getType());
  auto dscores = cast<ShapedType>(getDscores().getType());
  Type s = scores.getElementType(), d = dscores.getElementType();
  if (dscores.getShape() != scores.getShape() ||
      !(d == s || (s.isF32() && (d.isF16() || d.isBF16()))))
    return emitOpError("dscores has type ")
           << dscores << ": the scores' shape, and their element type or "
           << "f16/bf16 for f32 scores (" << scores << ")";
  return success();
}

LogicalResult NllLossGradOp::verify() {
  SmallVector<Type, 1> loss;
  if (failed(inferLoss(getLoc(), getOperationName(), getOutput(), getTarget(),
                       getWeight(), getReduction(), loss)))
    return failure();
  if (loss.front() != getGrad().getType())
    return emitOpError("grad has type ")
           << getGrad().getType() << " but the loss has " << loss.front();
  return success();
}

LogicalResult BatchNormGradOp::verify() {
  if (auto n = getSyncRanksAttr(); n && n.getInt() < 2)
    return emitOpError("sync_ranks must be >= 2, got ") << n.getInt();
  return success();
}

LogicalResult BatchNormGradOp::inferReturnTypes(MLIRContext *,
                                                std::optional<Location> loc,
                                                Adaptor adaptor,
                                                SmallVectorImpl<Type> &types) {
  StringRef op = getOperationName();
  ArrayRef<int64_t> in = shapeOf(adaptor.getInput());
  if (in.size() < 2)
    return fail(loc, op,
                "expects input [N, C, ...] of rank >= 2, got " + sh::str(in));
  if (shapeOf(adaptor.getGrad()) != in ||
      elemOf(adaptor.getGrad()) != elemOf(adaptor.getInput()))
    return fail(loc, op, "grad must have the input's type");
  for (auto [name, v] :
       {std::pair<StringRef, Value>{"scale", adaptor.getScale()},
        {"batch_mean", adaptor.getBatchMean()},
        {"batch_inv_std", adaptor.getBatchInvStd()}})
    if (failed(checkChannelVector(loc, op, name, v, in[1])))
      return failure();
  types.push_back(adaptor.getInput().getType());
  types.push_back(adaptor.getScale().getType());
  types.push_back(adaptor.getScale().getType());
  return success();
}

LogicalResult LayerNormGradOp::inferReturnTypes(MLIRContext *,
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
  if (shapeOf(adaptor.getGrad()) != in ||
      elemOf(adaptor.getGrad()) != elemOf(adaptor.getInput()))
    return fail(loc, op, "grad must have the input's type");
  if (!sh::broadcastsTo(shapeOf(adaptor.getScale()), in.drop_front(axis)))
    return fail(loc, op,
                "scale " + sh::str(shapeOf(adaptor.getScale())) +
                    " does not broadcast to the normalized shape " +
                    sh::str(in.drop_front(axis)));
  sh::Shape stat(in.begin(), in.end());
  std::fill(stat.begin() + axis, stat.end(), 1);
  for (auto [name, v] : {std::pair<StringRef, Value>{"mean", adaptor.getMean()},
                         {"inv_std_dev", adaptor.getInvStdDev()}})
    if (shapeOf(v) != ArrayRef<int64_t>(stat))
      return fail(loc, op,
                  name + " must have shape " + sh::str(stat) + ", got " +
                      sh::str(shapeOf(v)));
  types.push_back(adaptor.getInput().getType());
  types.push_back(adaptor.getScale().getType());
  types.push_back(adaptor.getScale().getType());
  return success();
}

LogicalResult SliceGradOp::verify() {
  if (failed(sameElements(*this, {getGrad(), getOutput()})))
    return failure();
  std::string error;
  auto fwd = sh::slice(shapeOf(getOutput()), getStarts(), getEnds(), getSteps(),
                       error);
  return matchesGrad(*this, fwd, error, getGrad(), "slice of the result type");
}

LogicalResult GatherGradOp::verify() {
  if (failed(sameElements(*this, {getGrad(), getOutput()})))
    return failure();
  if (failed(verifyAxis(*this, getAxisAttr(),
                        cast<ShapedType>(getOutput().getType()).getRank())))
    return failure();
  std::string error;
  auto fwd =
      sh::gather(shapeOf(getOutput()), shapeOf(getIndices()), getAxis(), error);
  return matchesGrad(*this, fwd, error, getGrad(),
                     "gather from the result type");
}
