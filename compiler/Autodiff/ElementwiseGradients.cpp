//===- ElementwiseGradients.cpp - backward rules of elementwise ops -------===//
//
// Activations with a kink or a non-trivial derivative have their own
// gradient op (relu_grad, gelu_grad, ...); smooth ones are written with
// the forward ops, reusing the forward result where the derivative is a
// function of it (tanh, sigmoid, exp, sqrt, reciprocal; relu_grad reads
// relu's output too). Binary ops sum their gradient back over broadcast
// dimensions.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"

#include <cmath>

using namespace mlir;
using namespace ampc::graph;

namespace ampc::autodiff {
namespace {

Type elem(Value v) { return typeOf(v).getElementType(); }

template <typename GradOp>
LogicalResult kinkGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  if (!isFloat(op->getOperand(0)))
    return success();
  // The gradient op takes the forward op's attributes (alpha, bounds,
  // approximate) under the same names.
  auto g =
      GradOp::create(b, op->getLoc(), op->getResultTypes(),
                     ValueRange{dys[0], op->getOperand(0)}, op->getAttrs());
  dxs[0] = g;
  return success();
}

/// relu's gradient reads relu's output, not its input: y = relu(x) is > 0
/// exactly where x is (relu keeps NaN, which is not > 0, and gives +0 for
/// -0 and negatives), so relu_grad(g, y) == relu_grad(g, x) element for
/// element. Reading y, which the next layer keeps for its own gradient
/// anyway, lets the pre-activation x die in the forward pass: a GEMM with
/// a relu epilogue then never stores it.
LogicalResult reluGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  if (!isFloat(op->getOperand(0)))
    return success();
  dxs[0] = ReluGradOp::create(b, op->getLoc(), op->getResultTypes(),
                              ValueRange{dys[0], op->getResult(0)});
  return success();
}

LogicalResult tanhGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  Value y = op->getResult(0);
  Value one = scalar(b, loc, elem(y), 1.0);
  dxs[0] = mul(b, loc, dys[0], sub(b, loc, one, mul(b, loc, y, y)));
  return success();
}

LogicalResult sigmoidGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  Value y = op->getResult(0);
  Value one = scalar(b, loc, elem(y), 1.0);
  dxs[0] = mul(b, loc, mul(b, loc, dys[0], y), sub(b, loc, one, y));
  return success();
}

LogicalResult erfGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  Value x = op->getOperand(0);
  Value e = ExpOp::create(b, loc, neg(b, loc, mul(b, loc, x, x)));
  Value c = scalar(b, loc, elem(x), 2.0 / std::sqrt(M_PI));
  dxs[0] = mul(b, loc, dys[0], mul(b, loc, c, e));
  return success();
}

LogicalResult expGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  dxs[0] = mul(b, op->getLoc(), dys[0], op->getResult(0));
  return success();
}

LogicalResult logGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  dxs[0] = div(b, op->getLoc(), dys[0], op->getOperand(0));
  return success();
}

LogicalResult sqrtGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  Value y = op->getResult(0);
  dxs[0] = div(b, loc, mul(b, loc, dys[0], scalar(b, loc, elem(y), 0.5)), y);
  return success();
}

LogicalResult reciprocalGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                             SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  Value y = op->getResult(0);
  dxs[0] = neg(b, loc, mul(b, loc, dys[0], mul(b, loc, y, y)));
  return success();
}

LogicalResult sinGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  dxs[0] = mul(b, loc, dys[0], CosOp::create(b, loc, op->getOperand(0)));
  return success();
}

LogicalResult cosGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  dxs[0] = neg(b, loc,
               mul(b, loc, dys[0], SinOp::create(b, loc, op->getOperand(0))));
  return success();
}

/// d/dx ln(1 + e^x) = sigmoid(x), which is 0 at -inf and 1 at +inf.
LogicalResult softplusGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                           SmallVectorImpl<Value> &dxs) {
  Location loc = op->getLoc();
  dxs[0] = mul(b, loc, dys[0], SigmoidOp::create(b, loc, op->getOperand(0)));
  return success();
}

LogicalResult negGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  if (isFloat(op->getOperand(0)))
    dxs[0] = neg(b, op->getLoc(), dys[0]);
  return success();
}

/// Binary ops: the rule gives the full-shape gradients, which are then
/// summed back to each operand's shape.
template <typename Fn>
LogicalResult binaryGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                         SmallVectorImpl<Value> &dxs, Fn rule) {
  if (!isFloat(op->getResult(0)))
    return success();
  Location loc = op->getLoc();
  Value lhs = op->getOperand(0), rhs = op->getOperand(1);
  auto [dl, dr] = rule(loc, lhs, rhs, op->getResult(0), dys[0]);
  if (dl)
    dxs[0] = sumToShape(b, loc, dl, typeOf(lhs).getShape());
  if (dr)
    dxs[1] = sumToShape(b, loc, dr, typeOf(rhs).getShape());
  return success();
}

LogicalResult addGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  return binaryGrad(op, b, dys, dxs,
                    [&](Location, Value, Value, Value, Value dy) {
                      return std::pair<Value, Value>(dy, dy);
                    });
}

LogicalResult subGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  return binaryGrad(op, b, dys, dxs,
                    [&](Location loc, Value, Value, Value, Value dy) {
                      return std::pair<Value, Value>(dy, neg(b, loc, dy));
                    });
}

LogicalResult mulGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  return binaryGrad(
      op, b, dys, dxs, [&](Location loc, Value l, Value r, Value, Value dy) {
        // x * x: one product, counted twice by the caller's sum.
        return std::pair<Value, Value>(mul(b, loc, dy, r), mul(b, loc, dy, l));
      });
}

LogicalResult divGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  return binaryGrad(op, b, dys, dxs,
                    [&](Location loc, Value, Value r, Value y, Value dy) {
                      Value dl = div(b, loc, dy, r);
                      Value dr = neg(b, loc, mul(b, loc, dl, y));
                      return std::pair<Value, Value>(dl, dr);
                    });
}

LogicalResult powGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                      SmallVectorImpl<Value> &dxs) {
  return binaryGrad(
      op, b, dys, dxs, [&](Location loc, Value l, Value r, Value y, Value dy) {
        Value one = scalar(b, loc, elem(r), 1.0);
        Value pm1 = PowOp::create(b, loc, l, sub(b, loc, r, one));
        Value dl = mul(b, loc, dy, mul(b, loc, r, pm1));
        Value dr = mul(b, loc, mul(b, loc, dy, y), LogOp::create(b, loc, l));
        return std::pair<Value, Value>(dl, dr);
      });
}

LogicalResult whereGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                        SmallVectorImpl<Value> &dxs) {
  auto where = cast<WhereOp>(op);
  if (!isFloat(where.getOutput()))
    return success();
  Location loc = op->getLoc();
  Value zero = scalar(b, loc, elem(dys[0]), 0.0);
  Value c = where.getCondition();
  dxs[1] = sumToShape(b, loc, WhereOp::create(b, loc, c, dys[0], zero),
                      typeOf(where.getX()).getShape());
  dxs[2] = sumToShape(b, loc, WhereOp::create(b, loc, c, zero, dys[0]),
                      typeOf(where.getY()).getShape());
  return success();
}

LogicalResult castGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                       SmallVectorImpl<Value> &dxs) {
  Value in = op->getOperand(0);
  if (!isFloat(in) || !isFloat(op->getResult(0)))
    return success();
  dxs[0] = CastOp::create(b, op->getLoc(), in.getType(), dys[0]);
  return success();
}

} // namespace

void attachElementwiseGradients(MLIRContext *ctx) {
  attach<ReluOp, reluGrad>(ctx);
  attach<AbsOp, kinkGrad<AbsGradOp>>(ctx);
  attach<LeakyReluOp, kinkGrad<LeakyReluGradOp>>(ctx);
  attach<HardSigmoidOp, kinkGrad<HardSigmoidGradOp>>(ctx);
  attach<HardSwishOp, kinkGrad<HardSwishGradOp>>(ctx);
  attach<GeluOp, kinkGrad<GeluGradOp>>(ctx);
  attach<ClipOp, kinkGrad<ClipGradOp>>(ctx);
  attach<TanhOp, tanhGrad>(ctx);
  attach<SigmoidOp, sigmoidGrad>(ctx);
  attach<ErfOp, erfGrad>(ctx);
  attach<ExpOp, expGrad>(ctx);
  attach<LogOp, logGrad>(ctx);
  attach<SqrtOp, sqrtGrad>(ctx);
  attach<ReciprocalOp, reciprocalGrad>(ctx);
  attach<SinOp, sinGrad>(ctx);
  attach<CosOp, cosGrad>(ctx);
  attach<SoftplusOp, softplusGrad>(ctx);
  attach<NegOp, negGrad>(ctx);
  attach<AddOp, addGrad>(ctx);
  attach<SubOp, subGrad>(ctx);
  attach<MulOp, mulGrad>(ctx);
  attach<DivOp, divGrad>(ctx);
  attach<PowOp, powGrad>(ctx);
  attach<WhereOp, whereGrad>(ctx);
  attach<CastOp, castGrad>(ctx);
}

} // namespace ampc::autodiff
