//===- MemoryBudget.h - sizes convert-graph-to-rt refuses -------*- C++ -*-===//
//
// Before lowering, every value of a function must have a size int64 can
// count and, with a budget, fit in it; after planning, so must the arena.
// Errors name the value (ONNX node, graph input or parameter), its type and
// its size, or the arena's size and the function's largest values.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYBUDGET_H
#define AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYBUDGET_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cstdint>

namespace ampc {

/// Checks the arguments and op results of `func` (graph form). A budget of
/// 0 is none: only sizes that overflow int64 fail.
mlir::LogicalResult checkValueSizes(mlir::func::FuncOp func, uint64_t budget);

/// Checks the planned arena of `func` (rt form) against `budget` (0: none).
mlir::LogicalResult checkArena(mlir::func::FuncOp func, uint64_t budget);

} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYBUDGET_H
