//===- ProgramWriterStepInfoTest.cpp - graph.step_info into a Program -----===//
//
// The Program writer copies the graph.step_info of the function carrying
// it (amp-describe-step puts it on @train_step) into the Program's
// StepInfo, which amp-exec's host loop reads; a Program describes one step.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/ProgramWriter.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/Program.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

#include <string>

using namespace ampc;

namespace {

constexpr const char *kInfo =
    "graph.step_info = {accumulate = 4 : i64, checks_overflow = true, "
    "classes = {y = 10 : i64}, ignore_index = {y = -100 : i64}, loss = "
    "\"loss\", static_scale = 5.120000e+02 : f64, weights = [\"b\", \"w\"], "
    "working_copies = {w = \"w.working\"}}";

/// Writes `source` (rt form) and reads the bytes back; returns the
/// diagnostics, "" when both succeeded.
std::string roundTrip(const std::string &source, rt::ProgramInfo &out) {
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
  std::string bytes;
  if (mlir::failed(writeProgram(*module, bytes)))
    return error;
  rt::Status s = rt::parseProgram(bytes, "test", out);
  return s.isOk() ? "" : s.message();
}

TEST(ProgramWriterStepInfo, CopiesTheStepsFacts) {
  rt::ProgramInfo p;
  // The runtime checks every name against the function's bindings.
  std::string src = std::string("func.func @train_step() attributes "
                                "{rt.arena_size = 320 : i64, ") +
                    kInfo + R"(} {
      %y = rt.input "y" at 0 : tensor<4xi64>
      %w = rt.param "w" at 64 {init = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
      %b = rt.param "b" at 128 {init = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
      %ww = rt.param "w.working" at 192 {init = dense<1.0> : tensor<2xf16>} : tensor<2xf16>
      %l = rt.input "l" at 256 : tensor<f32>
      rt.output "loss" %l : tensor<f32>
      return
    })";
  ASSERT_EQ(roundTrip(src, p), "");
  ASSERT_TRUE(p.step);
  const rt::StepInfo &s = *p.step;
  EXPECT_EQ(s.function, "train_step");
  EXPECT_EQ(s.loss, "loss");
  EXPECT_TRUE(s.checksOverflow);
  EXPECT_EQ(s.staticScale, 512);
  EXPECT_EQ(s.classes, (std::map<std::string, int64_t>{{"y", 10}}));
  EXPECT_EQ(s.ignoreIndex, (std::map<std::string, int64_t>{{"y", -100}}));
  EXPECT_EQ(s.weights, (std::set<std::string>{"b", "w"}));
  EXPECT_EQ(s.workingCopies,
            (std::map<std::string, std::string>{{"w", "w.working"}}));
  EXPECT_EQ(s.accumulate, 4);
}

TEST(ProgramWriterStepInfo, NoStepInAnInferenceProgram) {
  rt::ProgramInfo p;
  ASSERT_EQ(roundTrip("func.func @forward() attributes {rt.arena_size = 0 : "
                      "i64} { return }",
                      p),
            "");
  EXPECT_FALSE(p.step);
}

TEST(ProgramWriterStepInfo, RefusesTwoSteps) {
  rt::ProgramInfo p;
  std::string f = std::string("attributes {rt.arena_size = 0 : i64, ") + kInfo +
                  "} { return }\n";
  EXPECT_EQ(roundTrip("func.func @a() " + f + "func.func @b() " + f, p),
            "carries graph.step_info as @a does; a Program describes one "
            "training step");
}

} // namespace
