//===- MemoryPlan.h - arena offsets for an rt function ----------*- C++ -*-===//
//
// Assigns every stored value of an rt function a byte offset in one arena,
// reusing the bytes of dead values, and sets the function's arena size.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYPLAN_H
#define AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYPLAN_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace ampc {

/// Plans `func` (in rt form, offsets still unset). With `reuse` false no
/// bytes are shared. Fails, naming the function, when the arena would need
/// more bytes than int64 can count (every value's own size must fit).
mlir::LogicalResult planMemory(mlir::func::FuncOp func, bool reuse);

} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_GRAPHTORT_MEMORYPLAN_H
