//===- GemmTest.cpp - CUDA gemm and matmul against the CPU ----------------===//
//
// runtime/cuda/Gemm.cpp's two ops in f32, f16, bf16 and f64: gemm with
// every transpose, alpha/beta, and each way c reaches cuBLASLt (the bias
// epilogue for a vector along N, cuBLASLt's C for a full [M, N] c, the
// fill kernel for other broadcasts and for beta 0, where 0 * inf must be
// NaN as on the CPU); matmul's 1-D promotion and batch broadcasting (one
// tall GEMM, strided batches with a shared operand, launches looped over
// outer dims); odd sizes whose pointers and leading dims are not 16-byte
// aligned, K = 1, K = 0 and empty outputs; f32 on TF32 Tensor Cores when
// the session allows it.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

// f32 sums of K products differ with summation order by about sqrt(K)
// ulps of the larger partial sums; the other dtypes' defaults cover it.
Tolerance tolFor(DType t, int64_t k) {
  if (t != DType::F32)
    return {};
  double s = std::sqrt(double(std::max<int64_t>(k, 1)));
  return {1e-5 * s, 1e-5 * s};
}

std::string label(const std::string &what, DType t) {
  return what + " " + std::string(name(t));
}

OpCase gemmCase(DType t, int64_t m, int64_t n, int64_t k, bool ta, bool tb,
                uint64_t seed) {
  OpCase c;
  c.op = "gemm";
  c.attrs = gemmAttrs(1, 1, ta, tb);
  c.inputs = {HostTensor::random(t, ta ? Shape{k, m} : Shape{m, k}, seed),
              HostTensor::random(t, tb ? Shape{n, k} : Shape{k, n}, seed + 1)};
  c.outputs = {HostTensor::empty(t, {m, n})};
  return c;
}

OpCase matmulCase(DType t, const Shape &a, const Shape &b, const Shape &out,
                  uint64_t seed) {
  OpCase c;
  c.op = "matmul";
  c.inputs = {HostTensor::random(t, a, seed),
              HostTensor::random(t, b, seed + 1)};
  c.outputs = {HostTensor::empty(t, out)};
  return c;
}

TEST(CudaGemm, Transposes) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Size {
    int64_t m, n, k;
  };
  for (Size s : {Size{7, 13, 5}, Size{64, 48, 32}, Size{1, 1, 1},
                 Size{33, 1, 17}, Size{1, 40, 9}, Size{130, 70, 100}})
    for (DType t : kFloats)
      for (int ta = 0; ta < 2; ++ta)
        for (int tb = 0; tb < 2; ++tb) {
          SCOPED_TRACE(label(
              "gemm " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
                  std::to_string(s.k) + " ta=" + std::to_string(ta) +
                  " tb=" + std::to_string(tb),
              t));
          expectCudaMatchesCpu(gemmCase(t, s.m, s.n, s.k, ta, tb, 11),
                               tolFor(t, s.k));
        }
}

TEST(CudaGemm, BiasBroadcastAlphaBeta) {
  AMPC_SKIP_WITHOUT_GPU();
  const int64_t m = 9, n = 24, k = 19;
  // [n] and [1, n] take the bias epilogue at beta 1, [m, n] is cuBLASLt's
  // C, the rest are written into the output by the fill kernel.
  const Shape cShapes[] = {{n}, {1, n}, {m, n}, {m, 1}, {1, 1}, {1}, {}};
  struct Scale {
    double alpha, beta;
  };
  for (Scale sc : {Scale{1, 1}, Scale{0.5, 2}, Scale{-1.5, 0.25}})
    for (const Shape &cs : cShapes)
      for (DType t : kFloats)
        for (int tb = 0; tb < 2; ++tb) {
          SCOPED_TRACE(label("gemm c" + str(cs) + " alpha " +
                                 std::to_string(sc.alpha) + " beta " +
                                 std::to_string(sc.beta) +
                                 " tb=" + std::to_string(tb),
                             t));
          OpCase c = gemmCase(t, m, n, k, false, tb, 21);
          c.attrs.setFloat("alpha", sc.alpha);
          c.attrs.setFloat("beta", sc.beta);
          c.inputs.push_back(HostTensor::random(t, cs, 23, -4, 4));
          expectCudaMatchesCpu(c, tolFor(t, k));
        }
}

TEST(CudaGemm, BiasOnLargeTensorCoreShape) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(label("gemm 256x384x512 + bias", t));
    OpCase c = gemmCase(t, 256, 384, 512, false, true, 31);
    c.inputs.push_back(HostTensor::random(t, {384}, 33));
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaGemm, BetaZeroStillMultipliesC) {
  AMPC_SKIP_WITHOUT_GPU();
  // The CPU forms beta * c itself, so 0 * inf and 0 * NaN are NaN there.
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : kFloats)
    for (const Shape &cs : {Shape{3}, Shape{2, 3}, Shape{2, 1}}) {
      SCOPED_TRACE(label("gemm beta 0 c" + str(cs), t));
      OpCase c = gemmCase(t, 2, 3, 4, false, false, 41);
      c.attrs.setFloat("beta", 0.0);
      std::vector<double> v(static_cast<size_t>(numElements(cs)), 1.5);
      v[0] = inf;
      if (v.size() > 1)
        v[1] = nan;
      c.inputs.push_back(HostTensor::fromValues(t, cs, v));
      expectCudaMatchesCpu(c, tolFor(t, 4));
    }
}

TEST(CudaGemm, KOneKZeroAndEmpty) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(label("gemm K=1", t));
    expectCudaMatchesCpu(gemmCase(t, 17, 9, 1, false, false, 51));
    expectCudaMatchesCpu(gemmCase(t, 17, 9, 1, true, true, 52));
    SCOPED_TRACE(label("gemm K=0", t));
    expectCudaMatchesCpu(gemmCase(t, 5, 6, 0, false, false, 53));
    for (const Shape &cs : {Shape{6}, Shape{5, 6}, Shape{5, 1}}) {
      SCOPED_TRACE(label("gemm K=0 beta 3 c" + str(cs), t));
      OpCase c = gemmCase(t, 5, 6, 0, true, false, 54);
      c.attrs.setFloat("beta", 3.0);
      c.inputs.push_back(HostTensor::random(t, cs, 55));
      expectCudaMatchesCpu(c);
    }
    SCOPED_TRACE(label("gemm M=0 / N=0", t));
    expectCudaMatchesCpu(gemmCase(t, 0, 6, 4, false, false, 56));
    expectCudaMatchesCpu(gemmCase(t, 6, 0, 4, false, true, 57));
  }
}

TEST(CudaGemm, SameShapeTwice) {
  AMPC_SKIP_WITHOUT_GPU();
  // The second prepare takes the algorithm from the process-wide cache;
  // different data must still give the CPU's answer.
  for (uint64_t seed : {61, 62})
    expectCudaMatchesCpu(gemmCase(DType::F16, 96, 80, 72, false, true, seed));
}

TEST(CudaGemm, Tf32WhenAllowed) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice *device = testDevice();
  OpCase c = gemmCase(DType::F32, 128, 96, 64, false, false, 71);
  c.inputs.push_back(HostTensor::random(DType::F32, {96}, 72));
  std::vector<HostTensor> cpu;
  ASSERT_TRUE(runCpu(c, cpu).isOk());
  std::vector<std::vector<HostTensor>> gpu;
  Status s = runCuda(*device, {c}, gpu, /*allowTf32=*/true);
  ASSERT_TRUE(s.isOk()) << s.message();
  // TF32 keeps 10 mantissa bits of each operand: about 1e-3 relative per
  // product, summed over K = 64 terms of magnitude <= 1.
  expectClose(cpu[0], gpu[0][0], {3e-2, 1e-2}, "gemm tf32");
}

TEST(CudaMatmul, BatchedAndBroadcast) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{7, 5}, {5, 13}, {7, 13}},
      {{5}, {5, 13}, {13}},                       // 1-D lhs
      {{7, 5}, {5}, {7}},                         // 1-D rhs
      {{5}, {5}, {}},                             // dot
      {{3, 7, 5}, {5, 4}, {3, 7, 4}},             // shared rhs: tall GEMM
      {{7, 5}, {3, 5, 4}, {3, 7, 4}},             // shared lhs: stride 0
      {{2, 3, 7, 5}, {2, 3, 5, 4}, {2, 3, 7, 4}}, // one strided batch
      {{2, 3, 7, 5}, {3, 5, 4}, {2, 3, 7, 4}},    // rhs shared by dim 0
      {{2, 1, 7, 5}, {1, 3, 5, 4}, {2, 3, 7, 4}}, // outer loop
      {{4, 1, 3, 6, 2}, {3, 1, 2, 9}, {4, 3, 3, 6, 9}},
      {{1, 1, 7, 5}, {5, 4}, {1, 1, 7, 4}},  // size-1 batch dims
      {{3, 7, 1}, {3, 1, 4}, {3, 7, 4}},     // K = 1
      {{4, 33, 17}, {4, 17, 9}, {4, 33, 9}}, // odd, unaligned
  };
  for (const Case &k : cases)
    for (DType t : kFloats) {
      SCOPED_TRACE(label("matmul " + str(k.a) + " x " + str(k.b), t));
      expectCudaMatchesCpu(matmulCase(t, k.a, k.b, k.out, 81),
                           tolFor(t, k.a.back()));
    }
}

TEST(CudaMatmul, KZeroAndEmpty) {
  AMPC_SKIP_WITHOUT_GPU();
  struct Case {
    Shape a, b, out;
  };
  const Case cases[] = {
      {{3, 0}, {0, 4}, {3, 4}},          // K = 0: zeros
      {{2, 3, 0}, {0, 4}, {2, 3, 4}},    // batched K = 0
      {{0, 7, 5}, {5, 4}, {0, 7, 4}},    // empty batch
      {{0, 5}, {5, 4}, {0, 4}},          // M = 0
      {{2, 7, 5}, {2, 5, 0}, {2, 7, 0}}, // N = 0
  };
  for (const Case &k : cases)
    for (DType t : kFloats) {
      SCOPED_TRACE(label("matmul " + str(k.a) + " x " + str(k.b), t));
      expectCudaMatchesCpu(matmulCase(t, k.a, k.b, k.out, 91));
    }
}

TEST(CudaMatmul, LargeTensorCoreShapes) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : {DType::F16, DType::BF16}) {
    SCOPED_TRACE(label("matmul [4, 128, 256] x [256, 192]", t));
    expectCudaMatchesCpu(
        matmulCase(t, {4, 128, 256}, {256, 192}, {4, 128, 192}, 101));
    SCOPED_TRACE(label("matmul [2, 4, 64, 32] x [2, 4, 32, 64]", t));
    expectCudaMatchesCpu(
        matmulCase(t, {2, 4, 64, 32}, {2, 4, 32, 64}, {2, 4, 64, 64}, 102));
  }
}

TEST(CudaMatmul, IntegersAreRefused) {
  AMPC_SKIP_WITHOUT_GPU();
  OpCase c;
  c.op = "matmul";
  c.inputs = {HostTensor::random(DType::I64, {2, 3}, 111, -5, 5),
              HostTensor::random(DType::I64, {3, 2}, 112, -5, 5)};
  c.outputs = {HostTensor::empty(DType::I64, {2, 2})};
  std::vector<std::vector<HostTensor>> out;
  Status s = runCuda(*testDevice(), {c}, out);
  ASSERT_FALSE(s.isOk());
  EXPECT_NE(s.message().find("f32, f16, bf16 or f64"), std::string::npos)
      << s.message();
}

} // namespace
} // namespace ampc::rt::cuda::test
