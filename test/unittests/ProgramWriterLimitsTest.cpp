//===- ProgramWriterLimitsTest.cpp - what no Program may hold -------------===//
//
// The Program writer refuses an arena or a constant larger than a Program
// may have (rt::kMaxProgramBytes) with a message giving the size, instead
// of expanding a splat into terabytes; the runtime's loader refuses the
// same sizes, so what is written can be read.
//
//===----------------------------------------------------------------------===//

#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Target/ProgramWriter.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <string>

using namespace ampc;

namespace {

/// Lowers `source` (with `lower`) and writes it; returns the diagnostics,
/// "" when the Program was written.
std::string writeErrors(const std::string &source, bool lower) {
  mlir::DialectRegistry registry;
  registry
      .insert<mlir::func::FuncDialect, graph::GraphDialect, rtir::RtDialect>();
  mlir::MLIRContext ctx(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string error;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    error += d.str();
    return mlir::success();
  });
  auto module = mlir::parseSourceString<mlir::ModuleOp>(source, &ctx);
  if (!module)
    return "parse: " + error;
  mlir::PassManager pm(&ctx);
  if (lower)
    buildLoweringPipeline(pm, {});
  std::string bytes;
  if (mlir::failed(pm.run(*module)) ||
      mlir::failed(writeProgram(*module, bytes)))
    return error;
  return "";
}

} // namespace

TEST(ProgramWriterLimits, RefusesAnArenaNoProgramMayHave) {
  std::string src = "func.func @f() attributes {rt.arena_size = "
                    "8796093022208 : i64} { return }";
  EXPECT_EQ(writeErrors(src, false),
            "function 'f' has an arena of 8 TiB (8796093022208 bytes), more "
            "than the 4 TiB a Program may have");
  src = "func.func @f() attributes {rt.arena_size = 4398046511104 : i64} "
        "{ return }";
  EXPECT_EQ(writeErrors(src, false), "");
}

TEST(ProgramWriterLimits, RefusesASplatNoProgramMayHave) {
  // An 8 TiB constant output: no arena, one splat the writer would expand.
  std::string src = R"(
    func.func @f() -> (tensor<2199023255552xf32> {graph.name = "y"}) {
      %c = graph.constant dense<1.0> : tensor<2199023255552xf32>
      return %c : tensor<2199023255552xf32>
    })";
  EXPECT_EQ(writeErrors(src, true),
            "'graph.constant' op has a value of 8 TiB (8796093022208 bytes) "
            "for 'tensor<2199023255552xf32>', more than the 4 TiB a Program "
            "value may have");
}
