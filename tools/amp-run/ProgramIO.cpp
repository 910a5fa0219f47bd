//===- ProgramIO.cpp - what amp-run writes of a compiled module -----------===//

#include "tools/amp-run/ProgramIO.h"
#include "tools/amp-run/Fail.h"

#include "compiler/Target/ProgramWriter.h"
#include "runtime/io/TensorFile.h"
#include "runtime/tooling/Fnv.h"

#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc::tools {

int printModule(mlir::ModuleOp module, const std::string &path) {
  std::string err;
  auto out = mlir::openOutputFile(path, &err);
  if (!out)
    return fail(err);
  module.print(out->os());
  out->keep();
  return 0;
}

int writeProgramFile(mlir::ModuleOp module, const std::string &path,
                     const ProgramWriteOptions &options) {
  std::string bytes;
  if (mlir::failed(writeProgram(module, bytes, options)))
    return 1;
  if (rt::Status s = rt::writeFileAtomically(path, bytes.data(), bytes.size());
      !s)
    return fail(s.message());
  return 0;
}

mlir::LogicalResult loadFunction(mlir::ModuleOp module, llvm::StringRef name,
                                 const std::string &modelPath,
                                 rt::FunctionInfo &out, uint64_t *hash,
                                 std::optional<rt::StepInfo> *step) {
  std::string bytes;
  if (hash) {
    // Of the computation: the same step of a model read from another path
    // (a moved directory, another machine's copy) has the same hash.
    ProgramWriteOptions computation;
    computation.locations = false;
    if (mlir::failed(writeProgram(module, bytes, computation)))
      return mlir::failure();
    Fnv1a64 h;
    h.add(bytes.data(), bytes.size());
    *hash = h.value;
  }
  if (mlir::failed(writeProgram(module, bytes)))
    return mlir::failure();
  rt::ProgramInfo program;
  if (rt::Status s = rt::parseProgram(bytes, modelPath, program); !s)
    return fail(s.message()), mlir::failure();
  if (step)
    *step = std::move(program.step);
  for (rt::FunctionInfo &f : program.functions)
    if (f.name == name) {
      out = std::move(f);
      return mlir::success();
    }
  return fail(modelPath + ": the compiled Program has no '" + name + "'"),
         mlir::failure();
}

} // namespace ampc::tools
