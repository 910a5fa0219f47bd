//===- OnnxOps.cpp - the onnx dialect -------------------------------------===//
//
// Registration of the onnx dialect and the verifier of onnx.node.
//
//===----------------------------------------------------------------------===//

#include "dialects/Onnx/OnnxOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace ampc::onnx;

#include "dialects/Onnx/OnnxDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/OnnxTypes.cpp.inc"

void OnnxDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/Onnx/OnnxOps.cpp.inc"
      >();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dialects/Onnx/OnnxTypes.cpp.inc"
      >();
}

Type ampc::onnx::elementTypeOf(int64_t dtype, MLIRContext *context) {
  Builder b(context);
  // Codes of onnx.proto's TensorProto::DataType.
  switch (dtype) {
  case 1:
    return b.getF32Type();
  case 10:
    return b.getF16Type();
  case 16:
    return b.getBF16Type();
  case 11:
    return b.getF64Type();
  case 7:
    return b.getI64Type();
  case 6:
    return b.getI32Type();
  case 9:
    return b.getI1Type();
  default:
    return nullptr;
  }
}

StringRef NodeOp::getNodeName() {
  Location loc = getLoc();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    if (!fused.getLocations().empty())
      loc = fused.getLocations().front();
  if (auto name = dyn_cast<NameLoc>(loc))
    return name.getName().getValue();
  return "";
}

LogicalResult NodeOp::verify() {
  if (getOpType().empty())
    return emitOpError("has an empty op_type");
  if (getOpset() < 1)
    return emitOpError("has opset version ") << getOpset() << ", expected >= 1";
  for (Value v : getInputs())
    if (!isa<TensorType, NoneType, UnknownType>(v.getType()))
      return emitOpError("input of type ")
             << v.getType() << " is neither a tensor, none nor !onnx.unknown";
  for (Type t : getOutputs().getTypes())
    if (!isa<TensorType, UnknownType>(t))
      return emitOpError("output of type ")
             << t << " is neither a tensor nor !onnx.unknown";
  return success();
}

#define GET_OP_CLASSES
#include "dialects/Onnx/OnnxOps.cpp.inc"
