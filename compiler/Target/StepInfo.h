//===- StepInfo.h - graph.step_info as the runtime's StepInfo ---*- C++ -*-===//
//
// amp-describe-step states a training step's facts on @train_step; this
// reads them back as the runtime's StepInfo, for the Program writer and for
// amp-run, which runs the step it compiled without writing a file.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TARGET_STEPINFO_H
#define AMPC_COMPILER_TARGET_STEPINFO_H

#include "runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <optional>

namespace ampc {

/// The step information `f` carries (graph.step_info, already verified),
/// or none when it carries none.
std::optional<rt::StepInfo> readStepInfo(mlir::func::FuncOp f);

} // namespace ampc

#endif // AMPC_COMPILER_TARGET_STEPINFO_H
