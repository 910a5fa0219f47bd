//===- MovementGradients.cpp - reshape, transpose, slices, gather, dropout ===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"

using namespace mlir;
using namespace ampc::graph;

namespace ampc::autodiff {
namespace {

LogicalResult reshapeGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  if (isFloat(op->getOperand(0)))
    dxs[0] = reshapeTo(b, op->getLoc(), dys[0],
                       typeOf(op->getOperand(0)).getShape());
  return success();
}

LogicalResult broadcastGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  if (isFloat(op->getOperand(0)))
    dxs[0] = sumToShape(b, op->getLoc(), dys[0],
                        typeOf(op->getOperand(0)).getShape());
  return success();
}

LogicalResult transposeGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                            SmallVectorImpl<Value> &dxs) {
  auto t = cast<TransposeOp>(op);
  if (!isFloat(t.getInput()))
    return success();
  ArrayRef<int64_t> perm = t.getPerm();
  SmallVector<int64_t> inverse(perm.size());
  for (auto [i, p] : llvm::enumerate(perm))
    inverse[p] = static_cast<int64_t>(i);
  dxs[0] = TransposeOp::create(b, op->getLoc(), dys[0],
                               b.getDenseI64ArrayAttr(inverse));
  return success();
}

LogicalResult concatGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs) {
  auto c = cast<ConcatOp>(op);
  if (!isFloat(c.getOutput()))
    return success();
  ArrayRef<int64_t> out = typeOf(c.getOutput()).getShape();
  int64_t axis = c.getAxis(), at = 0;
  for (auto [i, in] : llvm::enumerate(c.getInputs())) {
    int64_t len = typeOf(in).getDimSize(axis);
    SmallVector<int64_t> starts(out.size(), 0), ends(out), steps(out.size(), 1);
    starts[axis] = at;
    ends[axis] = at + len;
    at += len;
    dxs[i] = SliceOp::create(
        b, op->getLoc(), dys[0], b.getDenseI64ArrayAttr(starts),
        b.getDenseI64ArrayAttr(ends), b.getDenseI64ArrayAttr(steps));
  }
  return success();
}

LogicalResult sliceGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                        SmallVectorImpl<Value> &dxs) {
  auto s = cast<SliceOp>(op);
  if (!isFloat(s.getInput()))
    return success();
  dxs[0] =
      SliceGradOp::create(b, op->getLoc(), s.getInput().getType(), dys[0],
                          s.getStartsAttr(), s.getEndsAttr(), s.getStepsAttr());
  return success();
}

LogicalResult gatherGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs) {
  auto g = cast<GatherOp>(op);
  if (!isFloat(g.getData()))
    return success();
  dxs[0] = GatherGradOp::create(b, op->getLoc(), g.getData().getType(), dys[0],
                                g.getIndices(), g.getAxisAttr());
  return success();
}

LogicalResult dropoutGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  auto d = cast<DropoutOp>(op);
  if (!dys[0])
    return success();
  double ratio = d.getRatio().convertToDouble();
  if (!d.getTraining() || ratio == 0) {
    dxs[0] = dys[0];
    return success();
  }
  // The forward mask, not a new draw: the same elements are dropped.
  Location loc = op->getLoc();
  Type e = typeOf(dys[0]).getElementType();
  Value kept = mul(b, loc, dys[0], scalar(b, loc, e, 1.0 / (1.0 - ratio)));
  dxs[0] = WhereOp::create(b, loc, d.getMask(), kept, scalar(b, loc, e, 0.0));
  return success();
}

} // namespace

void attachMovementGradients(MLIRContext *ctx) {
  attach<ReshapeOp, reshapeGrad>(ctx);
  attach<BroadcastToOp, broadcastGrad>(ctx);
  attach<TransposeOp, transposeGrad>(ctx);
  attach<ConcatOp, concatGrad>(ctx);
  attach<SliceOp, sliceGrad>(ctx);
  attach<GatherOp, gatherGrad>(ctx);
  attach<DropoutOp, dropoutGrad>(ctx);
}

} // namespace ampc::autodiff
