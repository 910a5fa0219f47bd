//===- TrainStepAB.h - one training step with and without a pass ----------===//
//
// Owned by the unit tests that check a change to the step changes no bit
// of training: the step of a hand-written @forward compiled with the real
// passes (and the pass under test or not), trained on the small classifier
// batches of CompileAndRun.h, its parameters read, its kernels counted.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNITTESTS_TRAINSTEPAB_H
#define AMPC_TEST_UNITTESTS_TRAINSTEPAB_H

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/Passes.h"
#include "test/unittests/CompileAndRun.h"

#include "mlir/Transforms/Passes.h"

#include <algorithm>
#include <initializer_list>
#include <string>

namespace ampc::unittest {

/// A trainable f32 vector of the classifier's @forward: its name, element
/// count and the seed of its spreadValues initial values.
struct TrainableVector {
  const char *name;
  int elements;
  int seed;
};

/// The signature of a classifier's @forward as runClassifierStep feeds it
/// (x 8x4 f32, labels 8 i64, output "loss"), with the trainable vectors
/// `params` as its other arguments, up to and with its body's "{".
inline std::string
classifierForward(std::initializer_list<TrainableVector> params) {
  std::string s = "\nfunc.func @forward(%x: tensor<8x4xf32> {graph.name = "
                  "\"x\"},\n    %labels: tensor<8xi64> {graph.name = "
                  "\"labels\"}";
  for (const TrainableVector &v : params) {
    std::string type = "tensor<" + std::to_string(v.elements) + "xf32>";
    s += std::string(",\n    %") + v.name + ": " + type + " {graph.name = \"" +
         v.name + "\", graph.trainable = true, graph.init = " +
         spreadValues(v.elements, v.seed) + " : " + type + "}";
  }
  return s + ")\n    -> (tensor<f32> {graph.name = \"loss\"}) {\n";
}

/// The training step of `forward` (momentum, lr 0.5): built, folded and
/// shared as the training pipeline does up to amp-fold-casts, then the
/// passes `extra` adds, lowered without fusion so that each op is a kernel
/// of its own.
inline rt::ProgramInfo
compileTrainStep(const std::string &forward,
                 llvm::function_ref<void(mlir::PassManager &)> extra) {
  auto addPasses = [&](mlir::PassManager &pm) {
    GraphBuildTrainingPassOptions training;
    training.optimizer = "momentum";
    training.lr = 0.5;
    pm.addPass(createGraphBuildTrainingPass(training));
    pm.addPass(mlir::createCanonicalizerPass());
    pm.addPass(mlir::createCSEPass());
    pm.addPass(createAmpFoldCastsPass());
    extra(pm);
    InferencePipelineOptions lowering;
    lowering.fuse = false;
    buildLoweringPipeline(pm, lowering);
  };
  return compileProgram(forward, addPasses,
                        [](mlir::DialectRegistry &registry) {
                          registerGradientModels(registry);
                        });
}

struct TrainedBits {
  std::vector<uint32_t> losses;             // f32 bits, per step
  std::vector<std::vector<uint8_t>> params; // after the last step
};

/// `steps` runClassifierStep runs on `session`, the loss bits of each
/// appended to `losses`; false (and a test failure) at the first that fails.
inline bool runClassifierSteps(rt::Session &session, int steps,
                               std::vector<uint32_t> &losses) {
  for (int step = 0; step < steps; ++step) {
    uint32_t bits = 0;
    rt::Status s = runClassifierStep(session, step, bits);
    EXPECT_TRUE(s.isOk()) << "step " << step << ": " << s.message();
    if (!s)
      return false;
    losses.push_back(bits);
  }
  return true;
}

/// The bytes of parameter (or state) `name` of `session`; false when it
/// has none of that name.
inline bool paramBytes(rt::Session &session, const std::string &name,
                       std::vector<uint8_t> &bytes) {
  rt::TensorView v;
  if (!session.param(name, v).isOk())
    return false;
  auto *p = static_cast<const uint8_t *>(v.data);
  bytes.assign(p, p + v.byteSize());
  return true;
}

/// `steps` runClassifierStep runs on a new session of `fn`, then the bytes
/// of the parameters `params`.
inline TrainedBits trainClassifier(const rt::FunctionInfo &fn, int steps,
                                   std::initializer_list<const char *> params) {
  TrainedBits out;
  std::unique_ptr<rt::Session> session = openSession(fn);
  if (!session || !runClassifierSteps(*session, steps, out.losses))
    return out;
  for (const char *name : params) {
    out.params.emplace_back();
    EXPECT_TRUE(paramBytes(*session, name, out.params.back())) << name;
  }
  return out;
}

inline int64_t kernelsOfKind(const rt::FunctionInfo &fn, const char *kind) {
  return std::count_if(
      fn.kernels.begin(), fn.kernels.end(),
      [&](const rt::KernelInfo &k) { return k.kind == kind; });
}

} // namespace ampc::unittest

#endif // AMPC_TEST_UNITTESTS_TRAINSTEPAB_H
