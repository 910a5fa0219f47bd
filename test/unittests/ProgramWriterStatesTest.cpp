//===- ProgramWriterStatesTest.cpp - what a Program states explicitly ----===//
//
// The Program writer copies the graph.step_info of the function carrying
// it (amp-describe-step puts it on @train_step) into the Program's
// StepInfo, which amp-exec's host loop reads; a Program describes one step.
// Kernels carry every attribute their graph op has a default for, so the
// runtime need not restate ODS's defaults, and how the memory planner laid
// their outputs over their inputs (Kernel.aliasing).
//
//===----------------------------------------------------------------------===//

#include "CompileAndRun.h"
#include "compiler/Pipelines/Pipelines.h"
#include "runtime/program.pb.h"

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
  std::string bytes;
  std::string error = unittest::writeProgramBytes(
      source, [](mlir::PassManager &) {}, bytes);
  if (!error.empty())
    return error;
  rt::Status s = rt::parseProgram(bytes, "test", out);
  return s.isOk() ? "" : s.message();
}

/// A training module in rt form: @train_step (its parameter w, f32
/// [[1, 2]]) and, when `evaluation` is given, an evaluation function whose
/// body `evaluation` is (amp-run puts @forward beside the step so).
std::string stepWithEvaluation(const std::string &evaluation) {
  std::string step = std::string("func.func @train_step() attributes "
                                 "{rt.arena_size = 320 : i64, ") +
                     kInfo + R"(} {
      %y = rt.input "y" at 0 : tensor<4xi64>
      %w = rt.param "w" at 64 {init = dense<[[1.0, 2.0]]> : tensor<1x2xf32>} : tensor<1x2xf32>
      %b = rt.param "b" at 128 {init = dense<0.0> : tensor<2xf32>} : tensor<2xf32>
      %ww = rt.param "w.working" at 192 {init = dense<1.0> : tensor<2xf16>} : tensor<2xf16>
      %l = rt.input "l" at 256 : tensor<f32>
      rt.output "loss" %l : tensor<f32>
      return
    }
)";
  return step + evaluation;
}

TEST(ProgramWriterStates, CopiesTheStepsFacts) {
  rt::ProgramInfo p;
  // The runtime checks every name against the function's bindings.
  std::string src = stepWithEvaluation("");
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

TEST(ProgramWriterStates, NoStepInAnInferenceProgram) {
  rt::ProgramInfo p;
  ASSERT_EQ(roundTrip("func.func @forward() attributes {rt.arena_size = 0 : "
                      "i64} { return }",
                      p),
            "");
  EXPECT_FALSE(p.step);
}

TEST(ProgramWriterStates, RefusesTwoSteps) {
  rt::ProgramInfo p;
  std::string f = std::string("attributes {rt.arena_size = 0 : i64, ") + kInfo +
                  "} { return }\n";
  EXPECT_EQ(roundTrip("func.func @a() " + f + "func.func @b() " + f, p),
            "carries graph.step_info as @a does; a Program describes one "
            "training step");
}

/// An evaluation function of the step's batch (y, l) and a parameter
/// `param` of `type`, which it outputs.
std::string evaluation(const std::string &param, const std::string &type) {
  return "func.func @forward() attributes {rt.arena_size = 192 : i64, "
         "rt.params_from_step} {\n"
         "  %y = rt.input \"y\" at 64 : tensor<4xi64>\n"
         "  %l = rt.input \"l\" at 128 : tensor<f32>\n"
         "  %w = rt.param \"" +
         param + "\" at 0 {init = dense<0.0> : " + type + "} : " + type +
         "\n  rt.output \"w\" %w : " + type + "\n  return\n}\n";
}

TEST(ProgramWriterStates, TheEvaluationTakesItsParamsFromTheStep) {
  std::string bytes;
  // In its own precision: f16, as AMP evaluates.
  ASSERT_EQ(unittest::writeProgramBytes(
                stepWithEvaluation(evaluation("w", "tensor<1x2xf16>")),
                [](mlir::PassManager &) {}, bytes),
            "");
  rt::proto::Program program;
  ASSERT_TRUE(program.ParseFromString(bytes));
  ASSERT_EQ(program.functions_size(), 2);
  EXPECT_EQ(program.version(), rt::kProgramVersion);
  const rt::proto::Function &step = program.functions(0);
  const rt::proto::Function &forward = program.functions(1);
  EXPECT_FALSE(step.params_from_step());
  EXPECT_EQ(step.params(0).init().size(), 8u);
  // The step's weights are stored once.
  ASSERT_TRUE(forward.params_from_step());
  ASSERT_EQ(forward.params_size(), 1);
  EXPECT_EQ(forward.params(0).init(), "");
  rt::ProgramInfo info;
  rt::Status s = rt::parseProgram(bytes, "test", info);
  ASSERT_TRUE(s.isOk()) << s.message();
  EXPECT_TRUE(info.find("forward")->paramsFromStep);
}

TEST(ProgramWriterStates, AProgramWithoutItIsOfVersion3) {
  // So that a step's bytes, which checkpoints record a hash of, stay what
  // version 3 made them.
  std::string bytes;
  ASSERT_EQ(unittest::writeProgramBytes(
                stepWithEvaluation(""), [](mlir::PassManager &) {}, bytes),
            "");
  rt::proto::Program program;
  ASSERT_TRUE(program.ParseFromString(bytes));
  EXPECT_EQ(program.version(), 3u);
}

TEST(ProgramWriterStates, RefusesAnEvaluationTheStepCannotFill) {
  rt::ProgramInfo p;
  EXPECT_EQ(roundTrip(evaluation("w", "tensor<1x2xf32>"), p),
            "@forward takes its parameters from the training step "
            "(rt.params_from_step), but no function of the module carries "
            "graph.step_info");
  EXPECT_EQ(
      roundTrip(stepWithEvaluation(evaluation("v", "tensor<1x2xf32>")), p),
      "parameter 'v' of @forward comes from the training step, which "
      "has no parameter of that name");
  EXPECT_EQ(roundTrip(stepWithEvaluation(evaluation("w", "tensor<2xf32>")), p),
            "parameter 'w' of @forward has the type 'tensor<2xf32>', but "
            "the training step's has 'tensor<1x2xf32>'");
}

/// Lowers `source` (graph form) and writes it; the Program's first
/// function.
rt::proto::Function lowerAndWrite(const std::string &source) {
  std::string bytes;
  EXPECT_EQ(unittest::writeProgramBytes(
                source,
                [](mlir::PassManager &pm) { buildLoweringPipeline(pm, {}); },
                bytes),
            "");
  rt::proto::Program program;
  EXPECT_TRUE(program.ParseFromString(bytes) && program.functions_size() == 1);
  return program.functions_size() ? program.functions(0)
                                  : rt::proto::Function();
}

TEST(ProgramWriterStates, EveryDefaultedAttribute) {
  // leaky_relu's alpha and gelu's approximate are left to their defaults
  // in the IR; fused, each is a step of one kernel.
  rt::proto::Function f = lowerAndWrite(R"(
    func.func @forward(%x: tensor<4xf32> {graph.name = "x"})
        -> (tensor<4xf32> {graph.name = "y"}) {
      %0 = graph.leaky_relu %x : tensor<4xf32>
      %1 = graph.gelu %0 : tensor<4xf32>
      return %1 : tensor<4xf32>
    })");
  ASSERT_EQ(f.kernels_size(), 1);
  const rt::proto::Kernel &k = f.kernels(0);
  ASSERT_EQ(k.steps_size(), 2);
  ASSERT_EQ(k.steps(0).op(), "leaky_relu");
  ASSERT_TRUE(k.steps(0).attrs().count("alpha"));
  EXPECT_EQ(k.steps(0).attrs().at("alpha").f(), 0.01);
  ASSERT_EQ(k.steps(1).op(), "gelu");
  ASSERT_TRUE(k.steps(1).attrs().count("approximate"));
  EXPECT_EQ(k.steps(1).attrs().at("approximate").s(), "none");
}

TEST(ProgramWriterStates, EachKernelsAliasing) {
  // A fused chain (in place over x), a gemm, and an sgd update (over w).
  rt::proto::Function f = lowerAndWrite(R"(
    func.func @forward(%x: tensor<2x2xf32> {graph.name = "x"},
        %w: tensor<2x2xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<2x2xf32>},
        %lr: tensor<f32> {graph.name = "lr"})
        -> (tensor<2x2xf32> {graph.name = "y"}, tensor<2x2xf32> {graph.name = "w2"}) {
      %0 = graph.exp %x : tensor<2x2xf32>
      %1 = graph.relu %0 : tensor<2x2xf32>
      %2 = graph.gemm %1, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      %3 = graph.sgd_update %lr, %w, %2 : (tensor<f32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
      return %2, %3 : tensor<2x2xf32>, tensor<2x2xf32>
    })");
  std::map<std::string, int> aliasing;
  for (const rt::proto::Kernel &k : f.kernels())
    aliasing[k.kind()] = k.aliasing();
  EXPECT_EQ(aliasing,
            (std::map<std::string, int>{
                {"fused", rt::proto::ALIASING_ELEMENTWISE},
                {"gemm", rt::proto::ALIASING_NONE},
                {"sgd_update", rt::proto::ALIASING_IN_PLACE_UPDATE}}));
}

} // namespace
