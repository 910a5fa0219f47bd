//===- LossesTest.cpp - softmax and the losses, CUDA against the CPU ------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <cstring>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
// Rows of 1 and 7 (warp, scalar), 1000 (warp, 16-byte), 5000 (block).
const int64_t kLens[] = {1, 7, 1000, 5000};

OpCase softmaxCase(const std::string &op, DType t, Shape shape, int64_t axis,
                   uint64_t seed) {
  OpCase c;
  c.op = op;
  c.attrs.setInt("axis", axis);
  c.inputs = {HostTensor::random(t, shape, seed, -4, 4)};
  c.outputs = {HostTensor::empty(t, shape)};
  return c;
}

TEST(CudaLosses, SoftmaxRowsAndColumns) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op : {"softmax", "log_softmax"})
    for (DType t : kFloats)
      for (int64_t len : kLens) {
        SCOPED_TRACE(std::string(op) + " " + std::string(name(t)) + " len " +
                     std::to_string(len));
        expectCudaMatchesCpu(softmaxCase(op, t, {3, len}, 1, 1));
        // Not the last axis: one thread per column.
        expectCudaMatchesCpu(softmaxCase(op, t, {2, len, 3}, 1, 2));
        expectCudaMatchesCpu(softmaxCase(op, t, {len, 5}, 0, 3));
      }
}

TEST(CudaLosses, SoftmaxEdgeCases) {
  AMPC_SKIP_WITHOUT_GPU();
  // An empty tensor, and large values that would overflow exp without the
  // max subtracted.
  expectCudaMatchesCpu(softmaxCase("softmax", DType::F32, {0, 8}, 1, 4));
  OpCase c;
  c.op = "log_softmax";
  c.attrs.setInt("axis", 1);
  c.inputs = {HostTensor::fromValues(DType::F32, {2, 3},
                                     {1000, 999, -1000, 80, 80, 80})};
  c.outputs = {HostTensor::empty(DType::F32, {2, 3})};
  expectCudaMatchesCpu(c);
}

// What softmax_grad reads: probabilities along `axis` of a 2-D shape,
// summing to 1. Values outside [0, 1] make its sum over the axis, which
// the CPU and CUDA add in different orders, large and cancelling (the
// first GPU run: f32 rows of 1000 of values in [-3, 0] differed by 3e-5
// relative between two correct orders).
HostTensor probabilities(DType t, const Shape &s, int64_t axis,
                         uint64_t seed) {
  HostTensor raw = HostTensor::random(DType::F64, s, seed, 0.05, 1);
  const int64_t rows = s[0], cols = s[1];
  std::vector<double> v(static_cast<size_t>(rows * cols));
  for (int64_t i = 0; i < rows * cols; ++i)
    v[static_cast<size_t>(i)] = raw.at(i);
  const int64_t lines = axis == 1 ? rows : cols,
                len = axis == 1 ? cols : rows;
  for (int64_t l = 0; l < lines; ++l) {
    auto at = [&](int64_t k) -> double & {
      return v[static_cast<size_t>(axis == 1 ? l * cols + k : k * cols + l)];
    };
    double sum = 0;
    for (int64_t k = 0; k < len; ++k)
      sum += at(k);
    for (int64_t k = 0; k < len; ++k)
      at(k) /= sum;
  }
  return HostTensor::fromValues(t, s, v);
}

TEST(CudaLosses, SoftmaxGrads) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op : {"softmax_grad", "log_softmax_grad"})
    for (DType t : kFloats)
      for (int64_t len : kLens)
        for (int64_t axis : {1, 0}) {
          SCOPED_TRACE(std::string(op) + " " + std::string(name(t)) + " len " +
                       std::to_string(len) + " axis " + std::to_string(axis));
          Shape s = axis == 1 ? Shape{3, len} : Shape{len, 4};
          OpCase c;
          c.op = op;
          c.attrs.setInt("axis", axis);
          c.inputs = {HostTensor::random(t, s, 5),
                      std::string(op) == "softmax_grad"
                          ? probabilities(t, s, axis, 6)
                          : HostTensor::random(t, s, 6, -3, 0)};
          c.outputs = {HostTensor::empty(t, s)};
          expectCudaMatchesCpu(c);
        }
}

// [N, C, d...] scores with labels in [0, C), some set to ignore_index 2.
struct LossSetup {
  DType t = DType::F32, labelType = DType::I64;
  Shape x;
  std::string reduction = "mean";
  bool weights = false, ignore = false;
};

Shape perSample(const Shape &x) {
  Shape s{x[0]};
  s.insert(s.end(), x.begin() + 2, x.end());
  return s;
}

HostTensor labelsFor(const LossSetup &s, uint64_t seed) {
  Shape ps = perSample(s.x);
  HostTensor l = HostTensor::random(s.labelType, ps, seed, 0, s.x[1] - 1);
  if (!s.ignore)
    return l;
  std::vector<double> v(size_t(l.numElements()));
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = i % 3 == 1 ? -100 : l.at(int64_t(i));
  return HostTensor::fromValues(s.labelType, ps, v);
}

void setLossAttrs(OpCase &c, const LossSetup &s) {
  c.attrs.setString("reduction", s.reduction);
  if (s.ignore)
    c.attrs.setInt("ignore_index", -100);
}

Shape lossShape(const LossSetup &s) {
  return s.reduction == "none" ? perSample(s.x) : Shape{};
}

HostTensor weightsOr(const LossSetup &s) {
  return s.weights ? HostTensor::random(s.t, {s.x[1]}, 9, 0.1, 2)
                   : HostTensor::absent();
}

OpCase lossCase(const LossSetup &s, bool softmax) {
  OpCase c;
  c.op = softmax ? "softmax_cross_entropy" : "nll_loss";
  setLossAttrs(c, s);
  c.inputs = {
      HostTensor::random(s.t, s.x, 7, softmax ? -4 : -6, softmax ? 4 : 0),
      labelsFor(s, 8), weightsOr(s)};
  c.outputs = {HostTensor::empty(s.t, lossShape(s))};
  if (softmax)
    c.outputs.push_back(HostTensor::empty(s.t, s.x));
  return c;
}

OpCase lossGradCase(const LossSetup &s, bool softmax) {
  OpCase c;
  c.op = softmax ? "softmax_cross_entropy_grad" : "nll_loss_grad";
  setLossAttrs(c, s);
  c.inputs = {HostTensor::random(s.t, lossShape(s), 10, 0.5, 2)};
  if (softmax)
    c.inputs.push_back(HostTensor::random(s.t, s.x, 11, -6, 0));
  c.inputs.push_back(labelsFor(s, 8));
  c.inputs.push_back(weightsOr(s));
  c.outputs = {HostTensor::empty(s.t, s.x)};
  return c;
}

// Calls `check` with a setup of scores of type `t` for every class count
// (the softmax row kernels' sizes), with and without a spatial dim (D = 3:
// the column kernel), every reduction, and plain / class-weighted /
// ignore_index with i32 labels; `what` names the setup for SCOPED_TRACE.
template <typename Check> void forEachLossSetup(DType t, Check check) {
  for (int64_t classes : kLens)
    for (bool spatial : {false, true})
      for (const char *red : {"none", "sum", "mean"})
        for (int variant = 0; variant < 3; ++variant) {
          LossSetup s;
          s.t = t;
          s.x = spatial ? Shape{2, classes, 3} : Shape{5, classes};
          s.reduction = red;
          s.weights = variant == 1;
          s.ignore = variant == 2;
          s.labelType = variant == 2 ? DType::I32 : DType::I64;
          check(s, std::string(name(t)) + " C " + std::to_string(classes) +
                       (spatial ? " D 3 " : " ") + red + " variant " +
                       std::to_string(variant));
        }
}

// Every loss and gradient over dtypes and forEachLossSetup's setups.
TEST(CudaLosses, LossesAndGrads) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    forEachLossSetup(t, [](const LossSetup &s, const std::string &what) {
      for (bool softmax : {true, false}) {
        SCOPED_TRACE(std::string(softmax ? "sce " : "nll ") + what);
        expectCudaMatchesCpu(lossCase(s, softmax));
        expectCudaMatchesCpu(lossGradCase(s, softmax));
      }
    });
}

// softmax_cross_entropy_with_grad (the loss and its gradient in one call,
// the log-probabilities never stored): the scores' type, and an f16/bf16
// gradient of f32 scores (its log-probabilities in the workspace).
OpCase withGradCase(const LossSetup &s, DType dscores) {
  OpCase c;
  c.op = "softmax_cross_entropy_with_grad";
  setLossAttrs(c, s);
  c.inputs = {HostTensor::random(s.t, lossShape(s), 10, 0.5, 2),
              HostTensor::random(s.t, s.x, 7, -4, 4), labelsFor(s, 8),
              weightsOr(s)};
  c.outputs = {HostTensor::empty(s.t, lossShape(s)),
               HostTensor::empty(dscores, s.x)};
  return c;
}

TEST(CudaLosses, LossWithGrad) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    for (DType d : kFloats) {
      if (d != t && t != DType::F32)
        continue;
      forEachLossSetup(t, [&](const LossSetup &s, const std::string &what) {
        SCOPED_TRACE(what + " -> " + std::string(name(d)));
        expectCudaMatchesCpu(withGradCase(s, d));
      });
    }
}

// Every label ignored: the mean loss is 0/0 = NaN, its gradient 0.
TEST(CudaLosses, AllIgnored) {
  AMPC_SKIP_WITHOUT_GPU();
  LossSetup s;
  s.x = {4, 6};
  s.ignore = true;
  for (bool softmax : {true, false}) {
    OpCase c = lossCase(s, softmax);
    c.inputs[1] =
        HostTensor::fromValues(DType::I64, {4}, {-100, -100, -100, -100});
    expectCudaMatchesCpu(c);
    OpCase g = lossGradCase(s, softmax);
    g.inputs[softmax ? 2 : 1] = c.inputs[1];
    expectCudaMatchesCpu(g);
  }
}

// The CPU refuses a label outside [0, C) at run time; the GPU, which cannot
// fail mid-graph, gives NaN: the sample's loss, the mean, and the grads.
TEST(CudaLosses, OutOfRangeLabelIsNaN) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice &dev = *testDevice();
  LossSetup s;
  s.x = {3, 5};
  HostTensor bad = HostTensor::fromValues(DType::I64, {3}, {0, 5, 2});
  for (const char *red : {"none", "mean"}) {
    s.reduction = red;
    OpCase c = lossCase(s, true);
    c.inputs[1] = bad;
    std::vector<HostTensor> cpuOut;
    EXPECT_FALSE(runCpu(c, cpuOut).isOk());
    std::vector<std::vector<HostTensor>> out;
    ASSERT_TRUE(runCuda(dev, {c}, out).isOk());
    const HostTensor &loss = out[0][0];
    if (s.reduction == "none") {
      EXPECT_FALSE(std::isnan(loss.at(0)));
      EXPECT_TRUE(std::isnan(loss.at(1)));
      EXPECT_FALSE(std::isnan(loss.at(2)));
    } else {
      EXPECT_TRUE(std::isnan(loss.at(0)));
    }
    OpCase g = lossGradCase(s, true);
    g.inputs[2] = bad;
    ASSERT_TRUE(runCuda(dev, {g}, out).isOk());
    EXPECT_TRUE(std::isnan(out[0][0].at(5))); // row 1
    EXPECT_EQ(std::isnan(out[0][0].at(0)), s.reduction == "mean");
  }
}

// The mean loss is reduced without atomics: the same bits every run.
TEST(CudaLosses, MeanIsDeterministic) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice &dev = *testDevice();
  LossSetup s;
  s.x = {4096, 37};
  OpCase c = lossCase(s, true);
  std::vector<std::vector<HostTensor>> first, again;
  ASSERT_TRUE(runCuda(dev, {c}, first).isOk());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(runCuda(dev, {c}, again).isOk());
    EXPECT_EQ(first[0][0].bytes, again[0][0].bytes);
  }
}

} // namespace
} // namespace ampc::rt::cuda::test
