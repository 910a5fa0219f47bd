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

Value castTo(OpBuilder &b, Location loc, Value v, Type elem) {
  if (typeOf(v).getElementType() == elem)
    return v;
  return CastOp::create(b, loc,
                        RankedTensorType::get(typeOf(v).getShape(), elem), v);
}

/// The part of dL/dx that comes through a normalization's statistics:
/// mean = sum(x)/n and invStd = (sum((x - mean)^2)/n + eps)^-1/2 over each
/// group of n elements, so dmean/dx = 1/n and
/// dinvStd/dx = -invStd^3 (x - mean)/n. `mean`, `invStd` and the incoming
/// gradients have x's shape with the reduced dimensions set to 1 (the
/// statistics' own dtype, f32 for low-precision x); null gradients add
/// nothing.
Value statisticsGrad(OpBuilder &b, Location loc, Value x, Value mean,
                     Value invStd, Value dMean, Value dInvStd, int64_t n) {
  Type statElem = typeOf(mean).getElementType();
  Value invN = scalar(b, loc, statElem, 1.0 / static_cast<double>(n));
  Value dx;
  if (dInvStd) {
    Value inv3 = mul(b, loc, invStd, mul(b, loc, invStd, invStd));
    Value k = neg(b, loc, mul(b, loc, mul(b, loc, dInvStd, inv3), invN));
    dx = mul(b, loc, k, sub(b, loc, castTo(b, loc, x, statElem), mean));
  }
  if (dMean) {
    Value m = mul(b, loc, dMean, invN);
    dx = dx ? add(b, loc, dx, m) : m;
  }
  auto full = RankedTensorType::get(typeOf(x).getShape(), statElem);
  if (typeOf(dx).getShape() != full.getShape())
    dx = BroadcastToOp::create(b, loc, full, dx);
  return castTo(b, loc, dx, typeOf(x).getElementType());
}

LogicalResult batchNormTrainingGrad(Operation *op, OpBuilder &b,
                                    ArrayRef<Value> dys,
                                    SmallVectorImpl<Value> &dxs) {
  auto bn = cast<BatchNormTrainingOp>(op);
  Location loc = op->getLoc();
  // The new running statistics are state, updated outside the gradient (as
  // PyTorch updates its buffers): a loss that reads them gets no gradient
  // through them.
  if (dys[0]) {
    // A synchronised forward has a synchronised backward.
    auto g = BatchNormGradOp::create(
        b, loc, dys[0], bn.getInput(), bn.getScale(), bn.getBatchMean(),
        bn.getBatchInvStd(), bn.getSyncRanksAttr());
    dxs[0] = g.getInputGrad();
    dxs[1] = g.getScaleGrad();
    dxs[2] = g.getBiasGrad();
  }
  if (dys[3] || dys[4]) {
    // Batch statistics read by the loss itself: per channel (axis 1).
    RankedTensorType in = typeOf(bn.getInput());
    SmallVector<int64_t> chan(in.getRank(), 1);
    chan[1] = in.getDimSize(1);
    auto toChan = [&](Value v) { return v ? reshapeTo(b, loc, v, chan) : v; };
    Value d =
        statisticsGrad(b, loc, bn.getInput(), toChan(bn.getBatchMean()),
                       toChan(bn.getBatchInvStd()), toChan(dys[3]),
                       toChan(dys[4]), in.getNumElements() / in.getDimSize(1));
    dxs[0] = dxs[0] ? add(b, loc, dxs[0], d) : d;
  }
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
  // Under AMP the input (and dy) may be f16/bf16 while the statistics and
  // the affine parameters stay f32: the channel factors are computed in the
  // statistics' type, and each gradient gets its operand's type.
  Type e = typeOf(bn.getVar()).getElementType();
  Type xElem = in.getElementType();
  Value eps = scalar(b, loc, e, bn.getEpsilon().convertToDouble());
  Value invStd = ReciprocalOp::create(
      b, loc, SqrtOp::create(b, loc, add(b, loc, bn.getVar(), eps)));
  Value dy = dys[0];
  dxs[0] =
      mul(b, loc, dy,
          castTo(b, loc, toChan(mul(b, loc, bn.getScale(), invStd)), xElem));
  Value xhat =
      mul(b, loc,
          sub(b, loc, castTo(b, loc, bn.getInput(), e), toChan(bn.getMean())),
          toChan(invStd));
  Value dyStat = castTo(b, loc, dy, e);
  dxs[1] = castTo(b, loc, sumOthers(mul(b, loc, dyStat, xhat)),
                  typeOf(bn.getScale()).getElementType());
  dxs[2] =
      castTo(b, loc, sumOthers(dyStat), typeOf(bn.getBias()).getElementType());
  return success();
}

LogicalResult layerNormGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  auto ln = cast<LayerNormOp>(op);
  Location loc = op->getLoc();
  if (dys[1] || dys[2]) {
    // The loss reads the statistics themselves (ONNX's Mean, InvStdDev).
    RankedTensorType in = typeOf(ln.getInput());
    int64_t n = 1;
    for (int64_t d : in.getShape().drop_front(ln.getAxisAttr().getInt()))
      n *= d;
    dxs[0] = statisticsGrad(b, loc, ln.getInput(), ln.getMean(),
                            ln.getInvStdDev(), dys[1], dys[2], n);
  }
  if (!dys[0])
    return success();
  auto g = LayerNormGradOp::create(b, loc, dys[0], ln.getInput(), ln.getScale(),
                                   ln.getMean(), ln.getInvStdDev(),
                                   ln.getAxisAttr());
  dxs[0] = dxs[0] ? add(b, loc, dxs[0], g.getInputGrad()) : g.getInputGrad();
  dxs[1] = g.getScaleGrad();
  // The op gives the bias gradient in the scale's shape; a bias of another
  // (broadcastable) shape sums the output gradient back to its own.
  if (Value bias = ln.getBias())
    dxs[2] = bias.getType() == ln.getScale().getType()
                 ? g.getBiasGrad()
                 : sumToShape(b, loc, dys[0], typeOf(bias).getShape());
  return success();
}

} // namespace

void attachNormalizationGradients(MLIRContext *ctx) {
  attach<BatchNormTrainingOp, batchNormTrainingGrad>(ctx);
  attach<BatchNormInferenceOp, batchNormInferenceGrad>(ctx);
  attach<LayerNormOp, layerNormGrad>(ctx);
}

} // namespace ampc::autodiff
