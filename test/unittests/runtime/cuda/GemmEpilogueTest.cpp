//===- GemmEpilogueTest.cpp - CUDA gemm epilogues against the CPU ---------===//
//
// Every epilogue of runtime/GemmEpilogue.h through cuda/Gemm.cpp, against
// the CPU's fused kernel: the cuBLASLt forms (RELU_BIAS, GELU_AUX_BIAS,
// DGELU, BGRADB, ...) where N is a multiple of 8 and gelu is the tanh form,
// and ampc's own kernel after a plain GEMM elsewhere (drelu always, exact
// gelu, odd N, f64, K = 0). The fallback applies gelu to the rounded GEMM
// output where the CPU applies it to the f32 one, hence the wider gelu
// tolerance in f16 and bf16.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

// One f16/bf16 rounding of the activation's input on top of the defaults;
// f32 sums of K products differ with their order by about sqrt(K) ulps.
Tolerance tolFor(DType t, int64_t k, bool gelu) {
  double s = std::sqrt(double(std::max<int64_t>(k, 1)));
  switch (t) {
  case DType::F32:
    return {1e-5 * s, 1e-5 * s};
  case DType::F16:
    return gelu ? Tolerance{4e-3, 4e-3} : Tolerance{};
  case DType::BF16:
    return gelu ? Tolerance{3.2e-2, 3.2e-2} : Tolerance{};
  default:
    return {};
  }
}

struct Size {
  int64_t m, n, k;
};
// n = 64 fits cuBLASLt's aux leading dimension (a multiple of 8), n = 13
// does not; k = 0 leaves only c.
const Size kSizes[] = {{48, 64, 32}, {7, 13, 5}, {130, 72, 100}, {5, 16, 0}};

std::string label(const std::string &epi, DType t, Size s) {
  return epi + " " + std::string(name(t)) + " " + std::to_string(s.m) + "x" +
         std::to_string(s.n) + "x" + std::to_string(s.k);
}

TEST(CudaGemmEpilogue, ForwardActivations) {
  AMPC_SKIP_WITHOUT_GPU();
  for (Size s : kSizes)
    for (DType t : kFloats)
      for (const char *epi : {"relu", "gelu", "gelu_aux"})
        for (const char *approx : {"none", "tanh"})
          for (bool bias : {false, true}) {
            bool relu = std::string(epi) == "relu";
            if (relu && std::string(approx) == "tanh")
              continue;
            SCOPED_TRACE(label(epi, t, s) + " approximate " + approx +
                         (bias ? " + bias" : ""));
            OpCase c;
            c.op = "gemm";
            c.attrs = gemmAttrs();
            c.attrs.setString("epilogue", epi);
            c.attrs.setInt("trans_b", 1);
            if (!relu)
              c.attrs.setString("approximate", approx);
            c.inputs = {HostTensor::random(t, {s.m, s.k}, 61, -2, 2),
                        HostTensor::random(t, {s.n, s.k}, 62),
                        bias ? HostTensor::random(t, {s.n}, 63)
                             : HostTensor::absent()};
            c.outputs = {HostTensor::empty(t, {s.m, s.n})};
            if (std::string(epi) == "gelu_aux")
              c.outputs.push_back(HostTensor::empty(t, {s.m, s.n}));
            expectCudaMatchesCpu(c, tolFor(t, s.k, !relu));
          }
}

TEST(CudaGemmEpilogue, ReluKeepsNaNAndInf) {
  AMPC_SKIP_WITHOUT_GPU();
  // relu keeps NaN (inf - inf here) and inf, and zeroes -inf, on the CPU;
  // cuBLASLt documents RELU as max(x, 0), which says nothing of NaN: this
  // is where the two would part.
  const double inf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE("relu epilogue, non-finite, " + std::string(name(t)));
    OpCase c;
    c.op = "gemm";
    c.attrs = gemmAttrs();
    c.attrs.setString("epilogue", "relu");
    c.inputs = {HostTensor::fromValues(t, {1, 2}, {1, 1}),
                HostTensor::fromValues(t, {2, 8},
                                       {inf, -inf, inf, 1, -1, 0, 2, -2, //
                                        -inf, -inf, 1, 1, 1, 1, 1, 1}),
                HostTensor::fromValues(t, {8}, {0, 0, 0, 0, 0, 0, 0, 0})};
    c.outputs = {HostTensor::empty(t, {1, 8})};
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaGemmEpilogue, ActivationGradients) {
  AMPC_SKIP_WITHOUT_GPU();
  for (Size s : kSizes)
    for (DType t : kFloats)
      for (const char *epi : {"drelu", "dgelu"})
        for (const char *approx : {"none", "tanh"}) {
          bool relu = std::string(epi) == "drelu";
          if (relu && std::string(approx) == "tanh")
            continue;
          SCOPED_TRACE(label(epi, t, s) + " approximate " + approx);
          OpCase c;
          c.op = "gemm";
          c.attrs = gemmAttrs();
          c.attrs.setString("epilogue", epi);
          c.attrs.setFloat("beta", 0.0);
          if (!relu)
            c.attrs.setString("approximate", approx);
          // drelu reads relu's output (>= 0); dgelu the pre-activation.
          c.inputs = {HostTensor::random(t, {s.m, s.k}, 71),
                      HostTensor::random(t, {s.k, s.n}, 72),
                      HostTensor::absent(),
                      HostTensor::random(t, {s.m, s.n}, 73, relu ? 0 : -3, 3)};
          c.outputs = {HostTensor::empty(t, {s.m, s.n})};
          expectCudaMatchesCpu(c, tolFor(t, s.k, !relu));
        }
}

TEST(CudaGemmEpilogue, BiasGradient) {
  AMPC_SKIP_WITHOUT_GPU();
  // dW = dY^T X with db = the column sums of dY beside it (BGRADB).
  for (Size s : kSizes)
    for (DType t : kFloats) {
      SCOPED_TRACE(label("bgrad", t, s));
      OpCase c;
      c.op = "gemm";
      c.attrs = gemmAttrs();
      c.attrs.setString("epilogue", "bgrad");
      c.attrs.setFloat("beta", 0.0);
      c.attrs.setInt("trans_a", 1);
      // a = dY [batch = k, out = m], b = X [batch = k, in = n].
      c.inputs = {HostTensor::random(t, {s.k, s.m}, 81),
                  HostTensor::random(t, {s.k, s.n}, 82), HostTensor::absent()};
      c.outputs = {HostTensor::empty(t, {s.m, s.n}),
                   HostTensor::empty(t, {1, s.m})};
      expectCudaMatchesCpu(c, tolFor(t, s.k, false));
    }
}

} // namespace
} // namespace ampc::rt::cuda::test
