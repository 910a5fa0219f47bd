//===- GradientBuilder.cpp - pieces the backward rules share --------------===//

#include "compiler/Autodiff/GradientBuilder.h"
#include "compiler/Autodiff/Gradients.h"
#include "dialects/Amp/AmpOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectRegistry.h"

using namespace mlir;

namespace ampc::autodiff {

Value splat(OpBuilder &b, Location loc, RankedTensorType type, double value) {
  Type e = type.getElementType();
  Attribute attr;
  if (auto f = dyn_cast<FloatType>(e)) {
    APFloat v(value);
    bool lost;
    v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    attr = DenseElementsAttr::get(type, v);
  } else {
    attr = DenseElementsAttr::get(type, APInt(e.getIntOrFloatBitWidth(),
                                              static_cast<int64_t>(value),
                                              /*isSigned=*/true));
  }
  return graph::ConstantOp::create(b, loc, cast<ElementsAttr>(attr));
}

Value scalar(OpBuilder &b, Location loc, Type elementType, double value) {
  return splat(b, loc, RankedTensorType::get({}, elementType), value);
}

Value reshapeTo(OpBuilder &b, Location loc, Value v, ArrayRef<int64_t> shape) {
  if (typeOf(v).getShape() == shape)
    return v;
  return graph::ReshapeOp::create(
      b, loc, RankedTensorType::get(shape, typeOf(v).getElementType()), v);
}

Value sumToShape(OpBuilder &b, Location loc, Value grad,
                 ArrayRef<int64_t> shape) {
  ArrayRef<int64_t> from = typeOf(grad).getShape();
  if (from == shape)
    return grad;
  int64_t lead = static_cast<int64_t>(from.size() - shape.size());
  SmallVector<int64_t> axes;
  for (int64_t i = 0; i < static_cast<int64_t>(from.size()); ++i)
    if (i < lead || (shape[i - lead] == 1 && from[i] != 1))
      axes.push_back(i);
  Value summed = grad;
  if (!axes.empty())
    summed = graph::ReduceSumOp::create(
        b, loc, grad, b.getDenseI64ArrayAttr(axes), b.getBoolAttr(true));
  return reshapeTo(b, loc, summed, shape);
}

Value expandReduced(OpBuilder &b, Location loc, Value v, RankedTensorType to,
                    ArrayRef<int64_t> axes, bool keepdims) {
  SmallVector<int64_t> kept(to.getShape());
  for (int64_t a : axes)
    kept[a] = 1;
  Value k = keepdims ? v : reshapeTo(b, loc, v, kept);
  if (typeOf(k).getShape() == to.getShape())
    return k;
  return graph::BroadcastToOp::create(b, loc, to, k);
}

Value add(OpBuilder &b, Location loc, Value x, Value y) {
  return graph::AddOp::create(b, loc, x, y);
}
Value sub(OpBuilder &b, Location loc, Value x, Value y) {
  return graph::SubOp::create(b, loc, x, y);
}
Value mul(OpBuilder &b, Location loc, Value x, Value y) {
  return graph::MulOp::create(b, loc, x, y);
}
Value div(OpBuilder &b, Location loc, Value x, Value y) {
  return graph::DivOp::create(b, loc, x, y);
}
Value neg(OpBuilder &b, Location loc, Value x) {
  return graph::NegOp::create(b, loc, x);
}

} // namespace ampc::autodiff

void ampc::registerGradientModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, graph::GraphDialect *) {
    autodiff::attachElementwiseGradients(ctx);
    autodiff::attachContractionGradients(ctx);
    autodiff::attachReductionGradients(ctx);
    autodiff::attachNormalizationGradients(ctx);
    autodiff::attachMovementGradients(ctx);
  });
  registry.addExtension(+[](MLIRContext *ctx, amp::AmpDialect *) {
    autodiff::attachAmpGradients(ctx);
  });
}
