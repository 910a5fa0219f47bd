//===- GraphOps.h - the graph dialect ---------------------------*- C++ -*-===//
//
// Declarations of the graph dialect (see GraphOps.td).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_GRAPHOPS_H
#define AMPC_DIALECTS_GRAPH_GRAPHOPS_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dialects/Graph/GraphDialect.h.inc"

#define GET_OP_CLASSES
#include "dialects/Graph/GraphOps.h.inc"

namespace ampc::graph {
/// Argument and result attributes of @forward.
inline constexpr llvm::StringLiteral kNameAttr = "graph.name";
inline constexpr llvm::StringLiteral kInitAttr = "graph.init";
inline constexpr llvm::StringLiteral kTrainableAttr = "graph.trainable";
/// Result attribute of @train_step: the index of the argument whose state
/// this result replaces after the step.
inline constexpr llvm::StringLiteral kUpdatesAttr = "graph.updates";
/// Function attribute of @train_step: the name of the loss result.
inline constexpr llvm::StringLiteral kLossAttr = "graph.loss";
/// Argument attribute of @train_step: optimizer or counter state.
inline constexpr llvm::StringLiteral kStateAttr = "graph.state";
} // namespace ampc::graph

#endif // AMPC_DIALECTS_GRAPH_GRAPHOPS_H
