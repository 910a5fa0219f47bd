//===- AmpGradients.cpp - backward rules of the amp ops -------------------===//
//
// The gradient of a precision change is the opposite change: dy arrives in
// the cast's result type and leaves in its operand type, so the backward
// graph of a low-precision region runs in that precision too and every
// parameter's gradient comes back in the parameter's own type.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"
#include "dialects/Amp/AmpOps.h"

using namespace mlir;

namespace ampc::autodiff {
namespace {

LogicalResult ampCastGrad(Operation *op, OpBuilder &b, ArrayRef<Value> dys,
                          SmallVectorImpl<Value> &dxs) {
  Value in = op->getOperand(0);
  dxs[0] = amp::CastOp::create(b, op->getLoc(), in.getType(), dys[0]);
  return success();
}

} // namespace

void attachAmpGradients(MLIRContext *ctx) {
  attach<amp::CastOp, ampCastGrad>(ctx);
}

} // namespace ampc::autodiff
