//===- Gemm.cpp - gemm and matmul through cuBLASLt ------------------------===//
//
// The ops of runtime/cpu/Contraction.cpp with the same meaning: gemm is
// alpha * op(a) * op(b) + beta * c with c broadcasting to [M, N]; matmul is
// numpy's (1-D promotion, broadcast batch dims). f16/bf16 run on Tensor
// Cores with f32 accumulation and one rounding of the output, which is what
// the CPU backend computes up to summation order (graph.accumulate, when
// the compiler sets it, is f32: ops::checkKernel refuses anything else); f32
// uses TF32 only when the session allows it; f64 runs in f64. Integer
// contractions have no cuBLASLt path and are refused at prepare time.
//
// Tensors are row-major and cuBLASLt is column-major, so every call is
// issued transposed: D^T = op(B)^T op(A)^T, with our b as cuBLASLt's A. A
// row-major [r0, r1] matrix is then a column-major r1 x r0 one, ld r1.
//
// c reaches cuBLASLt in one of three ways: a vector along the output's last
// dim (beta 1) is the BIAS epilogue; a full [M, N] c is cuBLASLt's C with
// beta; any other broadcast (and beta 0, where the CPU's 0 * inf must still
// give NaN) is written into the output first by ampc_gemm_fill_c_* and
// accumulated into. A gemm kernel's `epilogue` (the compiler's decision,
// runtime/GemmEpilogue.h) becomes the cuBLASLt epilogue GemmPostOp.cpp maps
// it to, or, where cuBLASLt has none for the layout or type, a plain GEMM
// followed by ampc's own kernel.
//
// Algorithms come from cublasLtMatmulAlgoGetHeuristic at prepare time and
// are cached for the process by problem (shape, dtype, transposes, batch
// layout, epilogue, alignment), so identical layers ask once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/GemmPostOp.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"
#include "runtime/ops/ContractionPlan.h"
#include "runtime/ops/EpilogueChecks.h"

#include <algorithm>
#include <climits>
#include <map>
#include <mutex>
#include <tuple>

namespace ampc::rt::cuda {
namespace {

using ops::OpCall;

// What an algorithm may use; NVIDIA's recommendation for Hopper.
constexpr size_t kMaxWorkspaceBytes = size_t(32) << 20;

// The largest power of two, up to 256, that divides every value OR'ed into
// `bits` (cuBLASLt's alignment preferences default to 256).
uint32_t alignmentOf(uint64_t bits) {
  if (bits == 0)
    return 256;
  return static_cast<uint32_t>(std::min<uint64_t>(256, bits & (~bits + 1)));
}

struct LtTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
};

Status ltTypesFor(const char *op, DType t, bool allowTf32, LtTypes &out) {
  switch (t) {
  case DType::F16:
    out = {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    return Status::ok();
  case DType::BF16:
    out = {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F};
    return Status::ok();
  case DType::F32:
    out = {CUDA_R_32F,
           allowTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F,
           CUDA_R_32F};
    return Status::ok();
  case DType::F64:
    out = {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F};
    return Status::ok();
  default:
    return Status::error(std::string("the CUDA backend's ") + op +
                         " takes f32, f16, bf16 or f64 operands (cuBLASLt), "
                         "got " +
                         std::string(name(t)));
  }
}

// One column-major cuBLASLt operand.
struct LtMatrix {
  uint64_t rows = 0, cols = 0;
  int64_t ld = 1;
  int64_t batchStride = 0; // elements; 0 for an operand shared by the batch
  auto key() const { return std::make_tuple(rows, cols, ld, batchStride); }
};

// A row-major [r0, r1] matrix seen by cuBLASLt.
LtMatrix rowMajor(int64_t r0, int64_t r1, int64_t batchStride = 0) {
  LtMatrix m;
  m.rows = static_cast<uint64_t>(r1);
  m.cols = static_cast<uint64_t>(r0);
  m.ld = std::max<int64_t>(r1, 1);
  m.batchStride = batchStride;
  return m;
}

// Everything the algorithm choice depends on: the process-wide cache key.
struct LtProblem {
  int device = 0;
  DType dtype = DType::F32;
  bool tf32 = false;
  bool transA = false, transB = false; // cuBLASLt's A (our b) and B (our a)
  LtMatrix a, b, d;                    // C has D's layout
  int32_t batch = 1;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
  int64_t auxLd = 0;
  // cuBLASLt's preferences for A, B, C, D; the bias's and the aux buffer's
  // are read by the heuristic from the pointers themselves, so they are
  // part of the key too.
  uint32_t alignA = 256, alignB = 256, alignC = 256, alignD = 256,
           alignBias = 256, alignAux = 256;

  auto key() const {
    return std::make_tuple(device, static_cast<int>(dtype), tf32, transA,
                           transB, a.key(), b.key(), d.key(), batch,
                           static_cast<int>(epilogue), auxLd, alignA, alignB,
                           alignC, alignD, alignBias, alignAux);
  }
  bool operator<(const LtProblem &o) const { return key() < o.key(); }
};

struct CachedAlgo {
  cublasLtMatmulAlgo_t algo;
  size_t workspaceBytes = 0;
};

std::mutex &algoCacheMutex() {
  static std::mutex mu;
  return mu;
}
std::map<LtProblem, CachedAlgo> &algoCache() {
  static std::map<LtProblem, CachedAlgo> cache;
  return cache;
}

// One cuBLASLt matmul, described once: its descriptors and algorithm.
class LtMatmul {
public:
  LtMatmul() = default;
  LtMatmul(const LtMatmul &) = delete;
  LtMatmul &operator=(const LtMatmul &) = delete;
  ~LtMatmul() {
    if (!api_)
      return;
    // Destruction cannot report; the handles are plain host objects.
    if (pref_)
      (void)api_->cublasLtMatmulPreferenceDestroy(pref_);
    for (cublasLtMatrixLayout_t l : {aDesc_, bDesc_, dDesc_})
      if (l)
        (void)api_->cublasLtMatrixLayoutDestroy(l);
    if (desc_)
      (void)api_->cublasLtMatmulDescDestroy(desc_);
  }

  // Builds the descriptors for `p` (with `epi`'s buffers when p.epilogue
  // is not DEFAULT) and picks the algorithm. `what` names the kernel in
  // errors. Sets `found` false, without error, when cuBLASLt has no
  // algorithm for the problem, so a caller can try another formulation.
  Status prepare(CudaDevice &device, const LtProblem &p, const LtEpilogue &epi,
                 const char *what, bool &found) {
    const CudaApi &api = device.api();
    api_ = &api;
    LtTypes t;
    AMPC_RETURN_IF_ERROR(ltTypesFor(what, p.dtype, p.tf32, t));
    AMPC_CUBLAS_CHECK(api,
                      cublasLtMatmulDescCreate(&desc_, t.compute, t.scale));
    cublasOperation_t opA = p.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
    cublasOperation_t opB = p.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
    AMPC_CUBLAS_CHECK(
        api, cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA,
                                            &opA, sizeof(opA)));
    AMPC_CUBLAS_CHECK(
        api, cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB,
                                            &opB, sizeof(opB)));
    if (p.epilogue != CUBLASLT_EPILOGUE_DEFAULT) {
      cublasLtEpilogue_t kind = p.epilogue;
      AMPC_CUBLAS_CHECK(
          api, cublasLtMatmulDescSetAttribute(
                   desc_, CUBLASLT_MATMUL_DESC_EPILOGUE, &kind, sizeof(kind)));
    }
    // The bias (or bias gradient) and the GELU input have D's type
    // (cuBLASLt's default for non-IMMA, non-fp8 kernels), set explicitly so
    // the intent is on the descriptor. Pointers are set before the
    // heuristic, which reads their alignment.
    int32_t dataType = t.data;
    if (epi.bias) {
      const void *biasPtr = reinterpret_cast<const void *>(epi.bias);
      AMPC_CUBLAS_CHECK(api, cublasLtMatmulDescSetAttribute(
                                 desc_, CUBLASLT_MATMUL_DESC_BIAS_DATA_TYPE,
                                 &dataType, sizeof(dataType)));
      AMPC_CUBLAS_CHECK(api, cublasLtMatmulDescSetAttribute(
                                 desc_, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                 &biasPtr, sizeof(biasPtr)));
    }
    if (epi.aux) {
      const void *auxPtr = reinterpret_cast<const void *>(epi.aux);
      int64_t ld = epi.auxLd;
      AMPC_CUBLAS_CHECK(api,
                        cublasLtMatmulDescSetAttribute(
                            desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_DATA_TYPE,
                            &dataType, sizeof(dataType)));
      AMPC_CUBLAS_CHECK(api, cublasLtMatmulDescSetAttribute(
                                 desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_LD,
                                 &ld, sizeof(ld)));
      AMPC_CUBLAS_CHECK(api,
                        cublasLtMatmulDescSetAttribute(
                            desc_, CUBLASLT_MATMUL_DESC_EPILOGUE_AUX_POINTER,
                            &auxPtr, sizeof(auxPtr)));
    }
    AMPC_RETURN_IF_ERROR(layout(api, t.data, p.a, p.batch, aDesc_));
    AMPC_RETURN_IF_ERROR(layout(api, t.data, p.b, p.batch, bDesc_));
    AMPC_RETURN_IF_ERROR(layout(api, t.data, p.d, p.batch, dDesc_));

    {
      std::lock_guard<std::mutex> lock(algoCacheMutex());
      auto it = algoCache().find(p);
      if (it != algoCache().end()) {
        algo_ = it->second;
        found = true;
        return Status::ok();
      }
    }
    AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceCreate(&pref_));
    uint64_t maxWs = kMaxWorkspaceBytes;
    AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceSetAttribute(
                               pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                               &maxWs, sizeof(maxWs)));
    const std::pair<cublasLtMatmulPreferenceAttributes_t, uint32_t> aligns[] = {
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, p.alignA},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, p.alignB},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, p.alignC},
        {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, p.alignD}};
    for (const auto &[attr, value] : aligns)
      AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceSetAttribute(
                                 pref_, attr, &value, sizeof(value)));
    // Split-K partial sums only in the compute type (f32): the in-place and
    // output-type schemes add them in the output's type, and f16 partials
    // of a sum that cancels lose its small result (the first GPU run: a
    // 130x72x100 f16 product off by 0.004 at -0.01; the CPU backend's
    // contract is f32 accumulation and one rounding).
    const uint32_t reductions = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    AMPC_CUBLAS_CHECK(api, cublasLtMatmulPreferenceSetAttribute(
                               pref_, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                               &reductions, sizeof(reductions)));
    cublasLtMatmulHeuristicResult_t result{};
    int returned = 0;
    cublasStatus_t r = api.cublasLtMatmulAlgoGetHeuristic(
        device.cublasLt(), desc_, aDesc_, bDesc_, dDesc_, dDesc_, pref_, 1,
        &result, &returned);
    // NOT_SUPPORTED is how cuBLASLt says that no algorithm fits.
    if (r == CUBLAS_STATUS_NOT_SUPPORTED ||
        (r == CUBLAS_STATUS_SUCCESS &&
         (returned == 0 || result.state != CUBLAS_STATUS_SUCCESS))) {
      found = false;
      return Status::ok();
    }
    if (r != CUBLAS_STATUS_SUCCESS)
      return cublasError(r, "cublasLtMatmulAlgoGetHeuristic");
    algo_.algo = result.algo;
    algo_.workspaceBytes = result.workspaceSize;
    found = true;
    std::lock_guard<std::mutex> lock(algoCacheMutex());
    algoCache().emplace(p, algo_);
    return Status::ok();
  }

  size_t workspaceBytes() const { return algo_.workspaceBytes; }

  // D = alpha * op(A) op(B) + beta * C (cuBLASLt's operands), enqueued.
  Status launch(const LaunchContext &ctx, const void *alpha, CUdeviceptr a,
                CUdeviceptr b, const void *beta, CUdeviceptr c, CUdeviceptr d,
                const char *what) const {
    if (ctx.workspaceBytes < algo_.workspaceBytes)
      return Status::error(std::string(what) +
                           ": the session's workspace has " +
                           std::to_string(ctx.workspaceBytes) +
                           " bytes, the chosen cuBLASLt algorithm needs " +
                           std::to_string(algo_.workspaceBytes));
    const CudaApi &api = ctx.device.api();
    AMPC_CUBLAS_CHECK(
        api, cublasLtMatmul(ctx.device.cublasLt(), desc_, alpha,
                            reinterpret_cast<const void *>(a), aDesc_,
                            reinterpret_cast<const void *>(b), bDesc_, beta,
                            reinterpret_cast<const void *>(c), dDesc_,
                            reinterpret_cast<void *>(d), dDesc_, &algo_.algo,
                            reinterpret_cast<void *>(ctx.workspace),
                            ctx.workspaceBytes, ctx.stream));
    return Status::ok();
  }

private:
  static Status layout(const CudaApi &api, cudaDataType_t type,
                       const LtMatrix &m, int32_t batch,
                       cublasLtMatrixLayout_t &out) {
    AMPC_CUBLAS_CHECK(
        api, cublasLtMatrixLayoutCreate(&out, type, m.rows, m.cols, m.ld));
    if (batch > 1) {
      AMPC_CUBLAS_CHECK(api, cublasLtMatrixLayoutSetAttribute(
                                 out, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT,
                                 &batch, sizeof(batch)));
      int64_t stride = m.batchStride;
      AMPC_CUBLAS_CHECK(api,
                        cublasLtMatrixLayoutSetAttribute(
                            out, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET,
                            &stride, sizeof(stride)));
    }
    return Status::ok();
  }

  const CudaApi *api_ = nullptr;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t aDesc_ = nullptr, bDesc_ = nullptr, dDesc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  CachedAlgo algo_{};
};

// alpha and beta in cuBLASLt's scale type (double for f64, else float).
struct Scalars {
  float f[2] = {1, 0};
  double d[2] = {1, 0};
  bool isDouble = false;
  void set(DType t, double alpha, double beta) {
    isDouble = t == DType::F64;
    f[0] = static_cast<float>(alpha);
    f[1] = static_cast<float>(beta);
    d[0] = alpha;
    d[1] = beta;
  }
  const void *alpha() const {
    return isDouble ? static_cast<const void *>(&d[0]) : &f[0];
  }
  const void *beta() const {
    return isDouble ? static_cast<const void *>(&d[1]) : &f[1];
  }
};

Status noAlgorithm(const char *op, const LtProblem &p) {
  return Status::error(
      std::string(op) + ": cuBLASLt has no algorithm for " +
      std::string(name(p.dtype)) + " D[" + std::to_string(p.d.rows) + " x " +
      std::to_string(p.d.cols) + "] = op(A)[" + std::to_string(p.a.rows) +
      " x " + std::to_string(p.a.cols) + "] op(B)[" + std::to_string(p.b.rows) +
      " x " + std::to_string(p.b.cols) + "] (column-major, batch " +
      std::to_string(p.batch) +
      (p.epilogue != CUBLASLT_EPILOGUE_DEFAULT
           ? ", epilogue " + std::to_string(static_cast<int>(p.epilogue))
           : "") +
      ", alignments " + std::to_string(p.alignA) + "/" +
      std::to_string(p.alignB) + "/" + std::to_string(p.alignC) + "/" +
      std::to_string(p.alignD) + " bytes)");
}

//===----------------------------------------------------------------------===//
// Writing c (broadcast, scaled) into the output: ampc_gemm_fill_c_*
//===----------------------------------------------------------------------===//

struct FillC {
  CUfunction fn = nullptr;
  CUdeviceptr c = 0, d = 0;
  int64_t m = 0, n = 0, rowStride = 0, colStride = 0;
  float scaleF = 1;
  double scaleD = 1;
  bool isDouble = false;
  LaunchDims dims;

  Status prepare(CudaDevice &device, const TensorView &cv, const TensorView &d,
                 double scale) {
    AMPC_RETURN_IF_ERROR(kernelFunction(device, CudaKernel::GemmFillC,
                                        {rt::name(cv.dtype)}, fn));
    c = devicePtr(cv);
    this->d = devicePtr(d);
    m = d.shape[0];
    n = d.shape[1];
    // The CPU kernel's BroadcastC: c has rank <= 2.
    int64_t rows = cv.rank() == 2 ? cv.shape[0] : 1;
    int64_t cols = cv.shape.empty() ? 1 : cv.shape.back();
    colStride = cols == 1 ? 0 : 1;
    rowStride = rows == 1 ? 0 : cols;
    isDouble = cv.dtype == DType::F64;
    scaleF = static_cast<float>(scale);
    scaleD = scale;
    dims = gridFor(device, m * n);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) {
    void *args[] = {&c,
                    &d,
                    &m,
                    &n,
                    &rowStride,
                    &colStride,
                    isDouble ? static_cast<void *>(&scaleD) : &scaleF};
    return launchKernel(ctx, fn, dims, args, "ampc_gemm_fill_c");
  }
};

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

class GemmKernel final : public PreparedKernel {
public:
  Status prepare(const OpCall &call, PrepareContext &ctx) {
    const EpilogueInfo *epi;
    AMPC_RETURN_IF_ERROR(ops::readEpilogue(*call.attrs, epi));
    bool found = false;
    if (!epi) {
      AMPC_RETURN_IF_ERROR(
          prepareGemm(call, ctx, call.outputs[0], nullptr, found));
      return Status::ok();
    }
    LtEpilogue lt;
    if (ltEpilogueFor(call, *epi, lt)) {
      AMPC_RETURN_IF_ERROR(prepareGemm(call, ctx, call.outputs[0], &lt, found));
      if (found)
        return Status::ok();
    }
    // No cuBLASLt form: a plain GEMM, then ampc's own kernel. gelu_aux's
    // GEMM writes the pre-activation, which the activation then reads.
    const TensorView &dest = epi->role == EpilogueRole::ActivationAux
                                 ? call.outputs[1]
                                 : call.outputs[0];
    AMPC_RETURN_IF_ERROR(prepareGemm(call, ctx, dest, nullptr, found));
    return preparePostOp(call, *epi, ctx, post_);
  }

  Status launch(const LaunchContext &ctx) override {
    AMPC_RETURN_IF_ERROR(launchGemm(ctx));
    return post_ ? post_->launch(ctx) : Status::ok();
  }

  size_t deviceBytes() const override {
    return post_ ? post_->deviceBytes() : 0;
  }

private:
  // Plans dest = alpha * op(a) * op(b) + beta * c, with cuBLASLt's
  // epilogue `lt` when given (c then absent or its BIAS). With `lt`, sets
  // `found` false, and plans nothing, when cuBLASLt has no algorithm for it
  // or the problem is empty; without, a missing algorithm is an error.
  Status prepareGemm(const OpCall &call, PrepareContext &ctx,
                     const TensorView &dest, const LtEpilogue *lt,
                     bool &found) {
    const TensorView &a = call.inputs[0], &b = call.inputs[1];
    DType t = a.dtype;
    LtTypes types;
    AMPC_RETURN_IF_ERROR(ltTypesFor("gemm", t, ctx.allowTf32, types));
    double alpha = call.attrs->getFloat("alpha");
    double beta = call.attrs->getFloat("beta");
    bool transA = call.attrs->getInt("trans_a") != 0;
    bool transB = call.attrs->getInt("trans_b") != 0;
    int64_t m = dest.shape[0], n = dest.shape[1];
    int64_t k = transA ? a.shape[0] : a.shape[1];
    const TensorView *c = ops::hasInput(call, 2) ? &call.inputs[2] : nullptr;
    found = false;
    mode_ = Mode::Empty;
    mm_.reset();
    if (lt && (m == 0 || n == 0 || k == 0))
      return Status::ok(); // ampc's own kernel covers what is left
    found = true;
    d_ = devicePtr(dest);
    if (m == 0 || n == 0)
      return Status::ok(); // mode_ stays Empty
    if (k == 0) {
      // No products: the output is beta * c, or zeros.
      if (c) {
        AMPC_RETURN_IF_ERROR(fill_.prepare(ctx.device, *c, dest, beta));
        mode_ = Mode::FillOnly;
      } else {
        zeroBytes_ = dest.byteSize();
        mode_ = Mode::Zero;
      }
      return Status::ok();
    }
    a_ = devicePtr(b); // cuBLASLt's A is our b (see the file comment)
    b_ = devicePtr(a);
    c_ = d_;
    LtProblem p;
    p.device = ctx.device.ordinal();
    p.dtype = t;
    p.tf32 = ctx.allowTf32 && t == DType::F32;
    p.transA = transB;
    p.transB = transA;
    p.a = rowMajor(b.shape[0], b.shape[1]);
    p.b = rowMajor(a.shape[0], a.shape[1]);
    p.d = rowMajor(m, n);
    p.alignA = alignmentOf(a_);
    p.alignB = alignmentOf(b_);
    p.alignD = p.alignC = alignmentOf(d_);
    double ltBeta = 0;
    mode_ = Mode::Matmul;
    mm_ = std::make_unique<LtMatmul>();
    if (lt) {
      p.epilogue = lt->kind;
      p.auxLd = lt->auxLd;
      p.alignBias = alignmentOf(lt->bias);
      p.alignAux = alignmentOf(lt->aux);
      AMPC_RETURN_IF_ERROR(mm_->prepare(ctx.device, p, *lt, "gemm", found));
      if (!found) {
        mode_ = Mode::Empty;
        mm_.reset();
        return Status::ok();
      }
    } else {
      found = false;
      if (c && beta == 1.0 && t != DType::F64 && c->numElements() == n &&
          (c->rank() <= 1 || c->shape[0] == 1)) {
        // c is a vector along the output's last dim: the BIAS epilogue.
        LtEpilogue bias;
        bias.kind = CUBLASLT_EPILOGUE_BIAS;
        bias.bias = devicePtr(*c);
        p.epilogue = bias.kind;
        p.alignBias = alignmentOf(bias.bias);
        AMPC_RETURN_IF_ERROR(mm_->prepare(ctx.device, p, bias, "gemm", found));
        if (!found) // no bias algorithm: write c into the output below
          p.epilogue = CUBLASLT_EPILOGUE_DEFAULT;
      }
      if (p.epilogue == CUBLASLT_EPILOGUE_DEFAULT) {
        if (c && beta != 0 && c->shape == Shape{m, n}) {
          c_ = devicePtr(*c); // never the output: gemm's output aliases nothing
          p.alignC = alignmentOf(c_);
          ltBeta = beta;
        } else if (c) {
          // beta 0 keeps the CPU's 0 * c (NaN for non-finite c): the output
          // is filled with it and accumulated into with beta 1.
          AMPC_RETURN_IF_ERROR(
              fill_.prepare(ctx.device, *c, dest, beta == 0 ? 0.0 : 1.0));
          mode_ = Mode::FillThenMatmul;
          ltBeta = beta == 0 ? 1.0 : beta;
        }
        mm_ = std::make_unique<LtMatmul>();
        AMPC_RETURN_IF_ERROR(
            mm_->prepare(ctx.device, p, LtEpilogue{}, "gemm", found));
      }
      if (!found)
        return noAlgorithm("gemm", p);
    }
    ctx.requestWorkspace(mm_->workspaceBytes());
    scalars_.set(t, alpha, ltBeta);
    return Status::ok();
  }

  Status launchGemm(const LaunchContext &ctx) {
    switch (mode_) {
    case Mode::Empty:
      return Status::ok();
    case Mode::Zero:
      AMPC_CU_CHECK(ctx.device.api(),
                    cuMemsetD8Async(d_, 0, zeroBytes_, ctx.stream));
      return Status::ok();
    case Mode::FillOnly:
      return fill_.launch(ctx);
    case Mode::FillThenMatmul:
      AMPC_RETURN_IF_ERROR(fill_.launch(ctx));
      break;
    case Mode::Matmul:
      break;
    }
    return mm_->launch(ctx, scalars_.alpha(), a_, b_, scalars_.beta(), c_, d_,
                       "gemm");
  }

  enum class Mode { Empty, Zero, FillOnly, FillThenMatmul, Matmul };
  Mode mode_ = Mode::Empty;
  std::unique_ptr<LtMatmul> mm_;
  std::unique_ptr<PreparedKernel> post_; // ampc's own epilogue kernel
  FillC fill_;
  Scalars scalars_;
  size_t zeroBytes_ = 0;
  CUdeviceptr a_ = 0, b_ = 0, c_ = 0, d_ = 0;
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// The batch split into cuBLASLt's strided batch (the innermost batch dims
// over which each operand either advances by whole matrices or stays put)
// and the outer dims, looped over at launch with precomputed offsets.
struct BatchSplit {
  int64_t inner = 1;
  bool aAdvances = true, bAdvances = true;
  struct Offsets {
    int64_t a, b, d; // in matrices
  };
  std::vector<Offsets> outer;
};

BatchSplit splitBatch(const ops::MatmulPlan &p) {
  BatchSplit s;
  // Dims of size 1 index nothing.
  std::vector<size_t> dims;
  for (size_t i = 0; i < p.batchShape.size(); ++i)
    if (p.batchShape[i] != 1)
      dims.push_back(i);
  size_t firstInner = dims.size();
  if (!dims.empty()) {
    size_t last = dims.back();
    s.aAdvances = p.aBatch[last] != 1;
    s.bAdvances = p.bBatch[last] != 1;
    while (firstInner > 0) {
      size_t i = dims[firstInner - 1];
      if ((p.aBatch[i] != 1) != s.aAdvances ||
          (p.bBatch[i] != 1) != s.bAdvances)
        break;
      s.inner *= p.batchShape[i];
      --firstInner;
    }
  }
  // Matrix strides of each outer dim, for a, b and the output.
  size_t r = p.batchShape.size();
  std::vector<int64_t> sa(r), sb(r), sd(r);
  int64_t ca = 1, cb = 1, cd = 1;
  for (size_t i = r; i-- > 0;) {
    sa[i] = p.aBatch[i] == 1 ? 0 : ca;
    sb[i] = p.bBatch[i] == 1 ? 0 : cb;
    sd[i] = cd;
    ca *= p.aBatch[i];
    cb *= p.bBatch[i];
    cd *= p.batchShape[i];
  }
  int64_t outerCount = s.inner == 0 ? 0 : p.batch / s.inner;
  for (int64_t o = 0; o < outerCount; ++o) {
    BatchSplit::Offsets off{0, 0, 0};
    int64_t idx = o;
    for (size_t j = firstInner; j-- > 0;) {
      size_t i = dims[j];
      int64_t coord = idx % p.batchShape[i];
      idx /= p.batchShape[i];
      off.a += coord * sa[i];
      off.b += coord * sb[i];
      off.d += coord * sd[i];
    }
    s.outer.push_back(off);
  }
  return s;
}

class MatmulKernel final : public PreparedKernel {
public:
  Status prepare(const OpCall &call, PrepareContext &ctx) {
    const TensorView &a = call.inputs[0], &b = call.inputs[1],
                     &out = call.outputs[0];
    DType t = a.dtype;
    LtTypes types;
    AMPC_RETURN_IF_ERROR(ltTypesFor("matmul", t, ctx.allowTf32, types));
    // The CPU kernel's plan: 1-D operands promoted, batch dims broadcast.
    ops::MatmulPlan plan;
    AMPC_RETURN_IF_ERROR(
        ops::planMatmul(a.shape, b.shape, plan).withContext(call.op));
    if (out.numElements() == 0)
      return Status::ok();
    d_ = devicePtr(out);
    if (plan.k == 0) {
      zeroBytes_ = out.byteSize();
      return Status::ok();
    }
    BatchSplit split = splitBatch(plan);
    int64_t m = plan.m, n = plan.n, k = plan.k, inner = split.inner;
    // A b shared by a run of consecutive a matrices is one taller GEMM.
    if (inner > 1 && split.aAdvances && !split.bAdvances) {
      m *= inner;
      inner = 1;
    }
    if (inner > INT32_MAX)
      return Status::error("matmul: a batch of " + std::to_string(inner) +
                           " matrices exceeds cuBLASLt's int32 batch count");
    size_t es = sizeOf(t);
    elemsA_ = plan.m * k; // per batch index, as the offsets count
    elemsB_ = k * n;
    elemsD_ = plan.m * n;
    a_ = devicePtr(a);
    b_ = devicePtr(b);
    outer_ = std::move(split.outer);
    LtProblem p;
    p.device = ctx.device.ordinal();
    p.dtype = t;
    p.tf32 = ctx.allowTf32 && t == DType::F32;
    p.batch = static_cast<int32_t>(inner);
    // cuBLASLt's A is our b ([k, n]), its B our a ([m, k]).
    p.a = rowMajor(k, n, split.bAdvances ? k * n : 0);
    p.b = rowMajor(m, k, split.aAdvances ? m * k : 0);
    p.d = rowMajor(m, n, m * n);
    // Alignment over every matrix any launch touches.
    uint64_t bitsA = b_, bitsB = a_, bitsD = d_;
    if (inner > 1) {
      bitsA |= uint64_t(p.a.batchStride) * es;
      bitsB |= uint64_t(p.b.batchStride) * es;
      bitsD |= uint64_t(p.d.batchStride) * es;
    }
    for (const BatchSplit::Offsets &o : outer_) {
      bitsA |= uint64_t(o.b * elemsB_) * es;
      bitsB |= uint64_t(o.a * elemsA_) * es;
      bitsD |= uint64_t(o.d * elemsD_) * es;
    }
    p.alignA = alignmentOf(bitsA);
    p.alignB = alignmentOf(bitsB);
    p.alignD = p.alignC = alignmentOf(bitsD);
    bool found = false;
    AMPC_RETURN_IF_ERROR(
        mm_.prepare(ctx.device, p, LtEpilogue{}, "matmul", found));
    if (!found)
      return noAlgorithm("matmul", p);
    ctx.requestWorkspace(mm_.workspaceBytes());
    scalars_.set(t, 1.0, 0.0);
    es_ = es;
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override {
    if (zeroBytes_) {
      AMPC_CU_CHECK(ctx.device.api(),
                    cuMemsetD8Async(d_, 0, zeroBytes_, ctx.stream));
      return Status::ok();
    }
    for (const BatchSplit::Offsets &o : outer_) {
      CUdeviceptr a = a_ + CUdeviceptr(o.a * elemsA_ * es_);
      CUdeviceptr b = b_ + CUdeviceptr(o.b * elemsB_ * es_);
      CUdeviceptr d = d_ + CUdeviceptr(o.d * elemsD_ * es_);
      AMPC_RETURN_IF_ERROR(mm_.launch(ctx, scalars_.alpha(), b, a,
                                      scalars_.beta(), d, d, "matmul"));
    }
    return Status::ok();
  }

private:
  LtMatmul mm_;
  Scalars scalars_;
  std::vector<BatchSplit::Offsets> outer_;
  int64_t elemsA_ = 0, elemsB_ = 0, elemsD_ = 0;
  size_t es_ = 0, zeroBytes_ = 0;
  CUdeviceptr a_ = 0, b_ = 0, d_ = 0;
};

template <typename K>
Status prepareOne(const std::vector<const OpCall *> &calls, PrepareContext &ctx,
                  std::unique_ptr<PreparedKernel> &out) {
  if (calls.size() != 1)
    return Status::error(std::string(calls.empty() ? "" : calls[0]->op) +
                         ": expected one call to prepare, got " +
                         std::to_string(calls.size()));
  auto k = std::make_unique<K>();
  AMPC_RETURN_IF_ERROR(k->prepare(*calls[0], ctx));
  out = std::move(k);
  return Status::ok();
}

} // namespace

void addGemmKernels(std::vector<KernelEntry> &out) {
  out.push_back({"gemm", prepareOne<GemmKernel>});
  out.push_back({"matmul", prepareOne<MatmulKernel>});
}

} // namespace ampc::rt::cuda
