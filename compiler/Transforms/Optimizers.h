//===- Optimizers.h - optimizer updates of graph-build-training -*- C++ -*-===//
//
// Maps the pass's optimizer options to one graph update op per parameter
// and names the state each optimizer keeps.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_OPTIMIZERS_H
#define AMPC_COMPILER_TRANSFORMS_OPTIMIZERS_H

#include "compiler/Transforms/Passes.h"

#include "mlir/IR/Builders.h"

#include <optional>
#include <string>

namespace ampc {

struct OptimizerConfig {
  std::string kind; // sgd | momentum | nesterov | adam | adamw | adagrad
  double lr, momentum, dampening, beta1, beta2;
  std::optional<double> epsilon, weightDecay; // unset: PyTorch's default
  double lrDecay;
  std::string schedule; // constant | step | cosine
  int64_t stepSize, totalSteps;
  double gamma, minLr;
};

/// The optimizer and schedule the pass's options give (checked by
/// checkPassOptions).
OptimizerConfig optimizerConfigOf(const GraphBuildTrainingPassOptions &o);

/// Names of the per-parameter state tensors ("velocity", "m", ...), all
/// starting at zero.
llvm::SmallVector<llvm::StringRef> optimizerState(const OptimizerConfig &c);

/// The learning rate of this step, from the step counter.
mlir::Value buildLearningRate(mlir::OpBuilder &b, mlir::Location loc,
                              const OptimizerConfig &c, mlir::Value step);

/// One update op; its results are the new parameter, then the new state in
/// optimizerState order.
mlir::Operation *buildUpdate(mlir::OpBuilder &b, mlir::Location loc,
                             const OptimizerConfig &c, mlir::Value lr,
                             mlir::Value step, mlir::Value param,
                             mlir::Value grad, mlir::ValueRange state);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_OPTIMIZERS_H
