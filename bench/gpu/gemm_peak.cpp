//===- gemm_peak.cpp - what one plain cuBLASLt GEMM reaches on this GPU ---===//
//
// The ceiling the backend's GEMMs are measured against: D = A B for square
// (by default 8192) row-major operands of random data, the algorithm
// cuBLASLt's heuristic picks with a 32 MiB workspace, timed with CUDA
// events over --iters launches after a warm-up. Prints one JSON line:
//   {"dtype":"f16","m":8192,"n":8192,"k":8192,"iters":50,"ms":..,"tflops":..,
//    "device":".."}
// where ms is the mean time of one GEMM, tflops counts 2*M*N*K flops and
// device is the GPU's name.
// --dtype is f16, bf16 (f32 accumulation), f32 (exact f32) or tf32 (f32
// data on TF32 Tensor Cores). Without a GPU it prints CudaDevice's one-line
// error and exits 1.
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"
#include "runtime/cuda/CudaDevice.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace ampc::rt;
using namespace ampc::rt::cuda;

namespace {

struct Options {
  int64_t m = 8192, n = 8192, k = 8192;
  int iters = 50, warmup = 10;
  std::string dtype = "f16";
};

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      error = "usage: ampc-gemm-peak [--m M] [--n N] [--k K] "
              "[--dtype f16|bf16|f32|tf32] [--iters I] [--warmup W]";
      return false;
    }
    if (i + 1 >= argc) {
      error = "ampc-gemm-peak: " + a + " needs a value";
      return false;
    }
    std::string v = argv[++i];
    char *end = nullptr;
    long long x = std::strtoll(v.c_str(), &end, 10);
    bool isInt = end && *end == '\0' && !v.empty();
    if (a == "--dtype") {
      if (v != "f16" && v != "bf16" && v != "f32" && v != "tf32") {
        error = "ampc-gemm-peak: --dtype must be f16, bf16, f32 or tf32, "
                "got '" +
                v + "'";
        return false;
      }
      o.dtype = v;
      continue;
    }
    bool nonNegative = a == "--warmup";
    if (!isInt || x < (nonNegative ? 0 : 1)) {
      error = "ampc-gemm-peak: " + a +
              " must be an integer >= " + (nonNegative ? "0" : "1") +
              ", got '" + v + "'";
      return false;
    }
    if (a == "--m")
      o.m = x;
    else if (a == "--n")
      o.n = x;
    else if (a == "--k")
      o.k = x;
    else if (a == "--iters")
      o.iters = static_cast<int>(x);
    else if (a == "--warmup")
      o.warmup = static_cast<int>(x);
    else {
      error = "ampc-gemm-peak: unknown option '" + a + "'";
      return false;
    }
  }
  return true;
}

// Uniform [-1, 1) values in the operand's storage format.
std::vector<uint8_t> randomData(int64_t count, size_t elemBytes,
                                const std::string &dtype, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  std::vector<uint8_t> out(static_cast<size_t>(count) * elemBytes);
  for (int64_t i = 0; i < count; ++i) {
    float v = dist(gen);
    if (elemBytes == 4) {
      std::memcpy(&out[i * 4], &v, 4);
    } else {
      uint16_t h = dtype == "bf16" ? floatToBFloatBits(v) : floatToHalfBits(v);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

// Everything that can fail, as a Status; the JSON line on success.
Status run(const Options &o) {
  std::shared_ptr<CudaDevice> dev;
  AMPC_RETURN_IF_ERROR(CudaDevice::open(0, dev));
  AMPC_RETURN_IF_ERROR(dev->makeCurrent());
  const CudaApi &api = dev->api();

  cudaDataType_t data = CUDA_R_32F;
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  size_t es = 4;
  if (o.dtype == "f16") {
    data = CUDA_R_16F;
    es = 2;
  } else if (o.dtype == "bf16") {
    data = CUDA_R_16BF;
    es = 2;
  } else if (o.dtype == "tf32") {
    compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  }

  DeviceBuffer a, b, d, ws;
  {
    std::vector<uint8_t> ha = randomData(o.m * o.k, es, o.dtype, 1);
    AMPC_RETURN_IF_ERROR(a.upload(*dev, ha.data(), ha.size(), "gemm-peak A"));
  }
  {
    std::vector<uint8_t> hb = randomData(o.k * o.n, es, o.dtype, 2);
    AMPC_RETURN_IF_ERROR(b.upload(*dev, hb.data(), hb.size(), "gemm-peak B"));
  }
  AMPC_RETURN_IF_ERROR(d.allocate(*dev, o.m * o.n * es, "gemm-peak D"));
  const uint64_t wsBytes = uint64_t(32) << 20;
  AMPC_RETURN_IF_ERROR(ws.allocate(*dev, wsBytes, "gemm-peak workspace"));

  // Row-major D = A B as column-major D^T = B^T A^T: cuBLASLt's A is our B.
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  CUevent start = nullptr, stop = nullptr;
  CUstream stream = nullptr;
  // Released on every path out of the measurement.
  struct Cleanup {
    const CudaApi &api;
    cublasLtMatmulDesc_t &desc;
    cublasLtMatrixLayout_t &la, &lb, &ld;
    cublasLtMatmulPreference_t &pref;
    CUevent &start, &stop;
    CUstream &stream;
    ~Cleanup() {
      if (pref)
        (void)api.cublasLtMatmulPreferenceDestroy(pref);
      for (cublasLtMatrixLayout_t l : {la, lb, ld})
        if (l)
          (void)api.cublasLtMatrixLayoutDestroy(l);
      if (desc)
        (void)api.cublasLtMatmulDescDestroy(desc);
      if (start)
        (void)api.cuEventDestroy(start);
      if (stop)
        (void)api.cuEventDestroy(stop);
      if (stream)
        (void)api.cuStreamDestroy(stream);
    }
  } cleanup{api, desc, la, lb, ld, pref, start, stop, stream};

  AMPC_CUBLAS_CHECK(api, cublasLtMatmulDescCreate(&desc, compute, CUDA_R_32F));
  AMPC_CUBLAS_CHECK(api, cublasLtMatrixLayoutCreate(&la, data, o.n, o.k, o.n));
  AMPC_CUBLAS_CHECK(api, cublasLtMatrixLayoutCreate(&lb, data, o.k, o.m, o.k));
  AMPC_CUBLAS_CHECK(api, cublasLtMatrixLayoutCreate(&ld, data, o.n, o.m, o.n));
  AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceCreate(&pref));
  AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceSetAttribute(
                             pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                             &wsBytes, sizeof(wsBytes)));
  cublasLtMatmulHeuristicResult_t result{};
  int returned = 0;
  AMPC_CUBLAS_CHECK(api, cublasLtMatmulAlgoGetHeuristic(dev->cublasLt(), desc,
                                                        la, lb, ld, ld, pref, 1,
                                                        &result, &returned));
  if (returned == 0)
    return Status::error("cublasLtMatmulAlgoGetHeuristic found no algorithm "
                         "for a " +
                         o.dtype + " " + std::to_string(o.m) + "x" +
                         std::to_string(o.n) + "x" + std::to_string(o.k) +
                         " GEMM");

  AMPC_CU_CHECK(api, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
  AMPC_CU_CHECK(api, cuEventCreate(&start, CU_EVENT_DEFAULT));
  AMPC_CU_CHECK(api, cuEventCreate(&stop, CU_EVENT_DEFAULT));
  const float alpha = 1.f, beta = 0.f;
  auto gemm = [&]() -> Status {
    AMPC_CUBLAS_CHECK(
        api,
        cublasLtMatmul(dev->cublasLt(), desc, &alpha,
                       reinterpret_cast<const void *>(b.get()), la,
                       reinterpret_cast<const void *>(a.get()), lb, &beta,
                       reinterpret_cast<const void *>(d.get()), ld,
                       reinterpret_cast<void *>(d.get()), ld, &result.algo,
                       reinterpret_cast<void *>(ws.get()), wsBytes, stream));
    return Status::ok();
  };
  for (int i = 0; i < o.warmup; ++i)
    AMPC_RETURN_IF_ERROR(gemm());
  AMPC_CU_CHECK(api, cuStreamSynchronize(stream));
  AMPC_CU_CHECK(api, cuEventRecord(start, stream));
  for (int i = 0; i < o.iters; ++i)
    AMPC_RETURN_IF_ERROR(gemm());
  AMPC_CU_CHECK(api, cuEventRecord(stop, stream));
  AMPC_CU_CHECK(api, cuEventSynchronize(stop));
  float totalMs = 0;
  AMPC_CU_CHECK(api, cuEventElapsedTime(&totalMs, start, stop));

  double ms = totalMs / o.iters;
  double tflops = 2.0 * double(o.m) * double(o.n) * double(o.k) / (ms * 1e9);
  std::printf("{\"dtype\":\"%s\",\"m\":%lld,\"n\":%lld,\"k\":%lld,"
              "\"iters\":%d,\"ms\":%.4f,\"tflops\":%.1f,\"device\":\"%s\"}\n",
              o.dtype.c_str(), static_cast<long long>(o.m),
              static_cast<long long>(o.n), static_cast<long long>(o.k), o.iters,
              ms, tflops, dev->name().c_str());
  return Status::ok();
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parseArgs(argc, argv, o, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return 2;
  }
  Status s = run(o);
  if (!s) {
    std::fprintf(stderr, "ampc-gemm-peak: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}
