//===- LossResult.h - which result of @forward is the loss ------*- C++ -*-===//
//
// amp-auto-cast (to keep the loss and what follows it in f32) and
// graph-build-training (to differentiate it) must agree on which result of
// @forward is the loss, so both ask here.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_LOSSRESULT_H
#define AMPC_COMPILER_TRANSFORMS_LOSSRESULT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace ampc {

/// A rank-0 tensor of a float type: the only shape a loss may have.
bool isFloatScalar(mlir::Type type);

/// The loss result when the user names none: the result named "loss", else
/// the only float-scalar result, else none (an inference graph).
std::optional<unsigned> defaultLossResult(mlir::func::FuncOp forward);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_LOSSRESULT_H
