//===- DnnlKernels.h - how the contraction kernels use oneDNN -------------===//
//
// The choice between oneDNN and the OpenBLAS loops by dtype, the prepared
// state of a call (built by the session, or now for a call it did not
// prepare), and the convolution passes' prepare and run, which the forward
// conv2d (Contraction.cpp) and its gradients (ConvolutionGrad.cpp) share.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_DNNLKERNELS_H
#define AMPC_RUNTIME_CPU_DNNLKERNELS_H

#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/ImageConvBf16.h"
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/SmallMapConv.h"
#include "runtime/ops/WindowGeometry.h"

namespace ampc::rt::cpu::kh {

// Whether a float contraction of this dtype runs on oneDNN (f64 does not:
// oneDNN has no f64 kernels), and whether oneDNN reads its operands as
// stored bf16 rather than widened to f32.
inline bool onDnnl(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16;
}
inline bool readsBf16(DType t) {
  return t == DType::BF16 && nativeBf16Contractions();
}

using PrepareFn = Status (*)(const OpCall &,
                             std::shared_ptr<const PreparedKernel> &);

// The call's prepared state as a P, or one built now into `local` for a
// call the session did not prepare. Null (with ok) when the call has none.
template <typename P>
Status preparedOf(const OpCall &call, PrepareFn prepare,
                  std::shared_ptr<const PreparedKernel> &local, const P *&out) {
  if (!call.prepared)
    AMPC_RETURN_IF_ERROR(prepare(call, local));
  out =
      static_cast<const P *>(call.prepared ? call.prepared.get() : local.get());
  return Status::ok();
}

// A convolution with fewer input channels than this (an image-input
// layer: 1 or 3), where oneDNN pads the channels to its vector or AMX
// tile: in bf16 on a CPU that multiplies bf16, its forward and
// filter-gradient passes run ImageConvBf16.h's loops (where their geometry
// allows); otherwise it computes in f32, the forward and backward-data
// passes on the im2col + OpenBLAS loops and the backward-filter pass on
// oneDNN. Measured with ampc-contraction-bench, one thread, on an
// AVX512_BF16/AMX machine (LeNet-5's 1-channel layer / a ResNet stem's
// 3-channel one): f32 forward on im2col 0.14 / 0.67 ms against oneDNN's
// 0.17 / 0.83, backward-data 0.16 / 0.68 against 1.76 / 2.00,
// backward-filter 0.16 / 0.88 against 0.19 / 0.60; oneDNN's native bf16
// was slower still (LeNet-5's backward-filter 296 us in bf16 against 104
// us in f32). On this project's AMD EPYC (AVX512_BF16, no AMX) the bf16
// loops took LeNet-5's forward to 0.10 ms (0.27 in f32 on im2col) and its
// filter gradient to 0.06 (0.26 on oneDNN in f32), the stem's to 0.60 and
// 0.50 (1.03 and 0.77). The values are the same up to summation order:
// widening bf16 is exact and every path accumulates in f32.
inline constexpr int64_t kFewConvChannels = 4;

// A convolution pass on oneDNN: a convolution primitive, or on small maps
// one matmul over the batch (SmallMapConv.h); both null where oneDNN
// refused the geometry or kFewConvChannels sends it to the im2col loops
// (asked once, not every run).
struct ConvPrepared final : PreparedKernel {
  std::unique_ptr<DnnlConvolution> conv;
  std::unique_ptr<SmallMapConv> smallMap;
  bool bf16 = false;
  bool onDnnl() const { return conv || smallMap; }
};

inline Status prepareConvPass(const ConvPlan &p, DnnlConvPass pass, DType t,
                              bool bias,
                              std::shared_ptr<const PreparedKernel> &out) {
  if (!onDnnl(t) || p.n == 0 || p.o == 0 || p.c == 0 || p.oh == 0 || p.ow == 0)
    return Status::ok();
  auto prep = std::make_shared<ConvPrepared>();
  // Total input channels: a depthwise or grouped convolution (1 channel per
  // group, MobileNet's) has oneDNN kernels of its own and stays there.
  const bool fewChannels = p.c < kFewConvChannels;
  // No oneDNN primitive where ImageConvBf16.h's loops or im2col run.
  if (fewChannels &&
      (pass != DnnlConvPass::BackwardFilter || imageConvBf16Applies(p, t))) {
    out = std::move(prep); // no primitive: the im2col loops
    return Status::ok();
  }
  bool bf16 = readsBf16(t) && !fewChannels;
  prep->bf16 = bf16;
  if (!fewChannels && smallMapConvApplies(p, pass) &&
      SmallMapConv::create(p, pass, bf16, prep->smallMap)) {
    out = std::move(prep);
    return Status::ok();
  }
  DnnlConvShape s{pass,    p.n,  p.c,  p.h,  p.w,  p.o,  p.kh, p.kw, p.oh, p.ow,
                  p.group, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, bias, bf16};
  if (!DnnlConvolution::create(s, prep->conv))
    prep->conv.reset();
  out = std::move(prep);
  return Status::ok();
}

// Runs the call's pass: inputs 0 and 1 (and 2, a forward's bias, when
// present) as stored or widened to f32, the f32 result rounded once into
// output 0.
inline Status runConvOnDnnl(const OpCall &call, const ConvPrepared &prep,
                            const CpuContext &ctx) {
  if (prep.smallMap)
    return prep.smallMap->run(call, ctx);
  Scratch<float> s0, s1, s2, so;
  auto operand = [&](size_t i, Scratch<float> &storage) -> const void * {
    if (!hasInput(call, i))
      return nullptr;
    return prep.bf16 ? call.inputs[i].data
                     : computeView<float>(call.inputs[i], storage, ctx);
  };
  const void *in0 = operand(0, s0), *in1 = operand(1, s1),
             *bias = operand(2, s2);
  const TensorView &out = call.outputs[0];
  float *result = computeOut<float>(out, so);
  AMPC_RETURN_IF_ERROR(prep.conv->run(in0, in1, bias, result));
  storeFromCompute(result, out, ctx);
  return Status::ok();
}

// Runs the call on its oneDNN convolution pass when it has one (prepared by
// the session, or built now by `prepare`); `ran` says whether it did, and
// the caller runs its im2col loops when not.
inline Status runConvPassIfPrepared(const OpCall &call, PrepareFn prepare,
                                    const CpuContext &ctx, bool &ran) {
  std::shared_ptr<const PreparedKernel> local;
  const ConvPrepared *prep = nullptr;
  AMPC_RETURN_IF_ERROR(preparedOf<ConvPrepared>(call, prepare, local, prep));
  ran = prep && prep->onDnnl();
  return ran ? runConvOnDnnl(call, *prep, ctx) : Status::ok();
}

} // namespace ampc::rt::cpu::kh

#endif // AMPC_RUNTIME_CPU_DNNLKERNELS_H
