//===- FilterGradGemm.h - a filter gradient on small maps as one GEMM -----===//
//
// On small feature maps oneDNN's backward-filter primitive spends most of
// its time outside the arithmetic: its kernels split the work along a map
// of a few pixels, and the f32 gradient leaves its blocked layout through a
// reorder that takes as long again (torchvision's ResNet-18 at 32x32 runs
// its last stage on 1x1 maps, where one 512x512x3x3 gradient took 1.3 ms in
// the bf16 primitive and 1.75 ms in the reorder on this project's AMD EPYC,
// ONEDNN_VERBOSE). Here every output pixel of the batch is one index of
// the GEMM's inner dimension, K = n * oh * ow:
//
//   dW[o, c * kh * kw] = dYt[o, K] * cols^T[K, c * kh * kw]
//
// with dYt the output gradient with its batch and channel axes swapped and
// cols every image's im2col matrix side by side: one oneDNN matmul whose
// result is the filter gradient in its stored layout. Kernel taps that read
// only padding (on a 1x1 map, every tap of a padded 3x3 kernel but the
// centre) have zero gradients: their rows of cols are left out of the GEMM
// and their gradients written as zeros. Operands are packed
// as stored bf16 where the CPU multiplies bf16 (Dnnl.h), else as f32;
// accumulation is f32 and each stored value is rounded once, as on the
// other routes (the sums run in another order).
//
// The forward and backward-data passes stay on the primitives: written the
// same way (W * cols, and W^T * dYt then col2im) they were slower in the
// step on 2x2 and 4x4 maps and no faster on 1x1 ones (measured in
// ResNet-18's step, one thread, before this file kept only this pass).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_FILTERGRADGEMM_H
#define AMPC_RUNTIME_CPU_FILTERGRADGEMM_H

#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/ops/OpCall.h"
#include "runtime/ops/WindowGeometry.h"

#include <memory>
#include <vector>

namespace ampc::rt::cpu {

// Whether the filter gradient of plan `p` (ungrouped) runs as one GEMM:
// when the batch has at most kMaxFilterGemmPixels output pixels in all
// (FilterGradGemm.cpp says how that was measured).
bool filterGradGemmApplies(const ops::ConvPlan &p);

class FilterGradGemm {
public:
  // `bf16`: the operands are read as stored bf16 (else as f32, widened
  // when stored narrower). Fails (with oneDNN's reason) only where oneDNN
  // cannot describe the GEMM.
  static Status create(const ops::ConvPlan &p, bool bf16,
                       std::unique_ptr<FilterGradGemm> &out);
  ~FilterGradGemm();

  // conv2d_backward_filter's call: inputs (dy, x), output dw.
  Status run(const ops::OpCall &call, const CpuContext &ctx) const;

private:
  FilterGradGemm(const ops::ConvPlan &p, bool bf16, std::vector<int64_t> taps,
                 std::unique_ptr<DnnlMatmul> matmul);
  template <typename E>
  Status runAs(const ops::OpCall &call, const CpuContext &ctx) const;

  ops::ConvPlan plan_;
  bool bf16_;
  // The kernel taps (i * kw + j) that read some input element, in order.
  std::vector<int64_t> taps_;
  std::unique_ptr<DnnlMatmul> matmul_;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_FILTERGRADGEMM_H
