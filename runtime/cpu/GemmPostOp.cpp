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
  (void)Activation::make(e->op, *call.attrs, act); // ops::checkEpilogue passed
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
