//===- AmpOps.h - the amp dialect -------------------------------*- C++ -*-===//
//
// Declarations of the amp dialect (see AmpOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_AMP_AMPOPS_H
#define AMPC_DIALECTS_AMP_AMPOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Amp/AmpDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Amp/AmpOps.h.inc"

namespace ampc::amp {

/// Unit attribute of the amp.cast that makes a parameter's low-precision
/// working copy from its f32 master (amp-auto-cast at O2, and at O3 with
/// master weights); graph-build-training turns it into state that the
/// optimizer update writes.
inline constexpr llvm::StringLiteral kWorkingCopyAttr = "amp.working_copy";

} // namespace ampc::amp

#endif // AMPC_DIALECTS_AMP_AMPOPS_H
