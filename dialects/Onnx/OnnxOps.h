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

namespace ampc::onnx {
/// The element type of an ONNX TensorProto::DataType code, or null for the
/// codes ampc does not support (the importer and the Cast conversion share
/// this one table).
mlir::Type elementTypeOf(int64_t dtype, mlir::MLIRContext *context);

/// The supported codes by ONNX name, for error messages.
inline constexpr const char *kSupportedDtypes =
    "FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, BOOL";
/// Unit attribute of a @forward argument: an initializer the model says is a
/// buffer, not a weight (its `ampc.frozen` metadata); convert-onnx-to-graph
/// leaves it untrained.
inline constexpr const char *kFrozenArgAttr = "onnx.frozen";
/// Unit attribute convert-onnx-to-graph sets on a graph input (no
/// initializer) that a node needed as a compile-time constant (a shape, a
/// bound) before it failed: amp-run --mode infer then binds that input
/// from its --input file (findShapeInputs).
inline constexpr const char *kNeedsConstantArgAttr = "onnx.needs_constant";

} // namespace ampc::onnx

#endif // AMPC_DIALECTS_ONNX_ONNXOPS_H
