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

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

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

/// A dense f32 literal of `n` values spread over about [-0.5, 0.5], none
/// exact in f16 (so a rounded copy differs from its master), for the
/// initial values of the small training steps these tests write.
inline std::string spreadValues(int n, int seed) {
  std::string s = "dense<[";
  for (int i = 0; i < n; ++i) {
    double v = ((i * 37 + seed * 11) % 101 - 50) / 97.0 + 0.0001 * seed;
    s += (i ? ", " : "") + std::to_string(v);
  }
  return s + "]>";
}

/// Step `step` of a small classifier's training on `session`: inputs "x"
/// (8x4, f32) and "labels" (8, three classes), a batch that changes with
/// the step; then the run, and the f32 bits of output "loss" in `lossBits`.
inline rt::Status runClassifierStep(rt::Session &session, int step,
                                    uint32_t &lossBits) {
  std::vector<float> x(32);
  std::vector<int64_t> labels(8);
  for (int i = 0; i < 32; ++i)
    x[i] = static_cast<float>(((i * 7 + step * 5) % 23) - 11) / 7.0f;
  for (int i = 0; i < 8; ++i)
    labels[i] = (i + step) % 3;
  rt::Status s = session.setInput("x", {rt::DType::F32, {8, 4}, x.data()});
  if (s.isOk())
    s = session.setInput("labels", {rt::DType::I64, {8}, labels.data()});
  if (s.isOk())
    s = session.run();
  rt::TensorView loss;
  if (s.isOk())
    s = session.output("loss", loss);
  if (s.isOk())
    std::memcpy(&lossBits, loss.data, sizeof lossBits);
  return s;
}

} // namespace ampc::unittest

#endif // AMPC_TEST_UNITTESTS_COMPILEANDRUN_H
