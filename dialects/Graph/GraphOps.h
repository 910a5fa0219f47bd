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
} // namespace ampc::graph

#endif // AMPC_DIALECTS_GRAPH_GRAPHOPS_H
