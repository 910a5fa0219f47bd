//===- ImageConvBf16.h - bf16 image-input convolutions on AVX512_BF16 -----===//
//
// A network's first convolution reads the image: 1 or 3 channels, where
// oneDNN pads the channels to its vector and runs slower than im2col in f32
// (DnnlKernels.h's kFewConvChannels), so that layer used to compute in f32
// whatever the step's precision, and a bf16 step paid for widening its
// operands and rounding its results on top (LeNet-5: its two passes of the
// first layer were a third of the bf16 step). With AVX512_BF16 these loops
// compute it from the bf16 values as stored, 16 f32 accumulators per
// instruction each adding two products (vdpbf16ps):
//
// - forward: 16 output pixels of a row at a time; each instruction takes
//   two neighbouring taps of the kernel row, whose pixels are neighbours in
//   the input row, so a pair vector is one load and one word permutation,
//   shared by every output channel of the block;
// - filter gradient: the products of two neighbouring output pixels, the
//   output gradient's row against the input row shifted by the tap, summed
//   over the batch by one task per (channel, kernel row, output channels),
//   so the result does not depend on the thread count.
//
// Accumulation is f32 and each result is rounded once to bf16, as
// everywhere in the CPU backend; as in oneDNN's bf16 kernels, vdpbf16ps
// treats subnormal inputs and partial sums as zero.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_IMAGECONVBF16_H
#define AMPC_RUNTIME_CPU_IMAGECONVBF16_H

#include "runtime/DType.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/ops/OpCall.h"
#include "runtime/ops/WindowGeometry.h"

#include <cstdint>

namespace ampc::rt::cpu {

// Whether these loops take a convolution pass of plan `p` whose operands
// are stored as `t`: bf16 on a CPU with native bf16 products (Dnnl.h's
// nativeBf16Contractions), fewer input channels than kFewConvChannels,
// ungrouped, stride 1, undilated, at most 8 kernel columns.
bool imageConvBf16Applies(const ops::ConvPlan &p, DType t);

// imageConvBf16Applies to the call's plan, and every operand and result of
// the call is bf16.
bool imageConvBf16Takes(const ops::OpCall &call, const ops::ConvPlan &p);

// y = conv(x, w) + bias (bias may be null), NCHW / OIHW, all bf16 bits.
void imageConvBf16Forward(const ops::ConvPlan &p, const uint16_t *x,
                          const uint16_t *w, const uint16_t *bias, uint16_t *y,
                          const CpuContext &ctx);

// dw = the filter gradient of dy over x summed over the batch, bf16 bits.
void imageConvBf16FilterGrad(const ops::ConvPlan &p, const uint16_t *dy,
                             const uint16_t *x, uint16_t *dw,
                             const CpuContext &ctx);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_IMAGECONVBF16_H
