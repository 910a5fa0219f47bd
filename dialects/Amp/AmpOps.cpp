//===- AmpOps.cpp - the amp dialect ---------------------------------------===//
//
// Registration and verifiers of the amp dialect.
//
//===----------------------------------------------------------------------===//

#include "dialects/Amp/AmpOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ampc::amp;

#include "dialects/Amp/AmpDialect.cpp.inc"

void AmpDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Amp/AmpOps.cpp.inc"
      >();
}

LogicalResult CastOp::verify() {
  auto in = cast<ShapedType>(getInput().getType());
  auto out = cast<ShapedType>(getOutput().getType());
  if (in.getShape() != out.getShape())
    return emitOpError("changes the shape from ") << in << " to " << out;
  if (in.getElementType() == out.getElementType())
    return emitOpError("casts ") << in << " to its own type";
  return success();
}

LogicalResult CheckFiniteOp::verify() {
  if (getGrads().empty())
    return emitOpError("needs at least one gradient");
  return success();
}

LogicalResult UpdateScaleOp::verify() {
  double growth = getGrowth().convertToDouble();
  double backoff = getBackoff().convertToDouble();
  if (!(growth >= 1))
    return emitOpError("growth must be >= 1, got ") << growth;
  if (!(backoff > 0 && backoff <= 1))
    return emitOpError("backoff must be in (0, 1], got ") << backoff;
  if (getGrowthInterval() < 1)
    return emitOpError("growth_interval must be >= 1, got ")
           << getGrowthInterval();
  if (getDecrEveryN() < 1)
    return emitOpError("decr_every_n must be >= 1, got ") << getDecrEveryN();
  double lo = getMinScale().convertToDouble();
  double hi = getMaxScale().convertToDouble();
  if (!(lo > 0 && lo <= hi))
    return emitOpError("needs 0 < min_scale <= max_scale, got ")
           << lo << " and " << hi;
  return success();
}

LogicalResult GuardUpdateOp::verify() {
  if (getUpdated().size() != getOld().size() ||
      getUpdated().size() != getResults().size())
    return emitOpError("needs as many old values and results as updated "
                       "values, got ")
           << getUpdated().size() << " updated, " << getOld().size()
           << " old, " << getResults().size() << " results";
  for (auto [i, n, o, r] :
       llvm::enumerate(getUpdated().getTypes(), getOld().getTypes(),
                       getResults().getTypes()))
    if (n != o || n != r)
      return emitOpError("entry #") << i << " mixes types " << n << ", " << o
                                    << " and " << r;
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Amp/AmpOps.cpp.inc"
