//===- SmallMapConv.cpp - convolution passes on small maps as one GEMM ----===//
#include "runtime/cpu/SmallMapConv.h"
#include "runtime/cpu/Im2Col.h"
#include "runtime/cpu/KernelHelpers.h"

#include <cstring>
#include <type_traits>

namespace ampc::rt::cpu {
namespace {

using namespace kh;

// The batch's output pixels up to which the GEMM beats oneDNN's
// primitives. Measured with `ampc-contraction-bench 20`'s resnet18tv rows
// (one thread, this project's AMD EPYC with AVX512_BF16), the primitive
// against the GEMM, backward-filter: at 16 pixels (1x1 maps, the centre
// tap alone) 3.2 / 0.76 ms in f32 and 4.1 / 0.61 in bf16; at 64 (2x2
// maps, every tap) 1.24 / 1.33 and 1.03 / 0.99, even; at 128 (2x2, batch
// 32) 2.33 / 3.36 and 2.32 / 2.46, at 256 (4x4) 0.80 / 1.24 and 0.55 /
// 0.79 (the GEMM with this constant at 1024). In ResNet-18's step, where
// the primitive reads its operands cold and reorders a gradient of 2.4 MB,
// the 2x2 layers took 1.36 / 1.24 ms in f32 and 1.15 / 0.90 in bf16 (a
// per-kernel timing build, not in the tree), hence 64.
constexpr int64_t kMaxGemmPixels = 64;

// Stores `rows` runs of `len` values into `out`, run r at r * len: each
// built in f32 by fill(r, run) from zeros and rounded once; the runs are
// split over the threads.
template <typename Fill>
void storeRuns(const CpuContext &ctx, const TensorView &out, int64_t rows,
               int64_t len, Fill fill) {
  parallelFor(ctx, rows, 1, [&](int64_t b, int64_t e) {
    Scratch<float> runBuf;
    float *run = runBuf.resize(static_cast<size_t>(len));
    for (int64_t r = b; r < e; ++r) {
      std::fill(run, run + len, 0.0f);
      fill(r, run);
      storeF32(run, len, out, r * len);
    }
  });
}

std::vector<int64_t> liveTaps(const ops::ConvPlan &p) {
  std::vector<int64_t> taps;
  for (int64_t i = 0; i < p.kh; ++i)
    for (int64_t j = 0; j < p.kw; ++j)
      if (tapReadsInput(p, i, j))
        taps.push_back(i * p.kw + j);
  return taps;
}

} // namespace

bool smallMapConvApplies(const ops::ConvPlan &p, DnnlConvPass pass) {
  if (p.group != 1 || p.n * p.oh * p.ow > kMaxGemmPixels)
    return false;
  // The forward and backward-data primitives keep maps whose every tap
  // reads the input: written as W * cols they were slower on 2x2 and 4x4
  // maps in ResNet-18's step (the per-kernel timing build above).
  return pass == DnnlConvPass::BackwardFilter ||
         static_cast<int64_t>(liveTaps(p).size()) < p.kh * p.kw;
}

SmallMapConv::SmallMapConv(const ops::ConvPlan &p, DnnlConvPass pass, bool bf16,
                           std::vector<int64_t> taps,
                           std::unique_ptr<DnnlMatmul> matmul)
    : plan_(p), pass_(pass), bf16_(bf16), taps_(std::move(taps)),
      matmul_(std::move(matmul)) {}
SmallMapConv::~SmallMapConv() = default;

Status SmallMapConv::create(const ops::ConvPlan &p, DnnlConvPass pass,
                            bool bf16, std::unique_ptr<SmallMapConv> &out) {
  std::vector<int64_t> taps = liveTaps(p);
  if (taps.empty()) // every window is padding: left to the primitive
    return Status::error("no kernel tap reads the input");
  const int64_t pixels = p.n * p.oh * p.ow,
                live = p.c * static_cast<int64_t>(taps.size());
  DnnlMatmulShape s;
  s.bf16 = bf16;
  switch (pass) {
  case DnnlConvPass::BackwardFilter: // dYt [o, K] * cols^T
    s.m = p.o, s.n = live, s.k = pixels, s.lda = pixels;
    s.transB = true, s.ldb = pixels;
    break;
  case DnnlConvPass::Forward: // W [o, live] * cols [live, K]
    s.m = p.o, s.n = pixels, s.k = live, s.lda = live, s.ldb = pixels;
    break;
  case DnnlConvPass::BackwardData: // W^T [live, o] * dYt [o, K]
    s.m = live, s.n = pixels, s.k = p.o, s.transA = true, s.lda = live;
    s.ldb = pixels;
    break;
  }
  std::unique_ptr<DnnlMatmul> matmul;
  AMPC_RETURN_IF_ERROR(DnnlMatmul::create(s, matmul));
  out.reset(
      new SmallMapConv(p, pass, bf16, std::move(taps), std::move(matmul)));
  return Status::ok();
}

Status SmallMapConv::run(const ops::OpCall &call, const CpuContext &ctx) const {
  return bf16_ ? runAs<uint16_t>(call, ctx) : runAs<float>(call, ctx);
}

// E: the packed operands' element, uint16_t for bf16 as stored (every
// operand is then bf16) or float.
template <typename E>
Status SmallMapConv::runAs(const ops::OpCall &call,
                           const CpuContext &ctx) const {
  const ops::ConvPlan &p = plan_;
  const int64_t plane = p.oh * p.ow, pixels = p.n * plane,
                image = p.c * p.h * p.w, inPlane = p.h * p.w,
                ntaps = static_cast<int64_t>(taps_.size()),
                kernelTaps = p.kh * p.kw, live = p.c * ntaps;
  Scratch<float> widened[2];
  auto operand = [&](size_t i) -> const E * {
    if constexpr (std::is_same<E, uint16_t>::value)
      return static_cast<const uint16_t *>(call.inputs[i].data);
    else
      return computeView<float>(call.inputs[i], widened[i], ctx);
  };
  const E *in0 = operand(0), *in1 = operand(1);
  // Every image's im2col rows of the live taps side by side: [live, K].
  // Threads take whole rows: an image's part of a row is a few pixels, and
  // threads writing neighbouring parts would share cache lines.
  Scratch<E> colsBuf;
  auto packCols = [&](const E *x) {
    E *c = colsBuf.resize(static_cast<size_t>(live * pixels));
    parallelFor(ctx, live, 16, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        int64_t ci = row / ntaps, tap = taps_[row % ntaps];
        for (int64_t img = 0; img < p.n; ++img)
          im2colRow(p, x + img * image + ci * inPlane, tap / p.kw, tap % p.kw,
                    c + row * pixels + img * plane);
      }
    });
    return c;
  };
  // dy [n, o, plane] with its first two axes swapped: [o, K], by rows.
  Scratch<E> swappedBuf;
  auto packSwapped = [&](const E *dy) {
    E *d = swappedBuf.resize(static_cast<size_t>(p.o * pixels));
    parallelFor(ctx, p.o, 16, [&](int64_t b, int64_t e) {
      for (int64_t o = b; o < e; ++o)
        for (int64_t img = 0; img < p.n; ++img)
          std::memcpy(d + o * pixels + img * plane,
                      dy + (img * p.o + o) * plane, plane * sizeof(E));
    });
    return d;
  };
  // W's columns of the live taps: [o, live] (W itself when all are).
  Scratch<E> filterBuf;
  auto liveFilter = [&](const E *w) -> const E * {
    if (ntaps == kernelTaps)
      return w;
    E *f = filterBuf.resize(static_cast<size_t>(p.o * live));
    parallelFor(ctx, p.o * p.c, 256, [&](int64_t b, int64_t e) {
      for (int64_t oc = b; oc < e; ++oc)
        for (int64_t t = 0; t < ntaps; ++t)
          f[oc * ntaps + t] = w[oc * kernelTaps + taps_[t]];
    });
    return f;
  };
  const TensorView &out = call.outputs[0];
  Scratch<float> product;
  switch (pass_) {
  case DnnlConvPass::BackwardFilter: {
    const E *dyt = packSwapped(in0), *c = packCols(in1);
    if (ntaps == kernelTaps) {
      Scratch<float> result;
      float *dw = computeOut<float>(out, result);
      AMPC_RETURN_IF_ERROR(matmul_->run(dyt, c, dw));
      storeFromCompute(dw, out, ctx);
      break;
    }
    // The live taps' gradients [o, live], each output channel's spread
    // into [c, kh, kw] (zeros for the other taps) and stored, rounded once.
    float *g = product.resize(static_cast<size_t>(p.o * live));
    AMPC_RETURN_IF_ERROR(matmul_->run(dyt, c, g));
    storeRuns(ctx, out, p.o, p.c * kernelTaps, [&](int64_t o, float *row) {
      for (int64_t ci = 0; ci < p.c; ++ci)
        for (int64_t t = 0; t < ntaps; ++t)
          row[ci * kernelTaps + taps_[t]] = g[(o * p.c + ci) * ntaps + t];
    });
    break;
  }
  case DnnlConvPass::Forward: {
    float *z = product.resize(static_cast<size_t>(p.o * pixels));
    AMPC_RETURN_IF_ERROR(matmul_->run(liveFilter(in1), packCols(in0), z));
    std::vector<float> bias(static_cast<size_t>(p.o), 0.0f);
    if (hasInput(call, 2))
      loadF32(call.inputs[2], 0, p.o, bias.data());
    // Image img's output [o, plane] is column block img of Z, plus bias.
    storeRuns(ctx, out, p.n, p.o * plane, [&](int64_t img, float *y) {
      for (int64_t o = 0; o < p.o; ++o)
        for (int64_t i = 0; i < plane; ++i)
          y[o * plane + i] = z[o * pixels + img * plane + i] + bias[o];
    });
    break;
  }
  case DnnlConvPass::BackwardData: {
    float *dc = product.resize(static_cast<size_t>(live * pixels));
    AMPC_RETURN_IF_ERROR(matmul_->run(liveFilter(in1), packSwapped(in0), dc));
    storeRuns(ctx, out, p.n, image, [&](int64_t img, float *dx) {
      for (int64_t ci = 0; ci < p.c; ++ci)
        for (int64_t t = 0; t < ntaps; ++t)
          col2imRow(p, dc + (ci * ntaps + t) * pixels + img * plane,
                    taps_[t] / p.kw, taps_[t] % p.kw, dx + ci * inPlane);
    });
    break;
  }
  }
  return Status::ok();
}

} // namespace ampc::rt::cpu
