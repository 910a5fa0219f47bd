//===- ReductionGradients.cpp - reductions, softmax and losses ------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"

using namespace mlir;
using namespace ampc::graph;

namespace ampc::autodiff {
namespace {

LogicalResult reduceSumGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  auto r = cast<ReduceSumOp>(op);
  if (!isFloat(r.getInput()))
    return success();
  dxs[0] = expandReduced(b, op->getLoc(), dys[0], typeOf(r.getInput()),
                         r.getAxes(), r.getKeepdims());
  return success();
}

LogicalResult reduceMeanGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                             SmallVectorImpl<Value> &dxs) {
  auto r = cast<ReduceMeanOp>(op);
  if (!isFloat(r.getInput()))
    return success();
  Location loc = op->getLoc();
  RankedTensorType in = typeOf(r.getInput());
  int64_t count = 1;
  for (int64_t a : r.getAxes())
    count *= in.getDimSize(a);
  Value scaled =
      mul(b, loc, dys[0], scalar(b, loc, in.getElementType(), 1.0 / count));
  dxs[0] = expandReduced(b, loc, scaled, in, r.getAxes(), r.getKeepdims());
  return success();
}

LogicalResult reduceMaxGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  auto r = cast<ReduceMaxOp>(op);
  if (!isFloat(r.getInput()))
    return success();
  dxs[0] = ReduceMaxGradOp::create(b, op->getLoc(), dys[0], r.getInput(),
                                   r.getOutput(), r.getAxesAttr(),
                                   r.getKeepdimsAttr());
  return success();
}

/// A running sum's gradient is the running sum of dy the other way.
LogicalResult cumSumGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs) {
  auto c = cast<CumSumOp>(op);
  if (!isFloat(c.getInput()))
    return success();
  dxs[0] =
      CumSumOp::create(b, op->getLoc(), dys[0], c.getAxisAttr(),
                       c.getExclusiveAttr(), b.getBoolAttr(!c.getReverse()));
  return success();
}

/// Each value's dy goes back to the element it was taken from: for the
/// k-th value along the axis, dy where the input's index equals its index,
/// summed over k ([.., K, N, ..] compared, then reduced over K).
LogicalResult topKGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  auto t = cast<TopKOp>(op);
  if (!isFloat(t.getInput()) || !dys[0])
    return success();
  Location loc = op->getLoc();
  RankedTensorType in = typeOf(t.getInput());
  int64_t axis = t.getAxis(), n = in.getDimSize(axis);
  SmallVector<int64_t> picked(typeOf(t.getValues()).getShape());
  picked.insert(picked.begin() + axis + 1, 1); // [.., K, 1, ..]
  SmallVector<int64_t> iotaShape(picked.size(), 1);
  iotaShape[axis + 1] = n; // [1.., 1, N, 1..]
  SmallVector<int64_t> positions;
  for (int64_t i = 0; i < n; ++i)
    positions.push_back(i);
  auto i64 = IntegerType::get(b.getContext(), 64);
  Value iota = ConstantOp::create(
      b, loc,
      cast<ElementsAttr>(DenseElementsAttr::get(
          RankedTensorType::get(iotaShape, i64), ArrayRef(positions))));
  Value hit =
      EqualOp::create(b, loc, reshapeTo(b, loc, t.getIndices(), picked), iota);
  Value zero = scalar(b, loc, in.getElementType(), 0.0);
  Value spread =
      WhereOp::create(b, loc, hit, reshapeTo(b, loc, dys[0], picked), zero);
  dxs[0] = ReduceSumOp::create(b, loc, spread, b.getDenseI64ArrayAttr({axis}),
                               b.getBoolAttr(false));
  return success();
}

LogicalResult softmaxGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  auto s = cast<SoftmaxOp>(op);
  dxs[0] = SoftmaxGradOp::create(b, op->getLoc(), dys[0], s.getOutput(),
                                 s.getAxisAttr());
  return success();
}

LogicalResult logSoftmaxGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                             SmallVectorImpl<Value> &dxs) {
  auto s = cast<LogSoftmaxOp>(op);
  dxs[0] = LogSoftmaxGradOp::create(b, op->getLoc(), dys[0], s.getOutput(),
                                    s.getAxisAttr());
  return success();
}

LogicalResult softmaxCrossEntropyGrad(Operation *op, OpBuilder &b,
                                      ArrayRef<Value> dys,
                                      SmallVectorImpl<Value> &dxs) {
  auto sce = cast<SoftmaxCrossEntropyOp>(op);
  Location loc = op->getLoc();
  Value dscores;
  if (dys[0])
    dscores = SoftmaxCrossEntropyGradOp::create(
        b, loc, dys[0], sce.getLogProb(), sce.getLabels(), sce.getWeights(),
        sce.getReductionAttr(), sce.getIgnoreIndexAttr());
  // The log-probabilities are a result too (ONNX's second output).
  if (dys[1]) {
    Value d = LogSoftmaxGradOp::create(b, loc, dys[1], sce.getLogProb(),
                                       b.getI64IntegerAttr(1));
    dscores = dscores ? add(b, loc, dscores, d) : d;
  }
  dxs[0] = dscores;
  return success();
}

LogicalResult nllLossGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  auto nll = cast<NllLossOp>(op);
  dxs[0] = NllLossGradOp::create(
      b, op->getLoc(), nll.getInput().getType(), dys[0], nll.getTarget(),
      nll.getWeight(), nll.getReductionAttr(), nll.getIgnoreIndexAttr());
  return success();
}

} // namespace

void attachReductionGradients(MLIRContext *ctx) {
  attach<ReduceSumOp, reduceSumGrad>(ctx);
  attach<ReduceMeanOp, reduceMeanGrad>(ctx);
  attach<ReduceMaxOp, reduceMaxGrad>(ctx);
  attach<CumSumOp, cumSumGrad>(ctx);
  attach<TopKOp, topKGrad>(ctx);
  attach<SoftmaxOp, softmaxGrad>(ctx);
  attach<LogSoftmaxOp, logSoftmaxGrad>(ctx);
  attach<SoftmaxCrossEntropyOp, softmaxCrossEntropyGrad>(ctx);
  attach<NllLossOp, nllLossGrad>(ctx);
}

} // namespace ampc::autodiff
