//===- SmallMapConv.h - convolution passes on small maps as one GEMM ------===//
//
// On small feature maps a oneDNN convolution primitive spends most of its
// time outside the arithmetic: its kernels split the work along a map of a
// few pixels, and the filter is reordered into its blocked layouts before
// every forward and backward-data run and its gradient out of them after
// every backward-filter run (torchvision's ResNet-18 at 32x32 runs its last
// stage on 1x1 maps, where one 512x512x3x3 filter gradient took 1.3 ms in
// the bf16 primitive and 1.75 ms in the reorder on this project's AMD EPYC,
// ONEDNN_VERBOSE). Here every output pixel of the batch is one index of a
// GEMM dimension, K = n * oh * ow, and each pass is one oneDNN matmul on
// the filter as stored, row-major [o, r] with r = c * kh * kw:
//
//   backward-filter  dW[o, r] = dYt[o, K] * cols^T[K, r]
//   forward          Z[o, K]  = W[o, r] * cols[r, K], Z's columns being
//                    each image's output channels (plus the bias)
//   backward-data    dC[r, K] = W^T[r, o] * dYt[o, K], then col2im
//
// with cols every image's im2col matrix side by side and dYt the output
// gradient with its batch and channel axes swapped. Kernel taps that read
// only padding (on a 1x1 map, every tap of a padded 3x3 kernel but the
// centre) are left out: their rows of cols, W's columns for them (packed
// out of W) and, in the filter gradient, their gradients, written as zeros.
//
// The operands are packed as stored bf16 where the CPU multiplies bf16
// (Dnnl.h), else as f32; accumulation is f32 and each stored value is
// rounded once, as on the other routes (the sums run in another order).
// Which passes take this route is SmallMapConv.cpp's measured choice.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_SMALLMAPCONV_H
#define AMPC_RUNTIME_CPU_SMALLMAPCONV_H

#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/ops/OpCall.h"
#include "runtime/ops/WindowGeometry.h"

#include <memory>
#include <vector>

namespace ampc::rt::cpu {

// Whether pass `pass` of plan `p` runs as one GEMM over the batch.
bool smallMapConvApplies(const ops::ConvPlan &p, DnnlConvPass pass);

class SmallMapConv {
public:
  // `bf16`: the operands are read as stored bf16 (else as f32, widened
  // when stored narrower). Fails (with oneDNN's reason) only where oneDNN
  // cannot describe the GEMM, or where no tap reads the input.
  static Status create(const ops::ConvPlan &p, DnnlConvPass pass, bool bf16,
                       std::unique_ptr<SmallMapConv> &out);
  ~SmallMapConv();

  // Runs the pass on the call's operands, as the conv2d kernels take them:
  // Forward (x, w, bias or none), BackwardData (dy, w), BackwardFilter
  // (dy, x).
  Status run(const ops::OpCall &call, const CpuContext &ctx) const;

private:
  SmallMapConv(const ops::ConvPlan &p, DnnlConvPass pass, bool bf16,
               std::vector<int64_t> taps, std::unique_ptr<DnnlMatmul> matmul);
  template <typename E>
  Status runAs(const ops::OpCall &call, const CpuContext &ctx) const;

  ops::ConvPlan plan_;
  DnnlConvPass pass_;
  bool bf16_;
  // The kernel taps (i * kw + j) that read some input element, in order.
  std::vector<int64_t> taps_;
  std::unique_ptr<DnnlMatmul> matmul_;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_SMALLMAPCONV_H
