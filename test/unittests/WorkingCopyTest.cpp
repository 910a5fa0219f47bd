//===- WorkingCopyTest.cpp - working copies written by the update ---------===//
//
// graph-build-training turns the f16 working copy of an f32 parameter into
// state cast from the new master after the update. That must not change a
// single bit of training: the same O2 forward is trained with the marked
// casts and with the marks removed (a per-step cast at the top), through
// the real pipeline and the CPU runtime, and the losses, the masters and
// the working copies are compared bit for bit.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "runtime/Program.h"
#include "runtime/Session.h"
#include "test/unittests/TrainStepAB.h"
#include "test/unittests/runtime/ElementValue.h"

#include "mlir/Transforms/Passes.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace ampc;
using namespace ampc::unittest;

namespace {

/// A two-layer MLP as amp-auto-cast leaves it at O2, with its parameter
/// casts marked as working copies.
std::string o2Forward() {
  return classifierForward({{"w1", 24, 1}, {"b1", 6, 2}, {"w2", 18, 3}}) + R"(
  %xh = amp.cast %x : tensor<8x4xf32> to tensor<8x4xf16>
  %w1h = amp.cast %w1 {amp.working_copy} : tensor<24xf32> to tensor<24xf16>
  %b1h = amp.cast %b1 {amp.working_copy} : tensor<6xf32> to tensor<6xf16>
  %w2h = amp.cast %w2 {amp.working_copy} : tensor<18xf32> to tensor<18xf16>
  %w1m = graph.reshape %w1h : tensor<24xf16> to tensor<6x4xf16>
  %w2m = graph.reshape %w2h : tensor<18xf16> to tensor<3x6xf16>
  %h = graph.gemm %xh, %w1m, %b1h {trans_b = true, graph.accumulate = f32} : (tensor<8x4xf16>, tensor<6x4xf16>, tensor<6xf16>) -> tensor<8x6xf16>
  %r = graph.tanh %h : tensor<8x6xf16>
  %y = graph.gemm %r, %w2m {trans_b = true, graph.accumulate = f32} : (tensor<8x6xf16>, tensor<3x6xf16>) -> tensor<8x3xf16>
  %yf = amp.cast %y : tensor<8x3xf16> to tensor<8x3xf32>
  %loss, %lp = graph.softmax_cross_entropy %yf, %labels : (tensor<8x3xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x3xf32>)
  return %loss : tensor<f32>
}
)";
}

/// `mlir` through the training passes (momentum) and the lowering.
rt::ProgramInfo compile(const std::string &mlir, bool fuse, bool reuse) {
  auto addPasses = [&](mlir::PassManager &pm) {
    GraphBuildTrainingPassOptions training;
    training.optimizer = "momentum";
    training.lr = 0.5; // large, so that the f16 copies change every step
    // buildTrainingGraphPipeline after its ONNX conversion.
    pm.addPass(createGraphBuildTrainingPass(training));
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    pm.addPass(createAmpFoldCastsPass());
    InferencePipelineOptions lowering;
    lowering.fuse = fuse;
    lowering.reuseMemory = reuse;
    buildLoweringPipeline(pm, lowering);
  };
  return compileProgram(mlir, addPasses, [](mlir::DialectRegistry &registry) {
    registerGradientModels(registry);
  });
}

struct Trained {
  std::vector<uint32_t> losses;                    // f32 bits, per step
  std::vector<std::vector<uint8_t>> params;        // w1, b1, w2 after
  std::vector<std::vector<uint8_t>> workingCopies; // their .working, if any
};

Trained train(const rt::ProgramInfo &program, int steps) {
  Trained out;
  const rt::FunctionInfo *fn = program.find("train_step");
  if (!fn) {
    ADD_FAILURE() << "no train_step";
    return out;
  }
  std::unique_ptr<rt::Session> session = openSession(*fn);
  if (!session || !runClassifierSteps(*session, steps, out.losses))
    return out;
  for (const char *name : {"w1", "b1", "w2"}) {
    out.params.emplace_back();
    EXPECT_TRUE(paramBytes(*session, name, out.params.back())) << name;
    std::vector<uint8_t> working;
    if (paramBytes(*session, std::string(name) + ".working", working))
      out.workingCopies.push_back(std::move(working));
  }
  return out;
}

TEST(WorkingCopy, UpdateWrittenCopyTrainsBitForBitLikeThePerStepCast) {
  const int steps = 8;
  std::string marked = o2Forward();
  std::string unmarked = marked;
  for (size_t at;
       (at = unmarked.find(" {amp.working_copy}")) != std::string::npos;)
    unmarked.erase(at, std::strlen(" {amp.working_copy}"));
  ASSERT_NE(marked, unmarked);

  Trained base = train(compile(unmarked, true, true), steps);
  ASSERT_EQ(base.losses.size(), static_cast<size_t>(steps));
  // Without the marks there is no working-copy state.
  EXPECT_TRUE(base.workingCopies.empty());
  // Training moves: the test compares runs that do something.
  EXPECT_NE(base.losses.front(), base.losses.back());

  for (bool fuse : {true, false})
    for (bool reuse : {true, false}) {
      SCOPED_TRACE(std::string(fuse ? "fused" : "unfused") +
                   (reuse ? ", memory reused" : ", no memory reuse"));
      Trained t = train(compile(marked, fuse, reuse), steps);
      EXPECT_EQ(t.losses, base.losses);
      EXPECT_EQ(t.params, base.params);
      // Each working copy is its master rounded to f16 (nearest even).
      ASSERT_EQ(t.workingCopies.size(), 3u);
      for (size_t p = 0; p < 3; ++p) {
        size_t n = t.params[p].size() / 4;
        ASSERT_EQ(t.workingCopies[p].size(), n * 2);
        for (size_t i = 0; i < n; ++i) {
          uint16_t want;
          rt::test::writeElement(
              &want, rt::DType::F16,
              rt::test::readElement(t.params[p].data() + 4 * i,
                                    rt::DType::F32));
          uint16_t got;
          std::memcpy(&got, t.workingCopies[p].data() + 2 * i, 2);
          EXPECT_EQ(got, want) << "parameter " << p << " element " << i;
        }
      }
    }
}

} // namespace
