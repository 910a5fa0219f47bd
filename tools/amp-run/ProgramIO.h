//===- ProgramIO.h - what amp-run writes of a compiled module ---*- C++ -*-===//
//
// The three ways a compiled module leaves the compiler in amp-run: printed
// (--emit of an IR stage), written as a Program file (--emit=program), or
// serialized and parsed back into the runtime's FunctionInfo, exactly as
// amp-exec would load the file, to be run here.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_PROGRAMIO_H
#define AMPC_TOOLS_AMPRUN_PROGRAMIO_H

#include "compiler/Target/ProgramWriter.h"
#include "runtime/Program.h"

#include "mlir/IR/BuiltinOps.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ampc::tools {

/// Prints `module` to `path` ("-": stdout); returns the exit code after
/// printing any error.
int printModule(mlir::ModuleOp module, const std::string &path);

/// Writes `module` (lowered to rt) as a Program file, atomically; returns
/// the exit code after printing any error.
int writeProgramFile(mlir::ModuleOp module, const std::string &path,
                     const ProgramWriteOptions &options = {});

/// Serializes `module` (lowered to rt) and parses function `name` back into
/// `out`; `hash`, when given, gets the FNV-1a (64 bits) of the Program's
/// bytes without the kernels' locations (a model moved keeps its hash), and
/// `step` the Program's StepInfo (none in an inference Program). `modelPath`
/// prefixes the runtime's messages. Returns failure after printing the error.
mlir::LogicalResult loadFunction(mlir::ModuleOp module, llvm::StringRef name,
                                 const std::string &modelPath,
                                 rt::FunctionInfo &out,
                                 uint64_t *hash = nullptr,
                                 std::optional<rt::StepInfo> *step = nullptr);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_PROGRAMIO_H
