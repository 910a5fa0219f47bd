//===- ContractionGradients.cpp - matmul, gemm, convolution, pooling ------===//
//
// Contraction gradients are contractions again (a GEMM's gradients are two
// GEMMs with transposes folded into the flags), so they run on the same
// BLAS / Tensor Core kernels as the forward pass.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"

using namespace mlir;
using namespace ampc::graph;

namespace ampc::autodiff {
namespace {

/// Swaps the last two dimensions.
Value transposeLast2(OpBuilder &b, Location loc, Value v) {
  int64_t rank = typeOf(v).getRank();
  SmallVector<int64_t> perm;
  for (int64_t i = 0; i < rank; ++i)
    perm.push_back(i);
  std::swap(perm[rank - 1], perm[rank - 2]);
  return TransposeOp::create(b, loc, v, b.getDenseI64ArrayAttr(perm));
}

LogicalResult matmulGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs) {
  auto mm = cast<MatMulOp>(op);
  if (!isFloat(mm.getOutput()))
    return success();
  Location loc = op->getLoc();
  Value lhs = mm.getLhs(), rhs = mm.getRhs(), dy = dys[0];
  ArrayRef<int64_t> ls = typeOf(lhs).getShape(), rs = typeOf(rhs).getShape();
  // numpy promotes 1-D operands to matrices and drops the promoted
  // dimension from the result; the gradient undoes both.
  SmallVector<int64_t> l2(ls), r2(rs), y2(typeOf(dy).getShape());
  if (ls.size() == 1)
    l2.insert(l2.begin(), 1);
  if (rs.size() == 1)
    r2.push_back(1);
  if (ls.size() == 1)
    y2.insert(y2.end() - (rs.size() == 1 ? 0 : 1), 1);
  if (rs.size() == 1)
    y2.push_back(1);
  Value lp = reshapeTo(b, loc, lhs, l2), rp = reshapeTo(b, loc, rhs, r2);
  Value dyp = reshapeTo(b, loc, dy, y2);
  Value dl = MatMulOp::create(b, loc, dyp, transposeLast2(b, loc, rp));
  Value dr = MatMulOp::create(b, loc, transposeLast2(b, loc, lp), dyp);
  dxs[0] = reshapeTo(b, loc, sumToShape(b, loc, dl, l2), ls);
  dxs[1] = reshapeTo(b, loc, sumToShape(b, loc, dr, r2), rs);
  return success();
}

LogicalResult gemmGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  auto gemm = cast<GemmOp>(op);
  if (!isFloat(gemm.getOutput()))
    return success();
  Location loc = op->getLoc();
  Value a = gemm.getA(), bm = gemm.getB(), dy = dys[0];
  bool ta = gemm.getTransA(), tb = gemm.getTransB();
  FloatAttr alpha = b.getF64FloatAttr(gemm.getAlpha().convertToDouble());
  FloatAttr zero = b.getF64FloatAttr(0.0);
  auto g = [&](Value x, Value y, bool tx, bool ty) -> Value {
    return GemmOp::create(b, loc, x, y, Value(), alpha, zero, b.getBoolAttr(tx),
                          b.getBoolAttr(ty));
  };
  // Y = alpha op(A) op(B) + beta C.
  dxs[0] = ta ? g(bm, dy, tb, true) : g(dy, bm, false, !tb);
  dxs[1] = tb ? g(dy, a, true, ta) : g(a, dy, !ta, false);
  if (Value c = gemm.getC()) {
    Value dc = dy;
    double beta = gemm.getBeta().convertToDouble();
    if (beta != 1.0)
      dc = mul(b, loc, dc, scalar(b, loc, typeOf(dy).getElementType(), beta));
    dxs[2] = sumToShape(b, loc, dc, typeOf(c).getShape());
  }
  return success();
}

LogicalResult conv2dGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs) {
  auto conv = cast<Conv2dOp>(op);
  Location loc = op->getLoc();
  Value dy = dys[0];
  dxs[0] = Conv2dBackwardDataOp::create(
      b, loc, conv.getInput().getType(), dy, conv.getFilter(),
      conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
      conv.getGroupAttr());
  dxs[1] = Conv2dBackwardFilterOp::create(
      b, loc, conv.getFilter().getType(), dy, conv.getInput(),
      conv.getStridesAttr(), conv.getPadsAttr(), conv.getDilationsAttr(),
      conv.getGroupAttr());
  if (conv.getBias())
    dxs[2] = ReduceSumOp::create(b, loc, dy, b.getDenseI64ArrayAttr({0, 2, 3}),
                                 b.getBoolAttr(false));
  return success();
}

/// y = conv_transpose2d(x, W) is conv2d's input gradient with x in the
/// place of the output gradient: dx is the conv2d of dy, and dW the filter
/// gradient of a conv2d whose input is dy and output gradient x.
LogicalResult convTranspose2dGrad(Operation *op, OpBuilder &b,
                                  ArrayRef<Value> dys,
                                  SmallVectorImpl<Value> &dxs) {
  auto ct = cast<ConvTranspose2dOp>(op);
  Location loc = op->getLoc();
  Value dy = dys[0];
  dxs[0] = Conv2dOp::create(b, loc, dy, ct.getFilter(), Value(),
                            ct.getStridesAttr(), ct.getPadsAttr(),
                            ct.getDilationsAttr(), ct.getGroupAttr());
  dxs[1] = Conv2dBackwardFilterOp::create(
      b, loc, ct.getFilter().getType(), ct.getInput(), dy, ct.getStridesAttr(),
      ct.getPadsAttr(), ct.getDilationsAttr(), ct.getGroupAttr());
  return success();
}

LogicalResult maxPoolGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  auto pool = cast<MaxPool2dOp>(op);
  dxs[0] = MaxPool2dGradOp::create(
      b, op->getLoc(), dys[0], pool.getInput(), pool.getKernelShapeAttr(),
      pool.getStridesAttr(), pool.getPadsAttr(), pool.getDilationsAttr(),
      pool.getCeilModeAttr());
  return success();
}

LogicalResult avgPoolGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  auto pool = cast<AvgPool2dOp>(op);
  dxs[0] = AvgPool2dGradOp::create(
      b, op->getLoc(), pool.getInput().getType(), dys[0],
      pool.getKernelShapeAttr(), pool.getStridesAttr(), pool.getPadsAttr(),
      pool.getCeilModeAttr(), pool.getCountIncludePadAttr());
  return success();
}

LogicalResult globalAvgPoolGrad(Operation *op, OpBuilder &b,
                                ArrayRef<Value> dys,
                                SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  RankedTensorType in = typeOf(op->getOperand(0));
  int64_t count = 1;
  for (int64_t d : in.getShape().drop_front(2))
    count *= d;
  Value scaled =
      mul(b, loc, dys[0], scalar(b, loc, in.getElementType(), 1.0 / count));
  dxs[0] = BroadcastToOp::create(b, loc, in, scaled);
  return success();
}

} // namespace

void attachContractionGradients(MLIRContext *ctx) {
  attach<MatMulOp, matmulGrad>(ctx);
  attach<GemmOp, gemmGrad>(ctx);
  attach<Conv2dOp, conv2dGrad>(ctx);
  attach<ConvTranspose2dOp, convTranspose2dGrad>(ctx);
  attach<MaxPool2dOp, maxPoolGrad>(ctx);
  attach<AvgPool2dOp, avgPoolGrad>(ctx);
  attach<GlobalAvgPoolOp, globalAvgPoolGrad>(ctx);
}

} // namespace ampc::autodiff
