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
#include "runtime/cpu/KernelHelpers.h"
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

// A bf16 convolution with fewer input channels per group than this (an
// image-input layer: 1 or 3) widens to f32 even where oneDNN multiplies
// bf16 natively: AMX pads the input channels to a tile, so there the bf16
// passes are slower. LeNet-5's first layer (1 channel, batch 32, this
// project's AVX512_BF16/AMX machine, ONEDNN_VERBOSE per-primitive times):
// backward-filter 296 us in bf16 against 104 us in f32, forward 97 against
// 93; its 6-channel second layer is faster in bf16 in every pass. ResNet-18
// (3 channels in) measured the same either way. The values are the same
// either way: widening bf16 is exact and both accumulate in f32.
inline constexpr int64_t kMinBf16ConvChannels = 4;

// A convolution pass on oneDNN; conv is null where oneDNN refused the
// geometry (the im2col loops run it then; asked once, not every run).
struct ConvPrepared final : PreparedKernel {
  std::unique_ptr<DnnlConvolution> conv;
  bool bf16 = false;
};

inline Status prepareConvPass(const ConvPlan &p, DnnlConvPass pass, DType t,
                              bool bias,
                              std::shared_ptr<const PreparedKernel> &out) {
  if (!onDnnl(t) || p.n == 0 || p.o == 0 || p.c == 0 || p.oh == 0 || p.ow == 0)
    return Status::ok();
  bool bf16 = readsBf16(t) && p.c / p.group >= kMinBf16ConvChannels;
  DnnlConvShape s{pass,    p.n,  p.c,  p.h,  p.w,  p.o,  p.kh, p.kw, p.oh, p.ow,
                  p.group, p.sh, p.sw, p.dh, p.dw, p.pt, p.pl, bias, bf16};
  auto prep = std::make_shared<ConvPrepared>();
  prep->bf16 = s.bf16;
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
  ran = prep && prep->conv;
  return ran ? runConvOnDnnl(call, *prep, ctx) : Status::ok();
}

} // namespace ampc::rt::cpu::kh

#endif // AMPC_RUNTIME_CPU_DNNLKERNELS_H
