//===- OnnxOps.h - the onnx dialect -----------------------------*- C++ -*-===//
//
// Declarations of the import-level dialect (see OnnxOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_ONNX_ONNXOPS_H
#define AMPC_DIALECTS_ONNX_ONNXOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Onnx/OnnxDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dialects/Onnx/OnnxTypes.h.inc"

#define GET_OP_CLASSES
#include "dialects/Onnx/OnnxOps.h.inc"

#endif // AMPC_DIALECTS_ONNX_ONNXOPS_H
