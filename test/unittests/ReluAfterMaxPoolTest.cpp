//===- ReluAfterMaxPoolTest.cpp - pooling then ReLU trains the same bits --===//
//
// The canonicalizer moves a ReLU from before a max pooling to after it
// (PoolingCanonicalize.cpp), before the backward pass is built: the
// backward pass of the moved form is relu_grad on the pooled gradient and
// max_pool2d_grad over the pre-ReLU values, where the written form's is
// max_pool2d_grad over the ReLU's output and relu_grad on the full
// gradient. Both must train the same bits: a small classifier with a
// hidden layer reshaped to 2x4x4 planes, ReLU and 2x2 max pooling of
// stride 2, is trained in both forms (as written, the ReLU before the
// pooling; and the pooling first), in f32 and in bf16 (where rounding
// makes ties within a window common), and the losses and parameters are
// compared.
//
//===----------------------------------------------------------------------===//

#include "test/unittests/TrainStepAB.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

using namespace ampc;
using namespace ampc::unittest;

namespace {

/// The classifier in element type `t` ("f32" or "bf16": casts at the
/// borders, f32 accumulation), ReLU before the pooling or after it.
std::string forward(const std::string &t, bool reluFirst) {
  const bool low = t != "f32";
  auto ty = [&](const std::string &shape) {
    return "tensor<" + shape + "x" + t + ">";
  };
  auto cast = [&](const std::string &to, const std::string &from,
                  const std::string &shape) {
    // In f32 a reshape to the same shape, which folds away.
    return "  %" + to + (low ? " = amp.cast %" : " = graph.reshape %") + from +
           " : tensor<" + shape + "xf32> to " + ty(shape) + "\n";
  };
  std::string acc = low ? ", graph.accumulate = f32" : "";
  std::string pool = "{kernel_shape = array<i64: 2, 2>, strides = array<i64: "
                     "2, 2>, pads = array<i64: 0, 0, 0, 0>, dilations = "
                     "array<i64: 1, 1>}";
  std::string body =
      reluFirst ? "  %r = graph.relu %i : " + ty("8x2x4x4") +
                      "\n  %p = graph.max_pool2d %r " + pool + " : (" +
                      ty("8x2x4x4") + ") -> " + ty("8x2x2x2") + "\n"
                : "  %q = graph.max_pool2d %i " + pool + " : (" +
                      ty("8x2x4x4") + ") -> " + ty("8x2x2x2") +
                      "\n  %p = graph.relu %q : " + ty("8x2x2x2") + "\n";
  return classifierForward({{"w1", 128, 1}, {"w2", 24, 2}}) +
         cast("xh", "x", "8x4") + cast("w1v", "w1", "128") +
         cast("w2v", "w2", "24") +
         "  %w1m = graph.reshape %w1v : " + ty("128") + " to " + ty("32x4") +
         "\n  %h = graph.gemm %xh, %w1m {trans_b = true" + acc + "} : (" +
         ty("8x4") + ", " + ty("32x4") + ") -> " + ty("8x32") +
         "\n  %i = graph.reshape %h : " + ty("8x32") + " to " + ty("8x2x4x4") +
         "\n" + body + "  %f = graph.reshape %p : " + ty("8x2x2x2") + " to " +
         ty("8x8") + "\n  %w2m = graph.reshape %w2v : " + ty("24") + " to " +
         ty("3x8") + "\n  %y = graph.gemm %f, %w2m {trans_b = true" + acc +
         "} : (" + ty("8x8") + ", " + ty("3x8") + ") -> " + ty("8x3") + "\n" +
         (low ? "  %yf = amp.cast %y : " : "  %yf = graph.reshape %y : ") +
         ty("8x3") + " to tensor<8x3xf32>\n" +
         R"(  %loss, %lp = graph.softmax_cross_entropy %yf, %labels : (tensor<8x3xf32>, tensor<8xi64>) -> (tensor<f32>, tensor<8x3xf32>)
  return %loss : tensor<f32>
}
)";
}

/// The elements of the output of `fn`'s kernels of `kind`, in order.
std::vector<int64_t> outputSizes(const rt::FunctionInfo &fn, const char *kind) {
  std::vector<int64_t> sizes;
  for (const rt::KernelInfo &k : fn.kernels)
    if (k.kind == kind)
      sizes.push_back(rt::numElements(fn.values[k.outputs[0]].shape));
  return sizes;
}

void expectSameTraining(const std::string &t) {
  const int steps = 8;
  auto none = [](mlir::PassManager &) {};
  rt::ProgramInfo written = compileTrainStep(forward(t, true), none),
                  moved = compileTrainStep(forward(t, false), none);
  const rt::FunctionInfo *a = written.find("train_step");
  const rt::FunctionInfo *b = moved.find("train_step");
  ASSERT_TRUE(a && b);
  // The two steps differ: ReLU and its gradient on the 256 elements before
  // the pooling, or on the 64 after it.
  EXPECT_EQ(outputSizes(*a, "relu"), std::vector<int64_t>{256});
  EXPECT_EQ(outputSizes(*a, "relu_grad"), std::vector<int64_t>{256});
  EXPECT_EQ(outputSizes(*b, "relu"), std::vector<int64_t>{64});
  EXPECT_EQ(outputSizes(*b, "relu_grad"), std::vector<int64_t>{64});
  TrainedBits base = trainClassifier(*a, steps, {"w1", "w2"}),
              after = trainClassifier(*b, steps, {"w1", "w2"});
  ASSERT_EQ(base.losses.size(), static_cast<size_t>(steps));
  // Training moves: the comparison is of runs that do something.
  EXPECT_NE(base.losses.front(), base.losses.back());
  EXPECT_EQ(after.losses, base.losses);
  EXPECT_EQ(after.params, base.params);
}

TEST(ReluAfterMaxPool, F32TrainsTheSameBits) { expectSameTraining("f32"); }

TEST(ReluAfterMaxPool, Bf16TrainsTheSameBits) { expectSameTraining("bf16"); }

} // namespace
