//===- Passes.h - graph-level transformations -------------------*- C++ -*-===//
#ifndef AMPC_COMPILER_TRANSFORMS_PASSES_H
#define AMPC_COMPILER_TRANSFORMS_PASSES_H

#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace ampc {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

/// The name of the update counter argument.
inline constexpr llvm::StringLiteral kStepName = "ampc.step";

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_PASSES_H
