//===- TrainStep.h - a model compiled into a training step ------*- C++ -*-===//
//
// amp-run compiles one imported model up to twice (the run's precision and,
// for the memory figures and --compare-fp32, f32), each into a train_step and
// a forward function that evaluates the test split with the same precision.
// What the host loop needs to know about the step comes with it, as the
// Program's StepInfo (amp-describe-step's graph.step_info).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_TRAINSTEP_H
#define AMPC_TOOLS_AMPRUN_TRAINSTEP_H

#include "compiler/Pipelines/Pipelines.h"
#include "runtime/Program.h"
#include "runtime/tooling/TrainData.h"
#include "tools/amp-run/AmpMemory.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ampc::tools {

struct StepCompileOptions {
  GraphBuildTrainingPassOptions training;
  std::optional<AmpAutoCastPassOptions> amp;        // none: f32
  std::optional<AmpLossScalePassOptions> lossScale; // none: the default
  InferencePipelineOptions lowering;
  std::optional<GraphDataParallelPassOptions> dataParallel; // none: 1 rank
  bool withEval = false; // also compile `forward` for the test split
};

struct CompiledStep {
  rt::StepInfo info;
  rt::FunctionInfo train;               // train_step
  std::optional<rt::FunctionInfo> eval; // forward, when asked for
  ArenaBytes trainArena;                // the planned arena of train_step
  uint64_t programHash = 0;             // of its computation (loadFunction)
};

/// The graph inputs of the imported @forward: what a batch must hold.
rt::Status inputSpecsOf(mlir::ModuleOp module, std::vector<InputSpec> &out);

/// Lowers `module` (the imported model) into the @forward that evaluates the
/// test split in the step's precision (`amp`; none: f32); returns failure
/// after the diagnostics were printed.
mlir::LogicalResult
lowerEvaluation(mlir::ModuleOp module, const InferencePipelineOptions &lowering,
                const std::optional<AmpAutoCastPassOptions> &amp);

/// Compiles `module` (the imported model, consumed) into `out`; returns
/// failure after the diagnostics were printed.
mlir::LogicalResult compileStep(mlir::OwningOpRef<mlir::ModuleOp> module,
                                const std::string &modelPath,
                                const StepCompileOptions &options,
                                CompiledStep &out);

/// Compiles the step (`main`) into `step` and, when it computes with AMP,
/// the f32 step beside it into `f32` (for the memory figures; with its
/// forward function when `f32Eval`), and adds both steps' figures to the
/// AMP report when one is asked for. Returns failure after the errors were
/// reported.
mlir::LogicalResult compileStepWithF32(mlir::OwningOpRef<mlir::ModuleOp> module,
                                       const std::string &modelPath,
                                       const StepCompileOptions &main,
                                       bool f32Eval, CompiledStep &step,
                                       CompiledStep &f32);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_TRAINSTEP_H
