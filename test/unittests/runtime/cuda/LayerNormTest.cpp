//===- LayerNormTest.cpp - layer_norm and its gradient, CUDA vs the CPU ---===//
#include "CudaTestUtil.h"

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
// Rows of 1 and 7 (warp, scalar), 1000 (warp, 16-byte), 5000 (block).
const int64_t kLens[] = {1, 7, 1000, 5000};

Shape statShape(const Shape &x, int64_t axis) {
  Shape s = x;
  std::fill(s.begin() + axis, s.end(), 1);
  return s;
}

OpCase layerNormCase(DType t, DType paramType, const Shape &x, int64_t axis,
                     const Shape &scale, bool bias, uint64_t seed) {
  OpCase c;
  c.op = "layer_norm";
  c.attrs.setInt("axis", axis);
  c.attrs.setFloat("epsilon", 1e-5);
  c.inputs = {HostTensor::random(t, x, seed, -3, 5),
              HostTensor::random(paramType, scale, seed + 1, 0.5, 1.5),
              bias ? HostTensor::random(paramType, scale, seed + 2)
                   : HostTensor::absent()};
  c.outputs = {HostTensor::empty(t, x),
               HostTensor::empty(DType::F32, statShape(x, axis)),
               HostTensor::empty(DType::F32, statShape(x, axis))};
  return c;
}

OpCase layerNormGradCase(DType t, DType paramType, const Shape &x, int64_t axis,
                         const Shape &scale, uint64_t seed) {
  OpCase c;
  c.op = "layer_norm_grad";
  c.attrs.setInt("axis", axis);
  Shape st = statShape(x, axis);
  c.inputs = {HostTensor::random(t, x, seed),
              HostTensor::random(t, x, seed + 1),
              HostTensor::random(paramType, scale, seed + 2, 0.5, 1.5),
              HostTensor::random(DType::F32, st, seed + 3),
              HostTensor::random(DType::F32, st, seed + 4, 0.5, 2)};
  c.outputs = {HostTensor::empty(t, x), HostTensor::empty(paramType, scale),
               HostTensor::empty(paramType, scale)};
  return c;
}

// Every row size and dtype, with the scale in the input's dtype and in f32
// (O1/O2 mixed precision), with and without bias.
TEST(CudaLayerNorm, Forward) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    for (DType p : {t, DType::F32})
      for (int64_t d : kLens)
        for (bool bias : {true, false}) {
          SCOPED_TRACE(std::string(name(t)) + " scale " + std::string(name(p)) +
                       " d " + std::to_string(d) + (bias ? " bias" : ""));
          expectCudaMatchesCpu(layerNormCase(t, p, {6, d}, 1, {d}, bias, 1));
        }
}

// Several normalized dims (axis 1 of [2, 3, 40]) with the scale given as
// [40] (broadcast) or [3, 40]; axis 0 (one row); an empty batch.
TEST(CudaLayerNorm, AxesAndBroadcastScale) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    expectCudaMatchesCpu(layerNormCase(t, t, {2, 3, 40}, 1, {40}, true, 2));
    expectCudaMatchesCpu(layerNormCase(t, t, {2, 3, 40}, 1, {3, 40}, true, 3));
    expectCudaMatchesCpu(layerNormCase(t, t, {2, 3, 40}, 2, {1}, false, 4));
    expectCudaMatchesCpu(layerNormCase(t, t, {4, 9}, 0, {9}, true, 5));
    expectCudaMatchesCpu(layerNormCase(t, t, {0, 9}, 1, {9}, true, 6));
  }
}

TEST(CudaLayerNorm, Backward) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    for (DType p : {t, DType::F32})
      for (int64_t d : kLens) {
        SCOPED_TRACE(std::string(name(t)) + " scale " + std::string(name(p)) +
                     " d " + std::to_string(d));
        expectCudaMatchesCpu(layerNormGradCase(t, p, {6, d}, 1, {d}, 7));
      }
  // Many rows: the scale/bias gradients sum over several slices.
  expectCudaMatchesCpu(
      layerNormGradCase(DType::F32, DType::F32, {3000, 64}, 1, {64}, 8));
}

TEST(CudaLayerNorm, BackwardBroadcastScale) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    expectCudaMatchesCpu(layerNormGradCase(t, t, {2, 3, 40}, 1, {40}, 9));
    expectCudaMatchesCpu(layerNormGradCase(t, t, {2, 3, 40}, 1, {3, 1}, 10));
    expectCudaMatchesCpu(layerNormGradCase(t, t, {4, 9}, 0, {9}, 11));
    expectCudaMatchesCpu(layerNormGradCase(t, t, {0, 9}, 1, {9}, 12));
  }
}

// The scale and bias gradients are summed without atomics: the same bits
// every run.
TEST(CudaLayerNorm, BackwardIsDeterministic) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice &dev = *testDevice();
  OpCase c =
      layerNormGradCase(DType::F16, DType::F32, {4096, 768}, 1, {768}, 13);
  std::vector<std::vector<HostTensor>> first, again;
  ASSERT_TRUE(runCuda(dev, {c}, first).isOk());
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(runCuda(dev, {c}, again).isOk());
    for (size_t o = 0; o < 3; ++o)
      EXPECT_EQ(first[0][o].bytes, again[0][o].bytes) << "output " << o;
  }
}

} // namespace
} // namespace ampc::rt::cuda::test
