//===- GradientBuilder.h - pieces the backward rules share ------*- C++ -*-===//
//
// A rule is a function from (op, builder, result grads) to operand grads;
// `GradientModel` turns one into an external model of GradientOpInterface.
// The helpers write the small graph-op chains gradients are made of.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AUTODIFF_GRADIENTBUILDER_H
#define AMPC_COMPILER_AUTODIFF_GRADIENTBUILDER_H

#include "dialects/Graph/GradientOpInterface.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace ampc::autodiff {

using GradientRule = llvm::LogicalResult (*)(
    mlir::Operation *op, mlir::OpBuilder &b, llvm::ArrayRef<mlir::Value> dys,
    llvm::SmallVectorImpl<mlir::Value> &dxs);

template <typename OpTy, GradientRule Rule>
struct GradientModel
    : graph::GradientOpInterface::ExternalModel<GradientModel<OpTy, Rule>,
                                                OpTy> {
  llvm::LogicalResult
  buildGradients(mlir::Operation *op, mlir::OpBuilder &b,
                 llvm::ArrayRef<mlir::Value> dys,
                 llvm::SmallVectorImpl<mlir::Value> &dxs) const {
    dxs.assign(op->getNumOperands(), mlir::Value());
    return Rule(op, b, dys, dxs);
  }
};

template <typename OpTy, GradientRule Rule>
void attach(mlir::MLIRContext *ctx) {
  OpTy::template attachInterface<GradientModel<OpTy, Rule>>(*ctx);
}

inline mlir::RankedTensorType typeOf(mlir::Value v) {
  return llvm::cast<mlir::RankedTensorType>(v.getType());
}

inline bool isFloat(mlir::Value v) {
  return llvm::isa<mlir::FloatType>(typeOf(v).getElementType());
}

/// A rank-0 constant of `elementType` (it broadcasts in binary ops).
mlir::Value scalar(mlir::OpBuilder &b, mlir::Location loc,
                   mlir::Type elementType, double value);

/// A constant of `type` with every element `value`.
mlir::Value splat(mlir::OpBuilder &b, mlir::Location loc,
                  mlir::RankedTensorType type, double value);

/// Sums `grad` over the dimensions numpy broadcasting added or stretched
/// to reach it from `shape`: the gradient of a broadcast.
mlir::Value sumToShape(mlir::OpBuilder &b, mlir::Location loc, mlir::Value grad,
                       llvm::ArrayRef<int64_t> shape);

mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      llvm::ArrayRef<int64_t> shape);

/// `v` broadcast to `to`'s type after reinserting the reduced `axes` as
/// size 1 when the reduction dropped them: the gradient of a reduction.
mlir::Value expandReduced(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                          mlir::RankedTensorType to,
                          llvm::ArrayRef<int64_t> axes, bool keepdims);

/// dx += dy-ish helpers that build one graph op.
mlir::Value add(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value sub(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value mul(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value div(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x,
                mlir::Value y);
mlir::Value neg(mlir::OpBuilder &b, mlir::Location loc, mlir::Value x);

} // namespace ampc::autodiff

#endif // AMPC_COMPILER_AUTODIFF_GRADIENTBUILDER_H
