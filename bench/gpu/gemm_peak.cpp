//===- gemm_peak.cpp - what one plain cuBLASLt GEMM reaches on this GPU ---===//
//
// The ceiling the backend's GEMMs are measured against. Convention: every
// operand is row-major and the product is D = op(A) op(B), D of M x N,
// op(A) of M x K, op(B) of K x N; the layout letters say how A and B are
// stored: N as they are (A is M x K, B is K x N), T transposed (A is stored
// K x M, B is stored N x K). Shapes (M x N x K, layout):
//   square  8192 x 8192 x 8192 NN   the usual peak figure
//   fwd     2048 x 8192 x 8192 NT   the 8192 MLP's forward, Y = X W^T
//                                   (W stored out x in, as ONNX Gemm
//                                   transB=1 and torch.nn.Linear store it)
//   dx      2048 x 8192 x 8192 NN   its data gradient, dX = dY W
//   dw      8192 x 8192 x 2048 TN   its weight gradient, dW = dY^T X
// (bench/gpu/models.py: batch 2048, width 8192), or any MxNxK:LAYOUT.
// Row-major D = op(A) op(B) is issued to cuBLASLt (column-major) as
// D^T = op(B)^T op(A)^T, cuBLASLt's A being our B, as runtime/cuda/Gemm.cpp
// does.
//
// Data: uniform [-1, 1) (never zeros, which run faster than real data),
// D of the inputs' dtype; --dtype f16 and bf16 accumulate in f32
// (CUBLAS_COMPUTE_32F), f32 is exact f32, tf32 is f32 data on TF32 Tensor
// Cores (CUBLAS_COMPUTE_32F_FAST_TF32). The algorithm is the first that
// cuBLASLt's heuristic gives with a 32 MiB workspace (the backend's).
//
// Timing, per (dtype, shape): GEMMs back to back for at least --warmup-s
// (0.3 s) of host time, so the clocks ramp up from idle; then --repeats (5)
// repeats of --iters (200) GEMMs, each repeat between two CUDA events on one
// stream. ms is the median repeat's time per GEMM, tflops 2*M*N*K over it.
// One JSON line per (dtype, shape), printed as soon as it is measured:
//   {"kind":"gemm-peak","dtype":"f16","shape":"fwd","m":2048,"n":8192,
//    "k":8192,"layout":"NT","iters":200,"repeats":5,"warmup_s":0.30,
//    "warmup_iters":215,"ms":..,"tflops":..,"ms_repeats":[..],
//    "tflops_repeats":[..],"device":".."}
//
// --smoke instead checks that the backend starts and that the layouts above
// mean what they say: small GEMMs of every layout and --dtype against a
// host f64 product of the same rounded inputs (D poisoned with NaN first,
// so an element left unwritten fails), and one JSON line with where the
// driver and cuBLASLt were loaded from and each check's error.
//
// Every CUDA and cuBLASLt call's status is checked; the first failure is
// printed as one line ("ampc-gemm-peak: cuInit(0) failed: ...", or why CUDA
// cannot be used here) and the exit code is 1 (2 for a bad command line).
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"
#include "runtime/cuda/CudaDevice.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

using namespace ampc::rt;
using namespace ampc::rt::cuda;

namespace {

struct Shape {
  std::string name;
  int64_t m, n, k;
  bool transA, transB; // stored transposed
  std::string layout() const {
    return std::string(transA ? "T" : "N") + (transB ? "T" : "N");
  }
};

const std::vector<Shape> &namedShapes() {
  static const std::vector<Shape> shapes = {
      {"square", 8192, 8192, 8192, false, false},
      {"fwd", 2048, 8192, 8192, false, true},
      {"dx", 2048, 8192, 8192, false, false},
      {"dw", 8192, 8192, 2048, true, false},
  };
  return shapes;
}

struct Options {
  std::vector<std::string> dtypes = {"f16", "bf16", "tf32", "f32"};
  std::vector<Shape> shapes = namedShapes();
  int iters = 200, repeats = 5;
  double warmupS = 0.3;
  bool smoke = false;
};

const char *kUsage =
    "usage: ampc-gemm-peak [--dtype f16,bf16,tf32,f32] "
    "[--shape square,fwd,dx,dw|MxNxK:LAYOUT,...]\n"
    "                      [--iters 200] [--repeats 5] [--warmup-s 0.3] "
    "[--smoke]\n";

std::vector<std::string> splitList(const std::string &s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ','))
    if (!item.empty())
      out.push_back(item);
  return out;
}

// "2048x8192x8192:NT" -> a shape named after itself.
bool parseShape(const std::string &s, Shape &out) {
  for (const Shape &n : namedShapes())
    if (n.name == s) {
      out = n;
      return true;
    }
  long long m = 0, n = 0, k = 0;
  char a = 0, b = 0;
  int used = 0;
  if (std::sscanf(s.c_str(), "%lldx%lldx%lld:%c%c%n", &m, &n, &k, &a, &b,
                  &used) != 5 ||
      used != static_cast<int>(s.size()) || m < 1 || n < 1 || k < 1 ||
      (a != 'N' && a != 'T') || (b != 'N' && b != 'T'))
    return false;
  out = {s, m, n, k, a == 'T', b == 'T'};
  return true;
}

bool parseArgs(int argc, char **argv, Options &o, std::string &error) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      error = kUsage;
      return false;
    }
    if (a == "--smoke") {
      o.smoke = true;
      continue;
    }
    if (i + 1 >= argc) {
      error = "ampc-gemm-peak: " + a + " needs a value";
      return false;
    }
    std::string v = argv[++i];
    if (a == "--dtype") {
      o.dtypes = splitList(v);
      for (const std::string &d : o.dtypes)
        if (d != "f16" && d != "bf16" && d != "f32" && d != "tf32") {
          error = "ampc-gemm-peak: --dtype takes f16, bf16, f32 and tf32, "
                  "got '" +
                  d + "'";
          return false;
        }
      if (o.dtypes.empty()) {
        error = "ampc-gemm-peak: --dtype is empty";
        return false;
      }
      continue;
    }
    if (a == "--shape") {
      o.shapes.clear();
      for (const std::string &s : splitList(v)) {
        Shape sh;
        if (!parseShape(s, sh)) {
          error = "ampc-gemm-peak: --shape '" + s +
                  "' is neither square, fwd, dx, dw nor MxNxK:LAYOUT "
                  "(LAYOUT: NN, NT, TN or TT)";
          return false;
        }
        o.shapes.push_back(sh);
      }
      if (o.shapes.empty()) {
        error = "ampc-gemm-peak: --shape is empty";
        return false;
      }
      continue;
    }
    char *end = nullptr;
    if (a == "--warmup-s") {
      double x = std::strtod(v.c_str(), &end);
      if (v.empty() || *end || !(x >= 0)) {
        error = "ampc-gemm-peak: --warmup-s must be a number >= 0, got '" + v +
                "'";
        return false;
      }
      o.warmupS = x;
      continue;
    }
    long long x = std::strtoll(v.c_str(), &end, 10);
    if (v.empty() || *end || x < 1 || x > 1000000) {
      error = "ampc-gemm-peak: " + a + " must be an integer in [1, 1e6], got '" +
              v + "'";
      return false;
    }
    if (a == "--iters")
      o.iters = static_cast<int>(x);
    else if (a == "--repeats")
      o.repeats = static_cast<int>(x);
    else {
      error = "ampc-gemm-peak: unknown option '" + a + "'\n" + kUsage;
      return false;
    }
  }
  return true;
}

std::string jsonEscape(const std::string &s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\')
      out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20)
      out += ' ';
    else
      out += c;
  }
  return out;
}

struct DtypeInfo {
  cudaDataType_t data;
  cublasComputeType_t compute;
  size_t bytes;
};

DtypeInfo dtypeInfo(const std::string &d) {
  if (d == "f16")
    return {CUDA_R_16F, CUBLAS_COMPUTE_32F, 2};
  if (d == "bf16")
    return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, 2};
  if (d == "tf32")
    return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, 4};
  return {CUDA_R_32F, CUBLAS_COMPUTE_32F, 4};
}

// Uniform [-1, 1) floats from SplitMix64: fast enough for 67 M values.
void fillUniform(std::vector<float> &out, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (float &v : out) {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = static_cast<float>(z >> 40) * (2.0f / 16777216.0f) - 1.0f;
  }
}

// The first `count` values in the dtype's storage format.
std::vector<uint8_t> encode(const std::vector<float> &v, size_t count,
                            const std::string &dtype) {
  size_t es = dtypeInfo(dtype).bytes;
  std::vector<uint8_t> out(count * es);
  for (size_t i = 0; i < count; ++i) {
    if (es == 4) {
      std::memcpy(&out[i * 4], &v[i], 4);
    } else {
      uint16_t h = dtype == "bf16" ? floatToBFloatBits(v[i])
                                   : floatToHalfBits(v[i]);
      std::memcpy(&out[i * 2], &h, 2);
    }
  }
  return out;
}

// Element i of a buffer in the dtype's storage format, as a double.
double decode(const std::vector<uint8_t> &b, size_t i,
              const std::string &dtype) {
  if (dtypeInfo(dtype).bytes == 4) {
    float f;
    std::memcpy(&f, &b[i * 4], 4);
    return f;
  }
  uint16_t h;
  std::memcpy(&h, &b[i * 2], 2);
  return dtype == "bf16" ? bfloatBitsToFloat(h) : halfBitsToFloat(h);
}

// One cuBLASLt matmul, set up for a (dtype, shape) on device buffers;
// release() destroys what it made, checking each status.
class Matmul {
public:
  explicit Matmul(CudaDevice &dev) : dev_(dev), api_(dev.api()) {}
  Matmul(const Matmul &) = delete;
  Matmul &operator=(const Matmul &) = delete;
  ~Matmul() { (void)release(); } // an error path: the first error is out

  Status init(const std::string &dtype, const Shape &s, CUdeviceptr a,
              CUdeviceptr b, CUdeviceptr d, CUdeviceptr ws, uint64_t wsBytes,
              CUstream stream) {
    DtypeInfo t = dtypeInfo(dtype);
    a_ = a, b_ = b, d_ = d, ws_ = ws, wsBytes_ = wsBytes, stream_ = stream;
    // cuBLASLt computes D^T (N x M, column-major, ld N) = op(B)^T op(A)^T.
    // Row-major B stored K x N reads, column-major, as B^T (N x K, ld N):
    // no transpose; stored N x K (T) it reads as B (K x N, ld K): transpose.
    // Likewise A: stored M x K reads as A^T (K x M, ld K); stored K x M (T)
    // reads as A (M x K, ld M).
    cublasOperation_t opB = s.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opA = s.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    AMPC_CUBLAS_CHECK(api_,
                      cublasLtMatmulDescCreate(&desc_, t.compute, CUDA_R_32F));
    AMPC_CUBLAS_CHECK(api_, cublasLtMatmulDescSetAttribute(
                                desc_, CUBLASLT_MATMUL_DESC_TRANSA, &opB,
                                sizeof(opB)));
    AMPC_CUBLAS_CHECK(api_, cublasLtMatmulDescSetAttribute(
                                desc_, CUBLASLT_MATMUL_DESC_TRANSB, &opA,
                                sizeof(opA)));
    // Each operand by the shape it is stored in, row-major R x C: to
    // cuBLASLt a column-major C x R matrix with leading dimension C.
    auto rowMajor = [&](cublasLtMatrixLayout_t *l, int64_t rows,
                        int64_t cols) -> Status {
      AMPC_CUBLAS_CHECK(
          api_, cublasLtMatrixLayoutCreate(l, t.data, cols, rows, cols));
      return Status::ok();
    };
    AMPC_RETURN_IF_ERROR(s.transB ? rowMajor(&lb_, s.n, s.k)
                                  : rowMajor(&lb_, s.k, s.n));
    AMPC_RETURN_IF_ERROR(s.transA ? rowMajor(&la_, s.k, s.m)
                                  : rowMajor(&la_, s.m, s.k));
    AMPC_RETURN_IF_ERROR(rowMajor(&ld_, s.m, s.n));
    AMPC_CUBLAS_CHECK(api_, cublasLtMatmulPreferenceCreate(&pref_));
    AMPC_CUBLAS_CHECK(api_, cublasLtMatmulPreferenceSetAttribute(
                                pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                &wsBytes_, sizeof(wsBytes_)));
    int returned = 0;
    AMPC_CUBLAS_CHECK(api_, cublasLtMatmulAlgoGetHeuristic(
                                dev_.cublasLt(), desc_, lb_, la_, ld_, ld_,
                                pref_, 1, &result_, &returned));
    if (returned == 0 || result_.state != CUBLAS_STATUS_SUCCESS)
      return Status::error(
          "cublasLtMatmulAlgoGetHeuristic found no algorithm for a " + dtype +
          " " + std::to_string(s.m) + "x" + std::to_string(s.n) + "x" +
          std::to_string(s.k) + " " + s.layout() + " GEMM");
    return Status::ok();
  }

  Status launch() {
    const float alpha = 1.f, beta = 0.f;
    AMPC_CUBLAS_CHECK(
        api_, cublasLtMatmul(dev_.cublasLt(), desc_, &alpha,
                             reinterpret_cast<const void *>(b_), lb_,
                             reinterpret_cast<const void *>(a_), la_, &beta,
                             reinterpret_cast<const void *>(d_), ld_,
                             reinterpret_cast<void *>(d_), ld_, &result_.algo,
                             reinterpret_cast<void *>(ws_), wsBytes_, stream_));
    return Status::ok();
  }

  Status release() {
    Status first = Status::ok();
    auto keep = [&](cublasStatus_t r, const char *call) {
      if (r != CUBLAS_STATUS_SUCCESS && first)
        first = cublasError(r, call);
    };
    if (pref_)
      keep(api_.cublasLtMatmulPreferenceDestroy(pref_),
           "cublasLtMatmulPreferenceDestroy");
    for (cublasLtMatrixLayout_t *l : {&la_, &lb_, &ld_})
      if (*l)
        keep(api_.cublasLtMatrixLayoutDestroy(*l),
             "cublasLtMatrixLayoutDestroy");
    if (desc_)
      keep(api_.cublasLtMatmulDescDestroy(desc_), "cublasLtMatmulDescDestroy");
    pref_ = nullptr, la_ = lb_ = ld_ = nullptr, desc_ = nullptr;
    return first;
  }

private:
  CudaDevice &dev_;
  const CudaApi &api_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t la_ = nullptr, lb_ = nullptr, ld_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulHeuristicResult_t result_{};
  CUdeviceptr a_ = 0, b_ = 0, d_ = 0, ws_ = 0;
  uint64_t wsBytes_ = 0;
  CUstream stream_ = nullptr;
};

// A stream and two events; release() checks each destroy.
struct Timing {
  const CudaApi &api;
  CUstream stream = nullptr;
  CUevent start = nullptr, stop = nullptr;
  explicit Timing(const CudaApi &a) : api(a) {}
  ~Timing() { (void)release(); }
  Status init() {
    AMPC_CU_CHECK(api, cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING));
    AMPC_CU_CHECK(api, cuEventCreate(&start, CU_EVENT_DEFAULT));
    AMPC_CU_CHECK(api, cuEventCreate(&stop, CU_EVENT_DEFAULT));
    return Status::ok();
  }
  Status release() {
    Status first = Status::ok();
    auto keep = [&](CUresult r, const char *call) {
      if (r != CUDA_SUCCESS && first)
        first = cuError(api, r, call);
    };
    if (start)
      keep(api.cuEventDestroy(start), "cuEventDestroy");
    if (stop)
      keep(api.cuEventDestroy(stop), "cuEventDestroy");
    if (stream)
      keep(api.cuStreamDestroy(stream), "cuStreamDestroy");
    start = stop = nullptr, stream = nullptr;
    return first;
  }
};

const uint64_t kWorkspaceBytes = uint64_t(32) << 20;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

std::string jsonList(const std::vector<double> &v, const char *fmt) {
  std::string out = "[";
  char b[32];
  for (size_t i = 0; i < v.size(); ++i) {
    std::snprintf(b, sizeof b, fmt, v[i]);
    out += (i ? "," : "") + std::string(b);
  }
  return out + "]";
}

Status measure(CudaDevice &dev, const Options &o) {
  const CudaApi &api = dev.api();
  int64_t maxA = 0, maxB = 0, maxD = 0;
  for (const Shape &s : o.shapes) {
    maxA = std::max(maxA, s.m * s.k);
    maxB = std::max(maxB, s.k * s.n);
    maxD = std::max(maxD, s.m * s.n);
  }
  std::vector<float> hostA(maxA), hostB(maxB);
  fillUniform(hostA, 1);
  fillUniform(hostB, 2);
  Timing t(api);
  AMPC_RETURN_IF_ERROR(t.init());
  DeviceBuffer ws;
  AMPC_RETURN_IF_ERROR(ws.allocate(dev, kWorkspaceBytes, "gemm-peak workspace"));
  for (const std::string &dtype : o.dtypes) {
    size_t es = dtypeInfo(dtype).bytes;
    DeviceBuffer a, b, d;
    {
      std::vector<uint8_t> h = encode(hostA, maxA, dtype);
      AMPC_RETURN_IF_ERROR(a.upload(dev, h.data(), h.size(), "gemm-peak A"));
    }
    {
      std::vector<uint8_t> h = encode(hostB, maxB, dtype);
      AMPC_RETURN_IF_ERROR(b.upload(dev, h.data(), h.size(), "gemm-peak B"));
    }
    AMPC_RETURN_IF_ERROR(d.allocate(dev, maxD * es, "gemm-peak D"));
    // A pageable cuMemcpyHtoD may return before its DMA ends, and the GEMMs
    // run on a non-blocking stream that does not wait for it.
    AMPC_CU_CHECK(api, cuCtxSynchronize());
    for (const Shape &s : o.shapes) {
      Matmul mm(dev);
      AMPC_RETURN_IF_ERROR(mm.init(dtype, s, a.get(), b.get(), d.get(),
                                   ws.get(), kWorkspaceBytes, t.stream));
      // Warm-up: batches of GEMMs until --warmup-s of host time has passed
      // (at least one batch), so the clocks have ramped up from idle.
      using Clock = std::chrono::steady_clock;
      auto w0 = Clock::now();
      int warmupIters = 0;
      double warmed = 0;
      do {
        for (int i = 0; i < 10; ++i)
          AMPC_RETURN_IF_ERROR(mm.launch());
        warmupIters += 10;
        AMPC_CU_CHECK(api, cuStreamSynchronize(t.stream));
        warmed = std::chrono::duration<double>(Clock::now() - w0).count();
      } while (warmed < o.warmupS);
      std::vector<double> ms, tflops;
      double flop = 2.0 * double(s.m) * double(s.n) * double(s.k);
      for (int r = 0; r < o.repeats; ++r) {
        AMPC_CU_CHECK(api, cuEventRecord(t.start, t.stream));
        for (int i = 0; i < o.iters; ++i)
          AMPC_RETURN_IF_ERROR(mm.launch());
        AMPC_CU_CHECK(api, cuEventRecord(t.stop, t.stream));
        AMPC_CU_CHECK(api, cuEventSynchronize(t.stop));
        float total = 0;
        AMPC_CU_CHECK(api, cuEventElapsedTime(&total, t.start, t.stop));
        ms.push_back(double(total) / o.iters);
        tflops.push_back(flop / (ms.back() * 1e9));
      }
      AMPC_RETURN_IF_ERROR(mm.release());
      double med = median(ms);
      std::printf(
          "{\"kind\":\"gemm-peak\",\"dtype\":\"%s\",\"shape\":\"%s\","
          "\"m\":%lld,\"n\":%lld,\"k\":%lld,\"layout\":\"%s\",\"iters\":%d,"
          "\"repeats\":%d,\"warmup_s\":%.3f,\"warmup_iters\":%d,"
          "\"ms\":%.5f,\"tflops\":%.2f,\"ms_repeats\":%s,"
          "\"tflops_repeats\":%s,\"device\":\"%s\"}\n",
          dtype.c_str(), jsonEscape(s.name).c_str(),
          static_cast<long long>(s.m), static_cast<long long>(s.n),
          static_cast<long long>(s.k), s.layout().c_str(), o.iters, o.repeats,
          warmed, warmupIters, med, flop / (med * 1e9),
          jsonList(ms, "%.5f").c_str(), jsonList(tflops, "%.2f").c_str(),
          jsonEscape(dev.name()).c_str());
      std::fflush(stdout);
    }
  }
  return t.release();
}

// Small GEMMs of every layout against a host f64 product of the same
// rounded inputs.
Status smoke(CudaDevice &dev, const Options &o, bool &allOk) {
  const CudaApi &api = dev.api();
  Timing t(api);
  AMPC_RETURN_IF_ERROR(t.init());
  DeviceBuffer ws;
  AMPC_RETURN_IF_ERROR(ws.allocate(dev, kWorkspaceBytes, "gemm-peak workspace"));
  const int64_t M = 96, N = 80, K = 72;
  std::vector<float> hostA(M * K), hostB(K * N);
  fillUniform(hostA, 3);
  fillUniform(hostB, 4);
  std::string checks;
  allOk = true;
  for (const std::string &dtype : o.dtypes) {
    // Tolerance on max |D - ref| / max |ref|: the output's rounding (f16
    // 2^-11, bf16 2^-8) plus the product's (tf32 rounds inputs to 10
    // mantissa bits); f32 is f32 accumulation of exact products.
    double tol = dtype == "f32"    ? 1e-5
                 : dtype == "tf32" ? 1e-2
                 : dtype == "f16"  ? 5e-3
                                   : 2e-2;
    std::vector<uint8_t> ha = encode(hostA, M * K, dtype),
                         hb = encode(hostB, K * N, dtype);
    DeviceBuffer a, b, d;
    AMPC_RETURN_IF_ERROR(a.upload(dev, ha.data(), ha.size(), "smoke A"));
    AMPC_RETURN_IF_ERROR(b.upload(dev, hb.data(), hb.size(), "smoke B"));
    size_t es = dtypeInfo(dtype).bytes;
    for (const char *layout : {"NN", "NT", "TN", "TT"}) {
      Shape s{layout, M, N, K, layout[0] == 'T', layout[1] == 'T'};
      // All-ones bytes: NaN in f32, f16 and bf16.
      std::vector<uint8_t> poison(M * N * es, 0xff);
      AMPC_RETURN_IF_ERROR(
          d.upload(dev, poison.data(), poison.size(), "smoke D"));
      AMPC_CU_CHECK(api, cuCtxSynchronize()); // as in measure()
      Matmul mm(dev);
      AMPC_RETURN_IF_ERROR(mm.init(dtype, s, a.get(), b.get(), d.get(),
                                   ws.get(), kWorkspaceBytes, t.stream));
      AMPC_RETURN_IF_ERROR(mm.launch());
      AMPC_CU_CHECK(api, cuStreamSynchronize(t.stream));
      AMPC_RETURN_IF_ERROR(mm.release());
      std::vector<uint8_t> hd(M * N * es);
      AMPC_CU_CHECK(api, cuMemcpyDtoH(hd.data(), d.get(), hd.size()));
      // The same buffers read as op(A) (M x K) and op(B) (K x N).
      double maxErr = 0, maxRef = 0;
      bool finite = true;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double ref = 0;
          for (int64_t p = 0; p < K; ++p) {
            double av = decode(ha, s.transA ? p * M + i : i * K + p, dtype);
            double bv = decode(hb, s.transB ? j * K + p : p * N + j, dtype);
            ref += av * bv;
          }
          double got = decode(hd, i * N + j, dtype);
          if (!std::isfinite(got))
            finite = false;
          maxErr = std::max(maxErr, std::fabs(got - ref));
          maxRef = std::max(maxRef, std::fabs(ref));
        }
      double rel = maxRef > 0 ? maxErr / maxRef : maxErr;
      bool ok = finite && rel <= tol;
      allOk = allOk && ok;
      char b2[256];
      std::snprintf(b2, sizeof b2,
                    "%s{\"dtype\":\"%s\",\"layout\":\"%s\",\"m\":%lld,"
                    "\"n\":%lld,\"k\":%lld,\"max_rel_err\":%s,\"tol\":%g,"
                    "\"ok\":%s}",
                    checks.empty() ? "" : ",", dtype.c_str(), layout,
                    static_cast<long long>(M), static_cast<long long>(N),
                    static_cast<long long>(K),
                    finite ? std::to_string(rel).c_str() : "null", tol,
                    ok ? "true" : "false");
      checks += b2;
    }
  }
  int driver = 0, lt = static_cast<int>(api.cublasLtGetVersion());
  AMPC_CU_CHECK(api, cuDriverGetVersion(&driver));
  std::printf("{\"kind\":\"smoke\",\"ok\":%s,\"device\":\"%s\","
              "\"driver_version\":%d,\"cublaslt_version\":%d,"
              "\"libcuda\":\"%s\",\"libcublasLt\":\"%s\",\"checks\":[%s]}\n",
              allOk ? "true" : "false", jsonEscape(dev.describe()).c_str(),
              driver, lt, jsonEscape(api.driverPath).c_str(),
              jsonEscape(api.cublasLtPath).c_str(), checks.c_str());
  std::fflush(stdout);
  return t.release();
}

Status run(const Options &o, bool &allOk) {
  std::shared_ptr<CudaDevice> dev;
  AMPC_RETURN_IF_ERROR(CudaDevice::open(0, dev));
  AMPC_RETURN_IF_ERROR(dev->makeCurrent());
  allOk = true;
  if (o.smoke)
    return smoke(*dev, o, allOk);
  return measure(*dev, o);
}

} // namespace

int main(int argc, char **argv) {
  Options o;
  std::string error;
  if (!parseArgs(argc, argv, o, error)) {
    std::fprintf(stderr, "%s\n", error.c_str());
    return error == kUsage ? 0 : 2;
  }
  bool allOk = true;
  Status s = run(o, allOk);
  if (!s) {
    std::fprintf(stderr, "ampc-gemm-peak: %s\n", s.message().c_str());
    return 1;
  }
  if (!allOk) {
    std::fprintf(stderr, "ampc-gemm-peak: --smoke: a GEMM differs from the "
                         "host product beyond its tolerance (see checks)\n");
    return 1;
  }
  return 0;
}
