//===- Gradients.h - the backward rules of the graph ops --------*- C++ -*-===//
//
// Attaches GradientOpInterface to every differentiable graph and amp op.
// Each family file holds the rules of one group of ops.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_AUTODIFF_GRADIENTS_H
#define AMPC_COMPILER_AUTODIFF_GRADIENTS_H

namespace mlir {
class DialectRegistry;
class MLIRContext;
} // namespace mlir

namespace ampc {

/// Registers the gradient models; they attach when the graph (or amp)
/// dialect loads.
void registerGradientModels(mlir::DialectRegistry &registry);

namespace autodiff {
void attachElementwiseGradients(mlir::MLIRContext *ctx);
void attachContractionGradients(mlir::MLIRContext *ctx);
void attachReductionGradients(mlir::MLIRContext *ctx);
void attachNormalizationGradients(mlir::MLIRContext *ctx);
void attachMovementGradients(mlir::MLIRContext *ctx);
void attachAmpGradients(mlir::MLIRContext *ctx);
} // namespace autodiff

} // namespace ampc

#endif // AMPC_COMPILER_AUTODIFF_GRADIENTS_H
