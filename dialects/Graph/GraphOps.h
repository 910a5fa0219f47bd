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
#include "dialects/Graph/GraphEnums.h"
#include "dialects/Graph/GraphTraits.h"
#include "dialects/Graph/OptimizerUpdateOpInterface.h"

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
/// Function attribute of @train_step, set when one optimizer update takes
/// the gradients of N > 1 steps (graph-build-training's accumulate=N): N.
inline constexpr llvm::StringLiteral kAccumulateStepsAttr =
    "graph.accumulate_steps";
/// Function attribute of @train_step, set when graph-data-parallel made it
/// for N > 1 ranks: N.
inline constexpr llvm::StringLiteral kWorldSizeAttr = "graph.world_size";
/// Argument attribute of @train_step: optimizer or counter state.
inline constexpr llvm::StringLiteral kStateAttr = "graph.state";
/// Op attribute: the type a low-precision (f16/bf16) contraction or
/// reduction accumulates in. Only f32 is valid: the IR says explicitly what
/// every backend does (Tensor Core semantics), so no pass or runtime has to
/// assume it.
inline constexpr llvm::StringLiteral kAccumulateAttr = "graph.accumulate";
/// Unit attribute of the graph.layer_norm an ONNX InstanceNormalization
/// becomes (over the spatial axes, one scale and shift per channel after
/// it): amp-auto-cast lets it follow its input, as autocast runs
/// instance_norm, where a LayerNormalization stays f32 at O1.
inline constexpr llvm::StringLiteral kInstanceNormAttr = "graph.instance_norm";
/// Op attributes that only guide the compiler's passes: the Program writer
/// leaves them out, as no kernel reads them.
inline constexpr llvm::StringLiteral kCompilerOnlyAttrs[] = {kInstanceNormAttr};
/// Function attribute of @train_step (amp-describe-step): a dictionary of
/// what a host training loop needs to know about the step, which the
/// Program writer copies into the Program's StepInfo. Its keys:
namespace step_info {
inline constexpr llvm::StringLiteral kLoss = "loss"; // the loss result
/// The step returns found_inf (a bool).
inline constexpr llvm::StringLiteral kChecksOverflow = "checks_overflow";
/// The loss scale when it is a constant, not state (f64).
inline constexpr llvm::StringLiteral kStaticScale = "static_scale";
/// Label input -> its class count / its loss's ignore_index (i64 each).
inline constexpr llvm::StringLiteral kClasses = "classes";
inline constexpr llvm::StringLiteral kIgnoreIndex = "ignore_index";
/// The parameters that are model weights, not state (names).
inline constexpr llvm::StringLiteral kWeights = "weights";
/// Weight -> the state holding its low-precision working copy (AMP O2).
inline constexpr llvm::StringLiteral kWorkingCopies = "working_copies";
/// Steps per optimizer update (i64 >= 1).
inline constexpr llvm::StringLiteral kAccumulate = "accumulate";
/// The ranks whose gradients each update averages (i64 >= 1); absent: 1
/// (a step that is not data-parallel does not carry it).
inline constexpr llvm::StringLiteral kWorldSize = "world_size";
} // namespace step_info
inline constexpr llvm::StringLiteral kStepInfoAttr = "graph.step_info";
/// Checks that `attr` is a step_info dictionary on a function.
mlir::LogicalResult verifyStepInfo(mlir::Operation *op, mlir::Attribute attr);
/// Op attribute (unit) of the scalar graph.constant that graph-build-training
/// seeds the backward pass with (d loss / d loss = 1): amp-loss-scale
/// replaces it by the loss scale. Canonicalization may fold it away, so
/// amp-loss-scale runs right after graph-build-training.
inline constexpr llvm::StringLiteral kLossSeedAttr = "graph.loss_seed";

/// True for a kernel body (its terminator aside) of an optimizer update and
/// a graph.cast of the update's first result: the update that also writes
/// the rounded working copy of the new parameter (convert-graph-to-rt).
bool isUpdateWithWorkingCopy(mlir::Block &body);

/// How the results of a kernel whose body is `body` (graph ops and a
/// terminator, as in rt.kernel) may overlay its operands: the facts the
/// memory planner plans by and a Program states (Kernel.aliasing).
enum class BodyAliasing {
  None,
  /// One result computed by Fusible ops only: element i of every operand is
  /// read before element i of the result is written, so the result may be
  /// an operand it reads for the last time.
  Elementwise,
  /// An optimizer update, alone or with its working copy: every result may
  /// overlay the state (or parameter) it replaces.
  InPlaceUpdate,
};
BodyAliasing aliasingOfBody(mlir::Block &body, unsigned numResults);

/// Sets graph.accumulate = f32 on `op` when it is Accumulating
/// (GraphTraits.td) and its (first) result is f16 or bf16; does nothing
/// otherwise.
void markAccumulation(mlir::Operation *op);
} // namespace ampc::graph

#endif // AMPC_DIALECTS_GRAPH_GRAPHOPS_H
