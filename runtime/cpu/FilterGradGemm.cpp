//===- FilterGradGemm.cpp - a filter gradient on small maps as one GEMM ---===//
#include "runtime/cpu/FilterGradGemm.h"
#include "runtime/cpu/Im2Col.h"
#include "runtime/cpu/KernelHelpers.h"

#include <cstring>
#include <type_traits>

namespace ampc::rt::cpu {
namespace {

using namespace kh;

// The batch's output pixels (the GEMM's inner dimension) up to which the
// GEMM beats oneDNN's backward-filter primitive with its reorder. Measured
// with `ampc-contraction-bench 20`'s resnet18tv rows (one thread, this
// project's AMD EPYC with AVX512_BF16), the primitive against the GEMM: at
// 16 pixels (1x1 maps, the centre tap alone) 3.2 / 0.76 ms in f32 and
// 4.1 / 0.61 in bf16; at 64 (2x2 maps, every tap) 1.24 / 1.33 and
// 1.03 / 0.99, even; at 128 (2x2, batch 32) 2.33 / 3.36 and 2.32 / 2.46,
// at 256 (4x4) 0.80 / 1.24 and 0.55 / 0.79 (the GEMM with this constant
// at 1024). In ResNet-18's step, where the primitive reads its operands
// cold and reorders a gradient of 2.4 MB, the 2x2 layers took 1.36 / 1.24
// ms in f32 and 1.15 / 0.90 in bf16 (a per-kernel timing build, not in
// the tree), hence 64.
constexpr int64_t kMaxFilterGemmPixels = 64;

} // namespace

bool filterGradGemmApplies(const ops::ConvPlan &p) {
  return p.group == 1 && p.n * p.oh * p.ow <= kMaxFilterGemmPixels;
}

FilterGradGemm::FilterGradGemm(const ops::ConvPlan &p, bool bf16,
                               std::vector<int64_t> taps,
                               std::unique_ptr<DnnlMatmul> matmul)
    : plan_(p), bf16_(bf16), taps_(std::move(taps)),
      matmul_(std::move(matmul)) {}
FilterGradGemm::~FilterGradGemm() = default;

Status FilterGradGemm::create(const ops::ConvPlan &p, bool bf16,
                              std::unique_ptr<FilterGradGemm> &out) {
  const int64_t pixels = p.n * p.oh * p.ow;
  std::vector<int64_t> taps;
  for (int64_t i = 0; i < p.kh; ++i)
    for (int64_t j = 0; j < p.kw; ++j)
      if (tapReadsInput(p, i, j))
        taps.push_back(i * p.kw + j);
  if (taps.empty()) // every window is padding: left to the primitive
    return Status::error("no kernel tap reads the input");
  DnnlMatmulShape s;
  s.bf16 = bf16;
  s.m = p.o;
  s.n = p.c * static_cast<int64_t>(taps.size());
  s.k = pixels;
  s.lda = pixels; // dYt [o, pixels]
  s.transB = true;
  s.ldb = pixels; // cols [c * taps, pixels]
  std::unique_ptr<DnnlMatmul> matmul;
  AMPC_RETURN_IF_ERROR(DnnlMatmul::create(s, matmul));
  out.reset(new FilterGradGemm(p, bf16, std::move(taps), std::move(matmul)));
  return Status::ok();
}

Status FilterGradGemm::run(const ops::OpCall &call,
                           const CpuContext &ctx) const {
  return bf16_ ? runAs<uint16_t>(call, ctx) : runAs<float>(call, ctx);
}

// E: the packed operands' element, uint16_t for bf16 as stored (both
// inputs are then bf16) or float.
template <typename E>
Status FilterGradGemm::runAs(const ops::OpCall &call,
                             const CpuContext &ctx) const {
  const ops::ConvPlan &p = plan_;
  const int64_t plane = p.oh * p.ow, pixels = p.n * plane;
  Scratch<float> widened[2];
  auto operand = [&](size_t i) -> const E * {
    if constexpr (std::is_same<E, uint16_t>::value)
      return static_cast<const uint16_t *>(call.inputs[i].data);
    else
      return computeView<float>(call.inputs[i], widened[i], ctx);
  };
  const E *dy = operand(0), *x = operand(1);
  const int64_t ntaps = static_cast<int64_t>(taps_.size()),
                kernelTaps = p.kh * p.kw, live = p.c * ntaps;
  Scratch<E> swapped, cols;
  E *dyt = swapped.resize(static_cast<size_t>(p.o * pixels));
  E *c = cols.resize(static_cast<size_t>(live * pixels));
  parallelFor(ctx, p.n, 1, [&](int64_t b, int64_t e) {
    for (int64_t img = b; img < e; ++img) {
      for (int64_t o = 0; o < p.o; ++o)
        std::memcpy(dyt + o * pixels + img * plane,
                    dy + (img * p.o + o) * plane, plane * sizeof(E));
      for (int64_t ci = 0; ci < p.c; ++ci)
        for (int64_t t = 0; t < ntaps; ++t)
          im2colRow(p, x + (img * p.c + ci) * p.h * p.w, taps_[t] / p.kw,
                    taps_[t] % p.kw,
                    c + (ci * ntaps + t) * pixels + img * plane);
    }
  });
  const TensorView &out = call.outputs[0];
  if (ntaps == kernelTaps) {
    Scratch<float> result;
    float *dw = computeOut<float>(out, result);
    AMPC_RETURN_IF_ERROR(matmul_->run(dyt, c, dw));
    storeFromCompute(dw, out, ctx);
    return Status::ok();
  }
  // The live taps' gradients [o, c * ntaps], each output channel's spread
  // into [c, kh, kw] (zeros for the other taps) and stored, rounded once.
  Scratch<float> liveResult;
  float *g = liveResult.resize(static_cast<size_t>(p.o * live));
  AMPC_RETURN_IF_ERROR(matmul_->run(dyt, c, g));
  const int64_t rowLen = p.c * kernelTaps;
  parallelFor(ctx, p.o, 4, [&](int64_t b, int64_t e) {
    Scratch<float> rowBuf;
    float *row = rowBuf.resize(static_cast<size_t>(rowLen));
    for (int64_t o = b; o < e; ++o) {
      std::fill(row, row + rowLen, 0.0f);
      for (int64_t ci = 0; ci < p.c; ++ci)
        for (int64_t t = 0; t < ntaps; ++t)
          row[ci * kernelTaps + taps_[t]] = g[(o * p.c + ci) * ntaps + t];
      storeF32(row, rowLen, out, o * rowLen);
    }
  });
  return Status::ok();
}

} // namespace ampc::rt::cpu
