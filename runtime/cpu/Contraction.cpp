//===- Contraction.cpp - matmul, gemm and conv2d on the CPU ---------------===//
//
// Float matmuls and gemms run as oneDNN matmul primitives (Dnnl.h), built
// when the session prepares its kernels: f32 operands and, on CPUs that
// multiply bf16 natively, bf16 operands are read as stored; f16 (and bf16
// elsewhere) is widened to an f32 buffer first. The f32 result is rounded
// once on store, which is what a Tensor Core GEMM with f32 accumulation
// gives up to summation order; a gemm's epilogue (GemmPostOp.cpp) runs on
// it before it is rounded. f64 and empty shapes go to OpenBLAS (Blas.h):
// oneDNN has no f64 matmul. conv2d runs as a oneDNN convolution the same
// way (DnnlKernels.h), and as im2col and OpenBLAS for f64 and for a
// geometry oneDNN does not take.
// Integer contractions are exact int64 loops (wrapping on overflow, like the
// hardware). Pooling (Pooling.cpp) joins the table from here.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Blas.h"
#include "runtime/cpu/DnnlKernels.h"
#include "runtime/cpu/GemmPostOp.h"
#include "runtime/cpu/Im2Col.h"
#include "runtime/cpu/ImageConvBf16.h"
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/ContractionPlan.h"
#include "runtime/ops/EpilogueChecks.h"

#include <algorithm>
#include <cmath>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

// Integer C[M, N] = op(A) * op(B), exact modulo 2^64.
void gemmInt(bool ta, bool tb, int64_t m, int64_t n, int64_t k,
             const int64_t *a, int64_t lda, const int64_t *b, int64_t ldb,
             uint64_t *c) {
  for (int64_t i = 0; i < m; ++i) {
    uint64_t *row = c + i * n;
    std::fill(row, row + n, 0);
    for (int64_t p = 0; p < k; ++p) {
      uint64_t av = static_cast<uint64_t>(ta ? a[p * lda + i] : a[i * lda + p]);
      if (!tb) {
        const int64_t *brow = b + p * ldb;
        for (int64_t j = 0; j < n; ++j)
          row[j] += av * static_cast<uint64_t>(brow[j]);
      } else {
        for (int64_t j = 0; j < n; ++j)
          row[j] += av * static_cast<uint64_t>(b[j * ldb + p]);
      }
    }
  }
}

// Integer tensor as int64 (its own memory when stored as i64).
const int64_t *intView(const TensorView &t, std::vector<int64_t> &storage) {
  if (t.dtype == DType::I64)
    return static_cast<const int64_t *>(t.data);
  storage.resize(static_cast<size_t>(t.numElements()));
  loadI64(t, 0, t.numElements(), storage.data());
  return storage.data();
}

// The oneDNN primitive of a float matmul or gemm call.
struct ContractionPrepared final : PreparedKernel {
  std::unique_ptr<DnnlMatmul> matmul;
  bool perBatch = false; // matmul: run once per batch index (Matmul below)
};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// Offset (in matrices) of batch `idx`'s operand with batch dims `dims`.
int64_t batchOffset(const Shape &full, const Shape &dims, int64_t idx) {
  int64_t off = 0, stride = 1;
  for (size_t i = full.size(); i-- > 0;) {
    int64_t coord = idx % full[i];
    idx /= full[i];
    if (dims[i] != 1)
      off += coord * stride;
    stride *= dims[i];
  }
  return off;
}

template <typename T>
void runMatmulFloat(const OpCall &call, const MatmulPlan &p,
                    const CpuContext &ctx) {
  Scratch<T> sa, sb, so;
  const T *A = computeView<T>(call.inputs[0], sa, ctx);
  const T *B = computeView<T>(call.inputs[1], sb, ctx);
  const TensorView &out = call.outputs[0];
  T *C = computeOut<T>(out, so);
  int64_t aMats = product(p.aBatch, 0, p.aBatch.size());
  int64_t bMats = product(p.bBatch, 0, p.bBatch.size());
  if (bMats == 1 && aMats == p.batch) {
    // rhs is shared by every batch and lhs is contiguous: one tall GEMM.
    gemmRM<T>(false, false, p.batch * p.m, p.n, p.k, T(1), A, p.k, B, p.n, T(0),
              C, p.n);
  } else {
    parallelFor(ctx, p.batch, 1, [&](int64_t b0, int64_t b1) {
      for (int64_t bi = b0; bi < b1; ++bi) {
        int64_t ao = batchOffset(p.batchShape, p.aBatch, bi);
        int64_t bo = batchOffset(p.batchShape, p.bBatch, bi);
        gemmRM<T>(false, false, p.m, p.n, p.k, T(1), A + ao * p.m * p.k, p.k,
                  B + bo * p.k * p.n, p.n, T(0), C + bi * p.m * p.n, p.n);
      }
    });
  }
  storeFromCompute(C, out, ctx);
}

// One primitive for the whole batch where oneDNN can stride through it:
// a shared rhs with a contiguous lhs is one tall GEMM; operands that are
// each either full or one matrix are a batched matmul; other broadcasts run
// a primitive per batch index.
Status prepareMatmul(const OpCall &call,
                     std::shared_ptr<const PreparedKernel> &out) {
  DType t = call.inputs[0].dtype;
  MatmulPlan p;
  AMPC_RETURN_IF_ERROR(
      planMatmul(call.inputs[0].shape, call.inputs[1].shape, p));
  if (!onDnnl(t) || p.m == 0 || p.n == 0 || p.k == 0 || p.batch == 0)
    return Status::ok();
  int64_t aMats = product(p.aBatch, 0, p.aBatch.size());
  int64_t bMats = product(p.bBatch, 0, p.bBatch.size());
  auto prep = std::make_shared<ContractionPrepared>();
  DnnlMatmulShape s;
  s.m = p.m;
  s.n = p.n;
  s.k = p.k;
  s.lda = p.k;
  s.ldb = p.n;
  s.bf16 = readsBf16(t);
  if (bMats == 1 && aMats == p.batch) {
    s.m = p.batch * p.m;
  } else if ((aMats == p.batch || aMats == 1) &&
             (bMats == p.batch || bMats == 1)) {
    s.batch = p.batch;
    s.batchStrideA = aMats == 1 ? 0 : p.m * p.k;
    s.batchStrideB = bMats == 1 ? 0 : p.k * p.n;
  } else {
    prep->perBatch = true;
  }
  AMPC_RETURN_IF_ERROR(DnnlMatmul::create(s, prep->matmul));
  out = std::move(prep);
  return Status::ok();
}

Status runMatmulDnnl(const OpCall &call, const MatmulPlan &p,
                     const ContractionPrepared &prep, const CpuContext &ctx) {
  const DnnlMatmul &mm = *prep.matmul;
  const size_t elem = mm.shape().bf16 ? 2 : 4;
  Scratch<float> sa, sb, so;
  const void *A = mm.shape().bf16 ? call.inputs[0].data
                                  : computeView<float>(call.inputs[0], sa, ctx);
  const void *B = mm.shape().bf16 ? call.inputs[1].data
                                  : computeView<float>(call.inputs[1], sb, ctx);
  const TensorView &out = call.outputs[0];
  float *C = computeOut<float>(out, so);
  if (!prep.perBatch) {
    AMPC_RETURN_IF_ERROR(mm.run(A, B, C));
  } else {
    for (int64_t bi = 0; bi < p.batch; ++bi) {
      int64_t ao = batchOffset(p.batchShape, p.aBatch, bi) * p.m * p.k;
      int64_t bo = batchOffset(p.batchShape, p.bBatch, bi) * p.k * p.n;
      AMPC_RETURN_IF_ERROR(mm.run(static_cast<const char *>(A) + ao * elem,
                                  static_cast<const char *>(B) + bo * elem,
                                  C + bi * p.m * p.n));
    }
  }
  storeFromCompute(C, out, ctx);
  return Status::ok();
}

void runMatmulInt(const OpCall &call, const MatmulPlan &p,
                  const CpuContext &ctx) {
  std::vector<int64_t> sa, sb;
  const int64_t *A = intView(call.inputs[0], sa);
  const int64_t *B = intView(call.inputs[1], sb);
  const TensorView &out = call.outputs[0];
  std::vector<uint64_t> C(static_cast<size_t>(out.numElements()));
  parallelFor(ctx, p.batch, 1, [&](int64_t b0, int64_t b1) {
    for (int64_t bi = b0; bi < b1; ++bi) {
      int64_t ao = batchOffset(p.batchShape, p.aBatch, bi);
      int64_t bo = batchOffset(p.batchShape, p.bBatch, bi);
      gemmInt(false, false, p.m, p.n, p.k, A + ao * p.m * p.k, p.k,
              B + bo * p.k * p.n, p.n, C.data() + bi * p.m * p.n);
    }
  });
  storeI64(reinterpret_cast<const int64_t *>(C.data()), out.numElements(), out,
           0);
}

Status runMatmul(const OpCall &call, CpuContext &ctx) {
  MatmulPlan p;
  AMPC_RETURN_IF_ERROR(
      planMatmul(call.inputs[0].shape, call.inputs[1].shape, p));
  DType t = call.inputs[0].dtype;
  std::shared_ptr<const PreparedKernel> local;
  const ContractionPrepared *prep = nullptr;
  AMPC_RETURN_IF_ERROR(
      preparedOf<ContractionPrepared>(call, prepareMatmul, local, prep));
  if (prep)
    return runMatmulDnnl(call, p, *prep, ctx);
  if (isInt(t))
    runMatmulInt(call, p, ctx);
  else if (t == DType::F64)
    runMatmulFloat<double>(call, p, ctx);
  else
    runMatmulFloat<float>(call, p, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

// Index into a c broadcast to [m, n] (c has rank <= 2).
struct BroadcastC {
  int64_t rowStride = 0, colStride = 0;
  explicit BroadcastC(const Shape &c) {
    int64_t rows = c.size() == 2 ? c[0] : 1;
    int64_t cols = c.empty() ? 1 : c.back();
    colStride = cols == 1 ? 0 : 1;
    rowStride = rows == 1 ? 0 : cols;
  }
  int64_t at(int64_t i, int64_t j) const {
    return i * rowStride + j * colStride;
  }
};

// Fills C[m, n] with beta * c when the call has c (the GEMM then adds its
// product); returns whether it did. beta * c is formed here (not by BLAS,
// which skips c when beta is 0) so that 0 * inf gives NaN exactly as
// alpha*AB + beta*C says.
template <typename T>
bool preloadBetaC(const OpCall &call, const GemmAttrs &g, T *C,
                  const CpuContext &ctx) {
  if (!hasInput(call, 2))
    return false;
  int64_t m = call.outputs[0].shape[0], n = call.outputs[0].shape[1];
  const TensorView &c = call.inputs[2];
  Scratch<T> sc;
  const T *Cin = computeView<T>(c, sc, ctx);
  BroadcastC bc(c.shape);
  T bt = static_cast<T>(g.beta);
  parallelFor(ctx, m, 64, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i)
      for (int64_t j = 0; j < n; ++j)
        C[i * n + j] = bt * Cin[bc.at(i, j)];
  });
  return true;
}

template <typename T>
void runGemmFloat(const OpCall &call, const GemmAttrs &g,
                  const EpilogueInfo *epi, const CpuContext &ctx) {
  const TensorView &a = call.inputs[0], &b = call.inputs[1],
                   &out = call.outputs[0];
  int64_t m = out.shape[0], n = out.shape[1];
  int64_t k = g.transA ? a.shape[0] : a.shape[1];
  Scratch<T> sa, sb, so;
  const T *A = computeView<T>(a, sa, ctx);
  const T *B = computeView<T>(b, sb, ctx);
  T *C = computeOut<T>(out, so);
  T beta = preloadBetaC(call, g, C, ctx) ? T(1) : T(0);
  gemmRM<T>(g.transA, g.transB, m, n, k, static_cast<T>(g.alpha), A, a.shape[1],
            B, b.shape[1], beta, C, n);
  storeGemmResult(call, epi, C, A, ctx);
}

Status prepareGemm(const OpCall &call,
                   std::shared_ptr<const PreparedKernel> &out) {
  const TensorView &a = call.inputs[0], &b = call.inputs[1];
  GemmAttrs g;
  AMPC_RETURN_IF_ERROR(readGemmAttrs(*call.attrs, g));
  DnnlMatmulShape s;
  s.transA = g.transA;
  s.transB = g.transB;
  s.m = g.transA ? a.shape[1] : a.shape[0];
  s.k = g.transA ? a.shape[0] : a.shape[1];
  s.n = g.transB ? b.shape[0] : b.shape[1];
  if (!onDnnl(a.dtype) || s.m == 0 || s.n == 0 || s.k == 0)
    return Status::ok();
  s.lda = a.shape[1];
  s.ldb = b.shape[1];
  s.bf16 = readsBf16(a.dtype);
  s.alpha = static_cast<float>(g.alpha);
  s.accumulate = hasInput(call, 2);
  auto prep = std::make_shared<ContractionPrepared>();
  AMPC_RETURN_IF_ERROR(DnnlMatmul::create(s, prep->matmul));
  out = std::move(prep);
  return Status::ok();
}

Status runGemmDnnl(const OpCall &call, const GemmAttrs &g,
                   const EpilogueInfo *epi, const DnnlMatmul &mm,
                   const CpuContext &ctx) {
  const TensorView &a = call.inputs[0], &b = call.inputs[1],
                   &out = call.outputs[0];
  const bool stored = mm.shape().bf16;
  Scratch<float> sa, sb, so;
  const float *A = stored ? nullptr : computeView<float>(a, sa, ctx);
  const void *B = stored ? b.data : computeView<float>(b, sb, ctx);
  float *C = computeOut<float>(out, so);
  preloadBetaC(call, g, C, ctx);
  AMPC_RETURN_IF_ERROR(mm.run(stored ? a.data : A, B, C));
  storeGemmResult(call, epi, C, A, ctx);
  return Status::ok();
}

void runGemmInt(const OpCall &call, const GemmAttrs &g) {
  const TensorView &a = call.inputs[0], &b = call.inputs[1],
                   &out = call.outputs[0];
  int64_t m = out.shape[0], n = out.shape[1];
  int64_t k = g.transA ? a.shape[0] : a.shape[1];
  std::vector<int64_t> sa, sb, sc;
  const int64_t *A = intView(a, sa);
  const int64_t *B = intView(b, sb);
  std::vector<uint64_t> acc(static_cast<size_t>(m * n));
  gemmInt(g.transA, g.transB, m, n, k, A, a.shape[1], B, b.shape[1],
          acc.data());
  const int64_t *Cin = nullptr;
  std::optional<BroadcastC> bc;
  if (hasInput(call, 2)) {
    Cin = intView(call.inputs[2], sc);
    bc.emplace(call.inputs[2].shape);
  }
  // Integral alpha/beta stay exact in int64; others go through double and
  // truncate toward zero on store, as a float-to-int cast does.
  bool exact = g.alpha == std::trunc(g.alpha) && g.beta == std::trunc(g.beta) &&
               std::fabs(g.alpha) < 9.2e18 && std::fabs(g.beta) < 9.2e18;
  if (exact) {
    uint64_t al = static_cast<uint64_t>(static_cast<int64_t>(g.alpha));
    uint64_t be = static_cast<uint64_t>(static_cast<int64_t>(g.beta));
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        uint64_t v = al * acc[i * n + j];
        if (Cin)
          v += be * static_cast<uint64_t>(Cin[bc->at(i, j)]);
        acc[i * n + j] = v;
      }
    storeI64(reinterpret_cast<const int64_t *>(acc.data()), m * n, out, 0);
    return;
  }
  std::vector<double> r(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double v =
          g.alpha * static_cast<double>(static_cast<int64_t>(acc[i * n + j]));
      if (Cin)
        v += g.beta * static_cast<double>(Cin[bc->at(i, j)]);
      r[i * n + j] = v;
    }
  storeF64(r.data(), m * n, out, 0);
}

Status runGemm(const OpCall &call, CpuContext &ctx) {
  GemmAttrs g;
  AMPC_RETURN_IF_ERROR(readGemmAttrs(*call.attrs, g));
  const EpilogueInfo *epi;
  AMPC_RETURN_IF_ERROR(ops::readEpilogue(*call.attrs, epi));
  DType t = call.inputs[0].dtype;
  std::shared_ptr<const PreparedKernel> local;
  const ContractionPrepared *prep = nullptr;
  AMPC_RETURN_IF_ERROR(
      preparedOf<ContractionPrepared>(call, prepareGemm, local, prep));
  if (prep)
    return runGemmDnnl(call, g, epi, *prep->matmul, ctx);
  if (isInt(t))
    runGemmInt(call, g); // ops::checkGemm refuses an epilogue here
  else if (t == DType::F64)
    runGemmFloat<double>(call, g, epi, ctx);
  else
    runGemmFloat<float>(call, g, epi, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

template <typename T>
void runConvT(const OpCall &call, const ConvPlan &p, const CpuContext &ctx) {
  Scratch<T> sx, sf, sb, so;
  const T *X = computeView<T>(call.inputs[0], sx, ctx);
  const T *F = computeView<T>(call.inputs[1], sf, ctx);
  const T *Bias =
      hasInput(call, 2) ? computeView<T>(call.inputs[2], sb, ctx) : nullptr;
  const TensorView &out = call.outputs[0];
  T *Y = computeOut<T>(out, so);
  int64_t og = p.o / p.group, kdim = p.cg * p.kh * p.kw, cols = p.oh * p.ow;
  bool direct = isDirect(p);
  int64_t tasks = p.n * p.group;
  parallelFor(ctx, tasks, 1, [&](int64_t t0, int64_t t1) {
    Scratch<T> col;
    if (!direct)
      col.resize(static_cast<size_t>(kdim * cols));
    for (int64_t t = t0; t < t1; ++t) {
      int64_t img = t / p.group, g = t % p.group;
      const T *xg = X + (img * p.c + g * p.cg) * p.h * p.w;
      const T *colPtr = xg; // 1x1 stride 1 unpadded: the input is the matrix
      if (!direct) {
        im2col(p, xg, col.data());
        colPtr = col.data();
      }
      T *yg = Y + (img * p.o + g * og) * cols;
      gemmRM<T>(false, false, og, cols, kdim, T(1), F + g * og * kdim, kdim,
                colPtr, cols, T(0), yg, cols);
      if (Bias)
        for (int64_t oc = 0; oc < og; ++oc) {
          T bv = Bias[g * og + oc];
          T *row = yg + oc * cols;
          for (int64_t i = 0; i < cols; ++i)
            row[i] += bv;
        }
    }
  });
  storeFromCompute(Y, out, ctx);
}

Status prepareConv(const OpCall &call,
                   std::shared_ptr<const PreparedKernel> &out) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(
      planConv(*call.attrs, call.inputs[0].shape, call.inputs[1].shape, p));
  return prepareConvPass(p, DnnlConvPass::Forward, call.inputs[0].dtype,
                         hasInput(call, 2), out);
}

Status runConv(const OpCall &call, CpuContext &ctx) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(
      planConv(*call.attrs, call.inputs[0].shape, call.inputs[1].shape, p));
  if (imageConvBf16Takes(call, p)) {
    imageConvBf16Forward(
        p, static_cast<const uint16_t *>(call.inputs[0].data),
        static_cast<const uint16_t *>(call.inputs[1].data),
        hasInput(call, 2) ? static_cast<const uint16_t *>(call.inputs[2].data)
                          : nullptr,
        static_cast<uint16_t *>(call.outputs[0].data), ctx);
    return Status::ok();
  }
  bool ran = false;
  AMPC_RETURN_IF_ERROR(runConvPassIfPrepared(call, prepareConv, ctx, ran));
  if (ran)
    return Status::ok();
  if (call.inputs[0].dtype == DType::F64)
    runConvT<double>(call, p, ctx);
  else
    runConvT<float>(call, p, ctx);
  return Status::ok();
}

} // namespace

void addContractionKernels(std::vector<KernelEntry> &out) {
  out.push_back({"matmul", runMatmul, prepareMatmul});
  out.push_back({"gemm", runGemm, prepareGemm});
  out.push_back({"conv2d", runConv, prepareConv});
  addPoolingKernels(out);
}

} // namespace ampc::rt::cpu
