//===- StepInfo.h - what the host needs to know about a step ----*- C++ -*-===//
//
// Stated by the compiler on @train_step (amp-describe-step's
// graph.step_info), read from the compiled step (TrainStep.h) or from a
// Program file (amp-exec), and used by the host loop (TrainLoop.h), which
// sees no MLIR. It travels in the Program, so the runtime defines it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_STEPINFO_H
#define AMPC_TOOLS_AMPRUN_STEPINFO_H

#include "runtime/Program.h"

namespace ampc::tools {

using StepInfo = rt::StepInfo;

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_STEPINFO_H
