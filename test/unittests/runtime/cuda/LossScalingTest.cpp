//===- LossScalingTest.cpp - CUDA check_finite and update_scale -----------===//
//
// check_finite over many gradients of mixed dtypes and odd sizes in one
// launch, 16-byte aligned and not, with inf or NaN in one gradient only,
// finite gradients that overflow only once unscaled, and skip; the flag
// is checked against the expected value on the CPU and compared with it
// on CUDA. update_scale driven through sequences of clean and overflowing
// steps under the PyTorch, Paddle and MindSpore settings, compared exactly
// with the CPU at every step.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cfloat>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>

namespace ampc::rt::cuda::test {
namespace {

const double kInf = std::numeric_limits<double>::infinity();
const double kNaN = std::numeric_limits<double>::quiet_NaN();

struct Grad {
  DType dtype;
  Shape shape;
};

// Gradients of every float dtype: odd sizes, one element, empty, and
// several 4096-element chunks.
const Grad kGrads[] = {
    {DType::F32, {37}},           {DType::F16, {3, 5, 7}},
    {DType::BF16, {1}},           {DType::F32, {0}},
    {DType::F64, {129}},          {DType::F16, {3 * 4096 + 5}},
    {DType::F32, {2 * 4096 + 1}}, {DType::BF16, {4096}}};

// check_finite(grads, scale[, skip]) -> found_inf, each tensor `misalign`
// bytes past a 256-byte boundary.
OpCase finiteCase(const std::vector<HostTensor> &grads, double scale,
                  std::optional<int> skip = std::nullopt, size_t misalign = 0) {
  OpCase c;
  c.op = "check_finite";
  c.inputs = grads;
  c.inputs.push_back(HostTensor::fromValues(DType::F32, {}, {scale}));
  if (skip)
    c.inputs.push_back(
        HostTensor::fromValues(DType::I1, {}, {static_cast<double>(*skip)}));
  c.outputs.push_back(HostTensor::empty(DType::I1, {}));
  c.misalign = misalign;
  return c;
}

// found_inf is `want` on the CPU, and CUDA gives the same.
void expectFound(const OpCase &c, int want) {
  std::vector<HostTensor> cpu;
  Status st = runCpu(c, cpu);
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_EQ(cpu[0].at(0), want) << "found_inf on the CPU";
  CudaDevice *device = testDevice();
  ASSERT_NE(device, nullptr);
  std::vector<std::vector<HostTensor>> gpu;
  st = runCuda(*device, {c}, gpu);
  ASSERT_TRUE(st.isOk()) << "cuda: " << st.message();
  expectClose(cpu[0], gpu[0][0], Tolerance{0, 0}, "found_inf");
}

std::vector<HostTensor> randomGrads(double lo, double hi) {
  std::vector<HostTensor> grads;
  uint64_t seed = 11;
  for (const Grad &g : kGrads)
    grads.push_back(HostTensor::random(g.dtype, g.shape, seed++, lo, hi));
  return grads;
}

// Element `at` of gradient `which` replaced by `v`, as stored in its dtype.
void poke(std::vector<HostTensor> &grads, size_t which, int64_t at, double v) {
  HostTensor &g = grads[which];
  std::vector<double> values(g.numElements());
  for (int64_t i = 0; i < g.numElements(); ++i)
    values[i] = g.at(i);
  values[at] = v;
  g = HostTensor::fromValues(g.dtype, g.shape, values);
}

TEST(CudaLossScaling, CheckFiniteCleanGradients) {
  AMPC_SKIP_WITHOUT_GPU();
  for (double scale : {65536.0, 1024.0, 3.0, 0.5})
    for (size_t misalign : {0, 8}) {
      SCOPED_TRACE("scale " + std::to_string(scale) + " misaligned by " +
                   std::to_string(misalign));
      // Scaled gradients: up to 100 * scale, within f16's range.
      double big = std::min(100 * scale, 30000.0);
      expectFound(finiteCase(randomGrads(-big, big), scale, 0, misalign), 0);
      expectFound(
          finiteCase(randomGrads(-big, big), scale, std::nullopt, misalign), 0);
    }
}

TEST(CudaLossScaling, CheckFiniteFindsOneNonFiniteValue) {
  AMPC_SKIP_WITHOUT_GPU();
  // Each gradient in turn holds the only inf or NaN, at its first, last or
  // a middle element (beyond the first chunk of the large ones), through
  // the vector path and the scalar one.
  for (size_t which = 0; which < std::size(kGrads); ++which) {
    int64_t n = numElements(kGrads[which].shape);
    if (n == 0)
      continue;
    for (double bad : {kInf, -kInf, kNaN})
      for (int64_t at : {int64_t(0), n - 1, n / 2 + n / 3})
        for (size_t misalign : {0, 8}) {
          SCOPED_TRACE("gradient " + std::to_string(which) + " element " +
                       std::to_string(at) + " = " + std::to_string(bad) +
                       " misaligned by " + std::to_string(misalign));
          std::vector<HostTensor> grads = randomGrads(-1000, 1000);
          poke(grads, which, at, bad);
          expectFound(finiteCase(grads, 1024, std::nullopt, misalign), 1);
        }
  }
}

TEST(CudaLossScaling, CheckFiniteOverflowsOnlyOnceUnscaled) {
  AMPC_SKIP_WITHOUT_GPU();
  // The product g * (1.0f / scale) is formed in f32 (f64 for f64
  // gradients), as the updates read the gradient.
  struct Case {
    size_t which;
    int64_t at;
    double value;
    float scale;
    int found;
  };
  const Case cases[] = {
      // f16: 65504 * 1e35 leaves f32; 60000 / 0.5 leaves f16 only.
      {5, 4097, 65504, 1e-35f, 1},
      {1, 104, 65504, 1e-35f, 1},
      {5, 4097, 60000, 0.5f, 0},
      // f32 and bf16: 2e38 / 0.5 leaves f32.
      {6, 8192, 2e38, 0.5f, 1},
      {7, 4095, 2e38, 0.5f, 1},
      // f64: 3e38 / 0.5 stays finite in f64; 1e308 / 0.5 does not.
      {4, 128, 3e38, 0.5f, 0},
      {4, 128, 1e308, 0.5f, 1}};
  for (const Case &k : cases)
    for (size_t misalign : {0, 8}) {
      SCOPED_TRACE("gradient " + std::to_string(k.which) + " element " +
                   std::to_string(k.at) + " = " + std::to_string(k.value) +
                   " scale " + std::to_string(k.scale) + " misaligned by " +
                   std::to_string(misalign));
      std::vector<HostTensor> grads = randomGrads(-1, 1);
      poke(grads, k.which, k.at, k.value);
      expectFound(finiteCase(grads, k.scale, std::nullopt, misalign), k.found);
    }
}

TEST(CudaLossScaling, CheckFiniteSkipped) {
  AMPC_SKIP_WITHOUT_GPU();
  // Skipped: found_inf is 0 even with an inf and a NaN; skip = 0 finds
  // them.
  std::vector<HostTensor> grads = randomGrads(-1, 1);
  poke(grads, 1, 3, kInf);
  poke(grads, 6, 5000, kNaN);
  expectFound(finiteCase(grads, 1024, 1), 0);
  expectFound(finiteCase(grads, 1024, 0), 1);
}

TEST(CudaLossScaling, CheckFiniteManySmallGradients) {
  AMPC_SKIP_WITHOUT_GPU();
  const DType dtypes[] = {DType::F16, DType::F32, DType::BF16, DType::F64};
  std::vector<HostTensor> grads;
  for (int i = 0; i < 300; ++i)
    grads.push_back(HostTensor::random(dtypes[i % 4], {1 + (i * 37) % 301},
                                       500 + i, -50, 50));
  expectFound(finiteCase(grads, 128), 0);
  expectFound(finiteCase(grads, 128, std::nullopt, 8), 0);
  for (size_t which : {0, 151, 299}) {
    SCOPED_TRACE("NaN in gradient " + std::to_string(which));
    std::vector<HostTensor> bad = grads;
    poke(bad, which, bad[which].numElements() - 1, kNaN);
    expectFound(finiteCase(bad, 128), 1);
  }
}

//===----------------------------------------------------------------------===//
// update_scale
//===----------------------------------------------------------------------===//

struct ScaleConfig {
  const char *name;
  double init, growth, backoff, minScale, maxScale;
  int64_t growthInterval, decrEveryN;
};

// Runs `overflows` (one flag per step) from the initial state, comparing
// the CUDA kernel with the CPU one exactly at every step and carrying the
// CPU's state to the next.
void runSequence(const ScaleConfig &cfg, const std::vector<int> &overflows) {
  double scale = cfg.init;
  int64_t good = 0, bad = 0;
  for (size_t step = 0; step < overflows.size(); ++step) {
    SCOPED_TRACE(std::string(cfg.name) + " step " + std::to_string(step));
    OpCase c;
    c.op = "update_scale";
    c.attrs.setFloat("growth", cfg.growth);
    c.attrs.setFloat("backoff", cfg.backoff);
    c.attrs.setInt("growth_interval", cfg.growthInterval);
    c.attrs.setInt("decr_every_n", cfg.decrEveryN);
    c.attrs.setFloat("min_scale", cfg.minScale);
    c.attrs.setFloat("max_scale", cfg.maxScale);
    c.inputs = {
        HostTensor::fromValues(DType::F32, {}, {scale}),
        HostTensor::fromValues(DType::I64, {}, {static_cast<double>(good)}),
        HostTensor::fromValues(DType::I64, {}, {static_cast<double>(bad)}),
        HostTensor::fromValues(DType::I1, {},
                               {static_cast<double>(overflows[step])})};
    c.outputs = {HostTensor::empty(DType::F32, {}),
                 HostTensor::empty(DType::I64, {}),
                 HostTensor::empty(DType::I64, {})};
    expectCudaMatchesCpu(c, Tolerance{0, 0});
    std::vector<HostTensor> next;
    Status st = runCpu(c, next);
    ASSERT_TRUE(st.isOk()) << st.message();
    scale = next[0].at(0);
    good = static_cast<int64_t>(next[1].at(0));
    bad = static_cast<int64_t>(next[2].at(0));
  }
}

// Clean runs long enough to grow, overflows single and in pairs.
std::vector<int> mixedSteps() {
  std::vector<int> s;
  for (int i = 0; i < 7; ++i)
    s.push_back(0);
  s.push_back(1);
  for (int i = 0; i < 4; ++i)
    s.push_back(0);
  for (int i = 0; i < 5; ++i)
    s.push_back(1);
  for (int i = 0; i < 9; ++i)
    s.push_back(i % 4 == 3);
  return s;
}

TEST(CudaLossScaling, UpdateScaleSequences) {
  AMPC_SKIP_WITHOUT_GPU();
  const ScaleConfig configs[] = {
      {"pytorch", 65536, 2, 0.5, FLT_MIN, FLT_MAX, 3, 1},
      {"paddle", 32768, 2, 0.5, 1, FLT_MAX, 2, 2},
      {"mindspore", 16777216, 2, 0.5, 1, FLT_MAX, 3, 1},
      // The scale reaches its floor and its ceiling.
      {"clamped", 4, 3, 0.25, 1, 100, 1, 1},
      // growth that leaves f32: the scale is kept.
      {"overflowing growth", 3e38, 4, 0.5, 1, 1e300, 1, 1}};
  for (const ScaleConfig &cfg : configs)
    runSequence(cfg, mixedSteps());
}

} // namespace
} // namespace ampc::rt::cuda::test
