//===- Accumulate.cpp - the graph.accumulate op attribute -----------------===//
//
// How the attribute is set on the Accumulating ops (GraphTraits.td), and its
// verification by the graph dialect (for any op carrying it, whatever its
// dialect).
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/GraphOps.h"

using namespace mlir;

namespace ampc::graph {

static bool isAccumulatingOp(Operation *op) {
  return op->hasTrait<OpTrait::Accumulating>();
}

/// The element type the op's precision is read from: its first result's.
static Type resultElementType(Operation *op) {
  if (op->getNumResults() == 0)
    return {};
  auto t = dyn_cast<ShapedType>(op->getResult(0).getType());
  return t ? t.getElementType() : Type();
}

static bool isLowPrecision(Type t) { return t && (t.isF16() || t.isBF16()); }

void markAccumulation(Operation *op) {
  if (isAccumulatingOp(op) && isLowPrecision(resultElementType(op)))
    op->setAttr(kAccumulateAttr,
                TypeAttr::get(Float32Type::get(op->getContext())));
}

LogicalResult GraphDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  // Other graph.* names are argument, result and function attributes,
  // checked by the passes that read them.
  if (attr.getName() == kLossSeedAttr) {
    auto c = dyn_cast<ConstantOp>(op);
    if (!c || cast<ShapedType>(c.getType()).getRank() != 0 ||
        !isa<UnitAttr>(attr.getValue()))
      return op->emitOpError("has ")
             << kLossSeedAttr
             << ", which only a scalar graph.constant (unit) may carry";
    return success();
  }
  if (attr.getName() == kStepInfoAttr)
    return verifyStepInfo(op, attr.getValue());
  if (attr.getName() != kAccumulateAttr)
    return success();
  auto type = dyn_cast<TypeAttr>(attr.getValue());
  if (!type || !type.getValue().isF32())
    return op->emitOpError("has ")
           << kAccumulateAttr << " = " << attr.getValue()
           << ", but the only accumulation type is f32";
  if (!isAccumulatingOp(op))
    return op->emitOpError("has ")
           << kAccumulateAttr
           << ", but it is not a contraction or reduction: it accumulates "
              "nothing";
  Type elem = resultElementType(op);
  if (!isLowPrecision(elem))
    return op->emitOpError("has ")
           << kAccumulateAttr << " but computes in " << elem
           << ": only f16 and bf16 ops carry it (an op in f32 or f64 "
              "accumulates in its own type)";
  return success();
}

} // namespace ampc::graph
