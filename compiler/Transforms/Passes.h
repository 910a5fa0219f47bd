//===- Passes.h - graph-level transformations -------------------*- C++ -*-===//
#ifndef AMPC_COMPILER_TRANSFORMS_PASSES_H
#define AMPC_COMPILER_TRANSFORMS_PASSES_H

#include "compiler/Transforms/OptionalNumber.h"
#include "compiler/Transforms/PassEnums.h"
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
/// Gradient accumulation's count of the steps since the last update.
inline constexpr llvm::StringLiteral kMicroStepName = "ampc.micro_step";
/// The suffix of a parameter's accumulated gradient (`<p>.grad_sum`).
inline constexpr llvm::StringLiteral kGradSumSuffix = ".grad_sum";
/// The suffix of a weight's O2 working copy state (`<w>.working`).
inline constexpr llvm::StringLiteral kWorkingCopySuffix = ".working";
/// The result amp-loss-scale adds: whether a gradient overflowed.
inline constexpr llvm::StringLiteral kFoundInfName = "found_inf";

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_PASSES_H
