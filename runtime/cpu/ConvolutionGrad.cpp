//===- ConvolutionGrad.cpp - conv2d's input and filter gradients ----------===//
//
// conv2d_backward_data and conv2d_backward_filter, written as the forward
// conv2d is (Contraction.cpp): a oneDNN convolution pass (DnnlKernels.h)
// for f32, f16 and bf16; for f64, and a geometry oneDNN does not take, per
// image and group one OpenBLAS GEMM against the im2col matrix, with each
// stored value rounded once. The data gradient is W^T * dY scattered back by
// col2im; the filter gradient is dY * im2col(X)^T summed over the batch.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Blas.h"
#include "runtime/cpu/DnnlKernels.h"
#include "runtime/cpu/Im2Col.h"
#include "runtime/cpu/ImageConvBf16.h"
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/ContractionPlan.h"

namespace ampc::rt::cpu {
namespace {
using namespace kh;

// The batch is summed in at most this many fixed slices, each into its own
// partial filter gradient, so threads never share an accumulator and the
// result does not depend on the thread count.
constexpr int64_t kMaxBatchSlices = 8;
// Upper bound on the partial gradients' elements, all slices together.
constexpr int64_t kMaxPartialElements = int64_t(1) << 24;

//===----------------------------------------------------------------------===//
// conv2d_backward_data
//===----------------------------------------------------------------------===//

template <typename T>
void runBackwardDataT(const OpCall &call, const ConvPlan &p,
                      const CpuContext &ctx) {
  Scratch<T> sg, sf, so;
  const T *G = computeView<T>(call.inputs[0], sg, ctx);
  const T *F = computeView<T>(call.inputs[1], sf, ctx);
  const TensorView &out = call.outputs[0];
  T *DX = computeOut<T>(out, so);
  int64_t og = p.o / p.group, kdim = p.cg * p.kh * p.kw, cols = p.oh * p.ow;
  bool direct = isDirect(p);
  // Each (image, group) task writes its own channels of the result.
  parallelFor(ctx, p.n * p.group, 1, [&](int64_t t0, int64_t t1) {
    Scratch<T> col;
    if (!direct)
      col.resize(static_cast<size_t>(kdim * cols));
    for (int64_t t = t0; t < t1; ++t) {
      int64_t img = t / p.group, g = t % p.group;
      T *xg = DX + (img * p.c + g * p.cg) * p.h * p.w;
      const T *gy = G + (img * p.o + g * og) * cols;
      const T *fg = F + g * og * kdim;
      if (direct) {
        gemmRM<T>(true, false, kdim, cols, og, T(1), fg, kdim, gy, cols, T(0),
                  xg, cols);
        continue;
      }
      gemmRM<T>(true, false, kdim, cols, og, T(1), fg, kdim, gy, cols, T(0),
                col.data(), cols);
      std::fill(xg, xg + p.cg * p.h * p.w, T(0));
      col2im(p, col.data(), xg);
    }
  });
  storeFromCompute(DX, out, ctx);
}

Status prepareBackwardData(const OpCall &call,
                           std::shared_ptr<const PreparedKernel> &out) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardData(call, p));
  return prepareConvPass(p, DnnlConvPass::BackwardData, call.inputs[0].dtype,
                         false, out);
}

Status runBackwardData(const OpCall &call, CpuContext &ctx) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardData(call, p));
  bool ran = false;
  AMPC_RETURN_IF_ERROR(
      runConvPassIfPrepared(call, prepareBackwardData, ctx, ran));
  if (ran)
    return Status::ok();
  if (call.inputs[0].dtype == DType::F64)
    runBackwardDataT<double>(call, p, ctx);
  else
    runBackwardDataT<float>(call, p, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// conv2d_backward_filter
//===----------------------------------------------------------------------===//

template <typename T>
void runBackwardFilterT(const OpCall &call, const ConvPlan &p,
                        const CpuContext &ctx) {
  Scratch<T> sg, sx, so;
  const T *G = computeView<T>(call.inputs[0], sg, ctx);
  const T *X = computeView<T>(call.inputs[1], sx, ctx);
  const TensorView &out = call.outputs[0];
  T *DW = computeOut<T>(out, so);
  int64_t og = p.o / p.group, kdim = p.cg * p.kh * p.kw, cols = p.oh * p.ow;
  int64_t filterSize = p.o * kdim;
  bool direct = isDirect(p);
  // Groups alone give enough tasks when there are many (depthwise); else the
  // batch is cut into slices summed separately.
  int64_t slices = std::min(p.n, kMaxBatchSlices);
  if (p.group >= kMaxBatchSlices || filterSize == 0)
    slices = 1;
  slices = std::max<int64_t>(
      1,
      std::min(slices, kMaxPartialElements / std::max<int64_t>(filterSize, 1)));
  Scratch<T> partials;
  if (slices > 1)
    partials.resize(static_cast<size_t>(slices * filterSize));
  parallelFor(ctx, slices * p.group, 1, [&](int64_t t0, int64_t t1) {
    Scratch<T> col;
    if (!direct)
      col.resize(static_cast<size_t>(kdim * cols));
    for (int64_t t = t0; t < t1; ++t) {
      int64_t s = t / p.group, g = t % p.group;
      T *dst =
          (slices == 1 ? DW : partials.data() + s * filterSize) + g * og * kdim;
      int64_t img0 = s * p.n / slices, img1 = (s + 1) * p.n / slices;
      if (img0 == img1)
        std::fill(dst, dst + og * kdim, T(0));
      for (int64_t img = img0; img < img1; ++img) {
        const T *xg = X + (img * p.c + g * p.cg) * p.h * p.w;
        const T *colPtr = xg;
        if (!direct) {
          im2col(p, xg, col.data());
          colPtr = col.data();
        }
        const T *gy = G + (img * p.o + g * og) * cols;
        gemmRM<T>(false, true, og, kdim, cols, T(1), gy, cols, colPtr, cols,
                  img == img0 ? T(0) : T(1), dst, kdim);
      }
    }
  });
  if (slices > 1)
    parallelFor(ctx, filterSize, 4096, [&](int64_t e0, int64_t e1) {
      for (int64_t e = e0; e < e1; ++e) {
        T sum = partials.data()[e];
        for (int64_t s = 1; s < slices; ++s)
          sum += partials.data()[s * filterSize + e];
        DW[e] = sum;
      }
    });
  storeFromCompute(DW, out, ctx);
}

Status prepareBackwardFilter(const OpCall &call,
                             std::shared_ptr<const PreparedKernel> &out) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardFilter(call, p));
  return prepareConvPass(p, DnnlConvPass::BackwardFilter, call.inputs[0].dtype,
                         false, out);
}

Status runBackwardFilter(const OpCall &call, CpuContext &ctx) {
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardFilter(call, p));
  if (imageConvBf16Takes(call, p)) {
    imageConvBf16FilterGrad(p,
                            static_cast<const uint16_t *>(call.inputs[0].data),
                            static_cast<const uint16_t *>(call.inputs[1].data),
                            static_cast<uint16_t *>(call.outputs[0].data), ctx);
    return Status::ok();
  }
  bool ran = false;
  AMPC_RETURN_IF_ERROR(
      runConvPassIfPrepared(call, prepareBackwardFilter, ctx, ran));
  if (ran)
    return Status::ok();
  if (call.inputs[0].dtype == DType::F64)
    runBackwardFilterT<double>(call, p, ctx);
  else
    runBackwardFilterT<float>(call, p, ctx);
  return Status::ok();
}

} // namespace

void addConvolutionGradKernels(std::vector<KernelEntry> &out) {
  out.push_back({"conv2d_backward_data", runBackwardData, prepareBackwardData});
  out.push_back({"conv_transpose2d", runBackwardData, prepareBackwardData});
  out.push_back(
      {"conv2d_backward_filter", runBackwardFilter, prepareBackwardFilter});
}

} // namespace ampc::rt::cpu
