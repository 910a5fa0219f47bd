//===- RtOps.cpp - the rt dialect -----------------------------------------===//
//
// Registration and verifiers of the rt dialect: offsets are aligned, views
// keep the byte size, kernel bodies match the kernel's signature.
//
//===----------------------------------------------------------------------===//

#include "dialects/Rt/RtOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"

using namespace mlir;
using namespace ampc::rtir;

#include "dialects/Rt/RtDialect.cpp.inc"

void RtDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Rt/RtOps.cpp.inc"
      >();
}

int64_t ampc::rtir::byteSize(ShapedType type) {
  Type elem = type.getElementType();
  int64_t bytes = elem.isInteger(1) ? 1 : elem.getIntOrFloatBitWidth() / 8;
  return type.getNumElements() * bytes;
}

static LogicalResult verifyOffset(Operation *op, int64_t offset) {
  if (offset < 0 || offset % kArenaAlignment != 0)
    return op->emitOpError("has arena offset ")
           << offset << ", which is not a non-negative multiple of "
           << kArenaAlignment;
  return success();
}

LogicalResult InputOp::verify() { return verifyOffset(*this, getOffset()); }

LogicalResult ParamOp::verify() {
  if (getInit().getType() != getOutput().getType())
    return emitOpError("has initial value of type ")
           << getInit().getType() << " for a parameter of type "
           << getOutput().getType();
  return verifyOffset(*this, getOffset());
}

LogicalResult UpdateOp::verify() {
  auto param = getParam().getDefiningOp<ParamOp>();
  if (!param)
    return emitOpError("updates a value that is not an rt.param");
  if (getParam().getType() != getValue().getType())
    return emitOpError("gives parameter '")
           << param.getName() << "' of type " << getParam().getType()
           << " a value of type " << getValue().getType();
  // Reported on the later update; an update that only reads the parameter
  // (as another parameter's new value) does not count.
  for (Operation *user : getParam().getUsers()) {
    auto other = dyn_cast<UpdateOp>(user);
    if (other && other != *this && other.getParam() == getParam() &&
        other->getBlock() == (*this)->getBlock() &&
        other->isBeforeInBlock(*this))
      return emitOpError("is the second update of parameter '")
             << param.getName() << "'";
  }
  return success();
}

LogicalResult ViewOp::verify() {
  auto in = cast<ShapedType>(getInput().getType());
  auto out = cast<ShapedType>(getOutput().getType());
  if (in.getElementType() != out.getElementType() ||
      in.getNumElements() != out.getNumElements())
    return emitOpError("views ")
           << in << " as " << out << ": element type and count must match";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getKind().empty())
    return emitOpError("has an empty kernel kind");
  if (getOffsets().size() != getNumResults())
    return emitOpError("has ") << getOffsets().size() << " offsets for "
                               << getNumResults() << " results";
  for (int64_t off : getOffsets())
    if (failed(verifyOffset(*this, off)))
      return failure();
  Block &body = getBody().front();
  if (body.getNumArguments() != getInputs().size())
    return emitOpError("body has ")
           << body.getNumArguments() << " arguments for " << getInputs().size()
           << " inputs";
  for (auto [i, arg, in] :
       llvm::enumerate(body.getArgumentTypes(), getInputs().getTypes()))
    if (arg != in)
      return emitOpError("body argument ")
             << i << " has type " << arg << " but input " << i << " is " << in;
  auto yield = dyn_cast<YieldOp>(body.getTerminator());
  if (!yield)
    return emitOpError("body must end with rt.yield");
  if (yield.getValues().getTypes() != getResultTypes())
    return emitOpError("body yields ")
           << yield.getValues().getTypes().size()
           << " values whose types differ from the results";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Rt/RtOps.cpp.inc"
