//===- Passes.h - ampc conversion passes ------------------------*- C++ -*-===//
//
// Declarations and registration of the conversion passes (Passes.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_PASSES_H
#define AMPC_COMPILER_CONVERSION_PASSES_H

#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

namespace ampc {
#define GEN_PASS_DECL
#include "compiler/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Conversion/Passes.h.inc"
} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_PASSES_H
