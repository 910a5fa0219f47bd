//===- RtOps.h - the rt dialect ---------------------------------*- C++ -*-===//
//
// Declarations of the rt dialect (see RtOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_RT_RTOPS_H
#define AMPC_DIALECTS_RT_RTOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Rt/RtDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Rt/RtOps.h.inc"

namespace ampc::rtir {
/// The function attribute holding the arena size in bytes.
inline constexpr llvm::StringLiteral kArenaSizeAttr = "rt.arena_size";
/// The unit attribute of a training module's evaluation function: its
/// parameters are the step's of the same names, which a runner copies in
/// (program.proto's `params_from_step`); their initial values are not
/// written.
inline constexpr llvm::StringLiteral kParamsFromStepAttr =
    "rt.params_from_step";
/// Byte alignment of every arena offset (a cache line; AVX-512 loads).
inline constexpr int64_t kArenaAlignment = 64;
/// Bytes a tensor of `type` occupies (i1: one byte per element).
int64_t byteSize(mlir::ShapedType type);
} // namespace ampc::rtir

#endif // AMPC_DIALECTS_RT_RTOPS_H
