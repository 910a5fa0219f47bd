//===- ProgramWriter.h - rt dialect -> Program ------------------*- C++ -*-===//
//
// Serializes the rt form of a module (after convert-graph-to-rt) into the
// runtime's Program (runtime/program.proto): one Program function per
// func.func, values with their arena offsets or constant data, kernels with
// their graph op attributes, fused kernels as step lists; the StepInfo of
// the function that carries graph.step_info (amp-describe-step).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_TARGET_PROGRAMWRITER_H
#define AMPC_COMPILER_TARGET_PROGRAMWRITER_H

#include "runtime/DType.h"
#include "runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"

#include <optional>
#include <string>

namespace ampc {

struct ProgramWriteOptions {
  // Parameters whose initial value is not a splat of a nonzero value (the
  // weights, their working copies, zero optimizer state) are written
  // without it, and the Program is marked so: a runner initializes them.
  bool omitWeights = false;
  // Each kernel names the ONNX node(s) it comes from, or the model file,
  // for the runtime's messages. Without them the bytes are the step's
  // computation alone, wherever the model was read from (the hash a
  // checkpoint and the ranks of a data-parallel run compare).
  bool locations = true;
};

/// Serializes `module` to Program bytes. On failure emits an error at the
/// offending op and returns failure.
mlir::LogicalResult writeProgram(mlir::ModuleOp module, std::string &bytes,
                                 const ProgramWriteOptions &options = {});

/// The runtime dtype of an element type; none when a Program cannot hold
/// it. (Tools that feed a compiled function use it to type their buffers.)
std::optional<rt::DType> runtimeDType(mlir::Type t);

} // namespace ampc

#endif // AMPC_COMPILER_TARGET_PROGRAMWRITER_H
