//===- CompileAndRun.h - graph IR compiled and run on the CPU runtime -----===//
//
// Owned by the unit tests that compile hand-written graph functions with the
// real passes and run them: parse, run the caller's passes, write (and load)
// the Program; and open a one-thread Session on one of its functions.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNITTESTS_COMPILEANDRUN_H
#define AMPC_TEST_UNITTESTS_COMPILEANDRUN_H

#include "compiler/Target/ProgramWriter.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "TestDevice.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>

namespace ampc::unittest {

/// `mlir` parsed with the func, graph, amp and rt dialects (and what
/// `extendRegistry` adds), run through the passes `addPasses` adds and
/// written as Program bytes into `bytes`. Returns the diagnostics, one per
/// line ("parse: " first when `mlir` did not parse); "" when the Program was
/// written.
inline std::string writeProgramBytes(
    const std::string &mlir,
    llvm::function_ref<void(mlir::PassManager &)> addPasses, std::string &bytes,
    llvm::function_ref<void(mlir::DialectRegistry &)> extendRegistry =
        nullptr) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, graph::GraphDialect, amp::AmpDialect,
                  rtir::RtDialect>();
  if (extendRegistry)
    extendRegistry(registry);
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    error += (error.empty() ? "" : "\n") + d.str();
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(mlir, &ctx);
  if (!module)
    return "parse: " + error;
  mlir::PassManager pm(&ctx);
  addPasses(pm);
  if (mlir::failed(pm.run(*module)) ||
      mlir::failed(writeProgram(*module, bytes)))
    return error.empty() ? "failed without a diagnostic" : error;
  return "";
}

/// writeProgramBytes, then the Program loaded. A failure is a test failure
/// with the diagnostics, and gives an empty Program.
inline rt::ProgramInfo compileProgram(
    const std::string &mlir,
    llvm::function_ref<void(mlir::PassManager &)> addPasses,
    llvm::function_ref<void(mlir::DialectRegistry &)> extendRegistry =
        nullptr) {
  rt::ProgramInfo program;
  std::string bytes;
  if (std::string error =
          writeProgramBytes(mlir, addPasses, bytes, extendRegistry);
      !error.empty()) {
    ADD_FAILURE() << error;
    return program;
  }
  rt::Status s = rt::parseProgram(bytes, "test", program);
  EXPECT_TRUE(s.isOk()) << s.message();
  return program;
}

/// A one-thread Session of `fn` on the test device (TestDevice.h); null, and a test failure, when the runtime
/// cannot make one.
inline std::unique_ptr<rt::Session> openSession(const rt::FunctionInfo &fn) {
  std::unique_ptr<rt::Session> session;
  rt::Status s = rt::Session::create(fn, testSessionOptions(), session);
  EXPECT_TRUE(s.isOk()) << s.message();
  if (!s)
    return nullptr;
  return session;
}

} // namespace ampc::unittest

#endif // AMPC_TEST_UNITTESTS_COMPILEANDRUN_H
