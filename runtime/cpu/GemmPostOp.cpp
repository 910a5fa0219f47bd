//===- GemmPostOp.cpp - a gemm kernel's epilogue on the CPU ---------------===//
//
// The post-op runs on each chunk of the GEMM's compute-type result in the
// pass that rounds it to the stored dtype, with the elementwise kernels' own
// loops (Activation.h). So relu and drelu give the unfused kernels' values
// bit for bit (rounding commutes with their mask); gelu, gelu_aux and dgelu
// apply the activation to the unrounded result, which the unfused kernels
// read rounded (docs/amp.md). The bias gradient sums the columns of a in
// row order, as reduce_sum over axis 0 does, from the same loaded values.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/GemmPostOp.h"

#include "runtime/cpu/Activation.h"
#include "runtime/cpu/KernelHelpers.h"

namespace ampc::rt::cpu {

using namespace kh;

Status readEpilogue(const Attrs &attrs, const EpilogueInfo *&out) {
  out = nullptr;
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(attrOfKind(attrs, "epilogue", AttrValue::Kind::String,
                                  /*required=*/false, a));
  if (!a)
    return Status::ok();
  out = findEpilogue(a->s);
  if (!out)
    return Status::error("attribute 'epilogue' is '" + a->s +
                         "', which is none of " + epilogueNames());
  return Status::ok();
}

Status checkEpilogue(const OpCall &call, const EpilogueInfo &e, int64_t m,
                     int64_t n, bool transA) {
  const std::string what = "epilogue '" + std::string(e.name) + "'";
  const TensorView &a = call.inputs[0];
  if (!isFloat(a.dtype))
    return Status::error(what + " needs float operands, got " +
                         std::string(name(a.dtype)));
  if (hasInput(call, 2) && !e.takesBias())
    return Status::error(what + " adds no c, but c is present");
  Shape mn{m, n};
  if (e.hasExtraInput()) {
    const std::string in3 = "input 3 (the forward value " + what + " reads)";
    if (!hasInput(call, 3))
      return Status::error(in3 + " is absent");
    AMPC_RETURN_IF_ERROR(checkSameDType(call.inputs[3], in3, a.dtype, "a"));
    if (call.inputs[3].shape != mn)
      return Status::error(in3 + " has shape " +
                           shapeStr(call.inputs[3].shape) +
                           " but the gemm's output is " + shapeStr(mn));
  }
  switch (e.role) {
  case EpilogueRole::ActivationAux:
    AMPC_RETURN_IF_ERROR(
        checkOutput(call, 1, "output 1 (the pre-activation)", mn, a.dtype));
    break;
  case EpilogueRole::BiasGradient: {
    // Summing a's rows is a reduction over the GEMM's k only when a is
    // transposed (dW = dY^T X): the form cuBLASLt's BGRAD epilogues have.
    if (!transA)
      return Status::error(what + " sums a over axis 0, which is the "
                                  "contracted dim only with trans_a");
    const TensorView &db = call.outputs[1];
    if (db.shape != Shape{1, m} && db.shape != Shape{m})
      return Status::error("output 1 (the column sums of a) has shape " +
                           shapeStr(db.shape) + " but " + what + " computes " +
                           shapeStr(Shape{1, m}) + " (or " +
                           shapeStr(Shape{m}) + ")");
    if (db.dtype != a.dtype)
      return Status::error("output 1 (the column sums of a) has element "
                           "type " +
                           std::string(name(db.dtype)) + " but a has " +
                           std::string(name(a.dtype)));
    return Status::ok();
  }
  default:
    break;
  }
  Activation act;
  return Activation::make(e.op, *call.attrs, act).withContext(what);
}

namespace {

// reduce_sum over axis 0 of the [rows, cols] matrix a, as Reduction.cpp
// sums it: each column in row order, in T. A is a's compute-type copy, or
// null when there is none (a bf16 operand oneDNN read as stored): then each
// row's block is widened as it is summed.
template <typename T>
void columnSums(const TensorView &a, const T *A, T *sums,
                const CpuContext &ctx) {
  constexpr int64_t kCols = 2048;
  const int64_t rows = a.shape[0], cols = a.shape[1];
  int64_t tasks = (cols + kCols - 1) / kCols;
  parallelFor(ctx, tasks, 1, [&](int64_t b, int64_t e) {
    std::vector<T> block;
    for (int64_t t = b; t < e; ++t) {
      int64_t j0 = t * kCols, j1 = std::min(cols, j0 + kCols);
      std::fill(sums + j0, sums + j1, T(0));
      block.resize(static_cast<size_t>(j1 - j0));
      for (int64_t r = 0; r < rows; ++r) {
        const T *row = A ? A + r * cols + j0 : block.data();
        if (!A)
          loadC(a, r * cols + j0, j1 - j0, block.data());
        for (int64_t j = j0; j < j1; ++j)
          sums[j] += row[j - j0];
      }
    }
  });
}

} // namespace

template <typename T>
void storeGemmResult(const OpCall &call, const EpilogueInfo *e, T *C,
                     const T *A, const CpuContext &ctx) {
  const TensorView &out = call.outputs[0];
  if (!e || e->role == EpilogueRole::BiasGradient) {
    storeFromCompute(C, out, ctx);
    if (e) {
      const TensorView &a = call.inputs[0];
      std::vector<T> sums(static_cast<size_t>(a.shape[1]));
      columnSums(a, A, sums.data(), ctx);
      storeC(sums.data(), a.shape[1], call.outputs[1], 0);
    }
    return;
  }
  Activation act;
  (void)Activation::make(e->op, *call.attrs, act); // checkEpilogue passed
  const TensorView *aux =
      e->role == EpilogueRole::ActivationAux ? &call.outputs[1] : nullptr;
  const TensorView *x = e->hasExtraInput() ? &call.inputs[3] : nullptr;
  // An f32 (f64) output is C itself: the post-op runs in place.
  const bool direct = out.dtype == nativeDType<T>() && C == out.data;
  const int64_t total = out.numElements();
  const int64_t chunks = (total + kConvertChunk - 1) / kConvertChunk;
  parallelFor(ctx, chunks, 4, [&](int64_t b, int64_t end) {
    std::vector<T> xs;
    for (int64_t c = b; c < end; ++c) {
      int64_t off = c * kConvertChunk,
              len = std::min(kConvertChunk, total - off);
      T *v = C + off;
      if (aux)
        storeC(v, len, *aux, off);
      if (x) {
        xs.resize(static_cast<size_t>(len));
        loadC(*x, off, len, xs.data());
        act.apply(v, xs.data(), v, len);
      } else {
        act.apply(v, v, len);
      }
      if (!direct)
        storeC(v, len, out, off);
    }
  });
}

template void storeGemmResult(const OpCall &, const EpilogueInfo *, float *,
                              const float *, const CpuContext &);
template void storeGemmResult(const OpCall &, const EpilogueInfo *, double *,
                              const double *, const CpuContext &);

} // namespace ampc::rt::cpu
