//===- AmpOperandPolicy.h - operands that stay f32 --------------*- C++ -*-===//
//
// AmpOperandPolicyOpInterface (AmpOperandPolicy.td) and the registration of
// its models on graph ops. amp-auto-cast registers them itself (through its
// dependent dialects), so no tool can forget to.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_H
#define AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_H

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

#include "compiler/Transforms/AmpOperandPolicy.h.inc"

namespace ampc {
void registerAmpOperandPolicyModels(mlir::DialectRegistry &registry);
} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_H
