//===- FuseLossGradientTest.cpp - one loss kernel trains the same bits ----===//
//
// graph-fuse-loss-gradient makes softmax_cross_entropy and its gradient one
// kernel that never stores the log-probabilities, and writes the f16
// gradient an amp.cast made of the f32 one. It computes what the two
// kernels and the cast compute, so training must not change by a single
// bit: small classifier steps (an f16 GEMM and an f32 loss with class
// weights and an ignored class; an f32 one with reduction "sum") are
// trained through the real passes and the CPU runtime with and without the
// pass, and the losses and parameters are compared.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "test/unittests/CompileAndRun.h"

#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace ampc;
using namespace ampc::unittest;

namespace {

/// O1's form: the GEMM in f16, the loss in f32 (class weights, label 1
/// ignored), a cast at each border.
std::string f16Forward() {
  return R"(
func.func @forward(%x: tensor<8x4xf32> {graph.name = "x"},
                   %labels: tensor<8xi64> {graph.name = "labels"},
                   %w1: tensor<12xf32> {graph.name = "w1", graph.trainable = true, graph.init = )" +
         spreadValues(12, 1) + R"( : tensor<12xf32>})
    -> (tensor<f32> {graph.name = "loss"}) {
  %xh = amp.cast %x : tensor<8x4xf32> to tensor<8x4xf16>
  %w1v = amp.cast %w1 : tensor<12xf32> to tensor<12xf16>
  %w1h = graph.reshape %w1v : tensor<12xf16> to tensor<3x4xf16>
  %y = graph.gemm %xh, %w1h {trans_b = true, graph.accumulate = f32} : (tensor<8x4xf16>, tensor<3x4xf16>) -> tensor<8x3xf16>
  %yf = amp.cast %y : tensor<8x3xf16> to tensor<8x3xf32>
  %cw = graph.constant dense<[1.0, 0.5, 2.0]> : tensor<3xf32>
  %loss, %lp = graph.softmax_cross_entropy %yf, %labels, %cw {ignore_index = 1 : i64} : (tensor<8x3xf32>, tensor<8xi64>, tensor<3xf32>) -> (tensor<f32>, tensor<8x3xf32>)
  return %loss : tensor<f32>
}
)";
}

/// All f32, reduction "sum".
std::string f32Forward() {
  return R"(
func.func @forward(%x: tensor<8x4xf32> {graph.name = "x"},
                   %labels: tensor<8xi64> {graph.name = "labels"},
                   %w1: tensor<12xf32> {graph.name = "w1", graph.trainable = true, graph.init = )" +
         spreadValues(12, 2) + R"( : tensor<12xf32>})
    -> (tensor<f32> {graph.name = "loss"}) {
  %w1h = graph.reshape %w1 : tensor<12xf32> to tensor<3x4xf32>
  %y = graph.gemm %x, %w1h {trans_b = true} : (tensor<8x4xf32>, tensor<3x4xf32>) -> tensor<8x3xf32>
  %loss, %lp = graph.softmax_cross_entropy %y, %labels {reduction = "sum"} : (tensor<8x3xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x3xf32>)
  return %loss : tensor<f32>
}
)";
}

/// The training step (momentum) with or without graph-fuse-loss-gradient,
/// lowered without fusion so each op is a kernel of its own.
rt::ProgramInfo compile(const std::string &forward, bool fuse) {
  auto addPasses = [&](mlir::PassManager &pm) {
    GraphBuildTrainingPassOptions training;
    training.optimizer = "momentum";
    training.lr = 0.5;
    pm.addPass(createGraphBuildTrainingPass(training));
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    pm.addPass(createAmpFoldCastsPass());
    if (fuse)
      pm.addPass(createGraphFuseLossGradientPass());
    InferencePipelineOptions lowering;
    lowering.fuse = false;
    buildLoweringPipeline(pm, lowering);
  };
  return compileProgram(forward, addPasses,
                        [](mlir::DialectRegistry &registry) {
                          registerGradientModels(registry);
                        });
}

struct Trained {
  std::vector<uint32_t> losses; // f32 bits, per step
  std::vector<uint8_t> weights; // w1 after
};

Trained train(const rt::FunctionInfo &fn, int steps) {
  Trained out;
  std::unique_ptr<rt::Session> session = openSession(fn);
  if (!session)
    return out;
  for (int step = 0; step < steps; ++step) {
    uint32_t bits = 0;
    rt::Status s = runClassifierStep(*session, step, bits);
    EXPECT_TRUE(s.isOk()) << "step " << step << ": " << s.message();
    if (!s)
      return out;
    out.losses.push_back(bits);
  }
  rt::TensorView v;
  EXPECT_TRUE(session->param("w1", v).isOk());
  auto *p = static_cast<const uint8_t *>(v.data);
  out.weights.assign(p, p + v.byteSize());
  return out;
}

int64_t kernelsOfKind(const rt::FunctionInfo &fn, const char *kind) {
  return std::count_if(fn.kernels.begin(), fn.kernels.end(),
                       [&](const rt::KernelInfo &k) { return k.kind == kind; });
}

void expectSameTraining(const std::string &forward, int castsSaved) {
  const int steps = 8;
  rt::ProgramInfo apart = compile(forward, false),
                  fused = compile(forward, true);
  const rt::FunctionInfo *a = apart.find("train_step");
  const rt::FunctionInfo *b = fused.find("train_step");
  ASSERT_TRUE(a && b);
  // The loss and its gradient are one kernel (run without the pass, this
  // test fails here: tried), which also took the gradient's cast.
  EXPECT_EQ(kernelsOfKind(*a, "softmax_cross_entropy_with_grad"), 0);
  EXPECT_EQ(kernelsOfKind(*b, "softmax_cross_entropy_with_grad"), 1);
  EXPECT_EQ(kernelsOfKind(*b, "softmax_cross_entropy"), 0);
  EXPECT_EQ(kernelsOfKind(*b, "softmax_cross_entropy_grad"), 0);
  EXPECT_EQ(kernelsOfKind(*b, "cast"), kernelsOfKind(*a, "cast") - castsSaved);

  Trained base = train(*a, steps), once = train(*b, steps);
  ASSERT_EQ(base.losses.size(), static_cast<size_t>(steps));
  // Training moves: the comparison is of runs that do something.
  EXPECT_NE(base.losses.front(), base.losses.back());
  EXPECT_EQ(once.losses, base.losses);
  EXPECT_EQ(once.weights, base.weights);
}

TEST(FuseLossGradient, F16GradientWithWeightsAndIgnoredLabelTrainsTheSameBits) {
  expectSameTraining(f16Forward(), 1);
}

TEST(FuseLossGradient, F32SumTrainsTheSameBits) {
  expectSameTraining(f32Forward(), 0);
}

} // namespace
