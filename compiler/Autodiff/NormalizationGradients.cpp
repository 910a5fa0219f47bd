//===- NormalizationGradients.cpp - batch and layer normalization ---------===//
//
// Training-mode normalizations have fused gradient ops (their statistics
// depend on every element); inference-mode batch norm is an affine map per
// channel, written with elementwise ops and channel sums.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"

using namespace mlir;
using namespace ampc::graph;

namespace ampc::autodiff {
namespace {

LogicalResult batchNormTrainingGrad(Operation *op, OpBuilder &b,
                                    ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  auto bn = cast<BatchNormTrainingOp>(op);
  // Only the normalized output carries a gradient: the running statistics
  // are state, and the batch statistics feed the backward pass itself.
  if (!dys[0])
    return success();
  auto g = BatchNormGradOp::create(b, op->getLoc(), dys[0], bn.getInput(),
                                   bn.getScale(), bn.getBatchMean(),
                                   bn.getBatchInvStd());
  dxs[0] = g.getInputGrad();
  dxs[1] = g.getScaleGrad();
  dxs[2] = g.getBiasGrad();
  return success();
}

LogicalResult batchNormInferenceGrad(Operation *op, OpBuilder &b,
                                     ArrayRef<Value> dys,
                                     SmallVectorImpl<Value> &dxs) {
  auto bn = cast<BatchNormInferenceOp>(op);
  Location loc = op->getLoc();
  RankedTensorType in = typeOf(bn.getInput());
  SmallVector<int64_t> chan(in.getRank(), 1);
  chan[1] = in.getDimSize(1);
  SmallVector<int64_t> others;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (i != 1)
      others.push_back(i);
  auto toChan = [&](Value v) { return reshapeTo(b, loc, v, chan); };
  auto sumOthers = [&](Value v) {
    return ReduceSumOp::create(b, loc, v, b.getDenseI64ArrayAttr(others),
                               b.getBoolAttr(false));
  };
  Type e = typeOf(bn.getVar()).getElementType();
  Value eps = scalar(b, loc, e, bn.getEpsilon().convertToDouble());
  Value invStd = ReciprocalOp::create(
      b, loc, SqrtOp::create(b, loc, add(b, loc, bn.getVar(), eps)));
  Value dy = dys[0];
  dxs[0] = mul(b, loc, dy, toChan(mul(b, loc, bn.getScale(), invStd)));
  Value xhat = mul(b, loc, sub(b, loc, bn.getInput(), toChan(bn.getMean())),
                   toChan(invStd));
  dxs[1] = sumOthers(mul(b, loc, dy, xhat));
  dxs[2] = sumOthers(dy);
  return success();
}

LogicalResult layerNormGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  auto ln = cast<LayerNormOp>(op);
  if (!dys[0])
    return success();
  auto g = LayerNormGradOp::create(b, op->getLoc(), dys[0], ln.getInput(),
                                   ln.getScale(), ln.getMean(),
                                   ln.getInvStdDev(), ln.getAxisAttr());
  dxs[0] = g.getInputGrad();
  dxs[1] = g.getScaleGrad();
  // The op gives the bias gradient in the scale's shape; a bias of another
  // (broadcastable) shape sums the output gradient back to its own.
  if (Value bias = ln.getBias())
    dxs[2] = bias.getType() == ln.getScale().getType()
                 ? g.getBiasGrad()
                 : sumToShape(b, op->getLoc(), dys[0],
                              typeOf(bias).getShape());
  return success();
}

} // namespace

void attachNormalizationGradients(MLIRContext *ctx) {
  attach<BatchNormTrainingOp, batchNormTrainingGrad>(ctx);
  attach<BatchNormInferenceOp, batchNormInferenceGrad>(ctx);
  attach<LayerNormOp, layerNormGrad>(ctx);
}

} // namespace ampc::autodiff
