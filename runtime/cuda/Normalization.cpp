//===- Normalization.cpp - layer_norm and layer_norm_grad on the GPU ------===//
//
// The CPU kernels' semantics (runtime/cpu/Normalization.cpp,
// NormalizationGrad.cpp): the dims from attribute 'axis' on are normalized
// (d elements per row), 'epsilon' is added to the biased variance, the
// saved mean and 1/sqrt(var + eps) are f32 [..., 1, 1], and scale (and
// bias) broadcast to the normalized shape; their gradients are summed back
// to the scale's own shape. A broadcast scale or bias is read through an
// index table uploaded at prepare time. f64 is refused at prepare time.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/RowLaunch.h"
#include "runtime/cuda/kernels/LayerNormArgs.h"
#include "runtime/ops/Shapes.h"

namespace ampc::rt::cuda {
namespace {

using ampc_cuda::LnParams;
using ampc_cuda::LnStats;

int code(DType t) { return static_cast<int>(t); }

// The index table of `t` broadcast to `normalized`; none when t already
// has the normalized shape's elements (then it is that shape, leading 1s
// aside).
Status indexTable(CudaDevice &device, const TensorView &t,
                  const Shape &normalized, const std::string &what,
                  DeviceBuffer &buf) {
  if (t.numElements() == numElements(normalized))
    return Status::ok();
  std::vector<int64_t> src = ops::broadcastIndex(t.shape, normalized);
  std::vector<int32_t> idx(src.begin(), src.end());
  return buf.upload(device, idx.data(), idx.size() * sizeof(int32_t), what);
}

const int32_t *tablePtr(const DeviceBuffer &b) {
  return reinterpret_cast<const int32_t *>(b.get());
}

Status checkInputs(const ops::OpCall &call, size_t xAt) {
  AMPC_RETURN_IF_ERROR(
      rows::checkDType(call.op, "input", call.inputs[xAt].dtype));
  AMPC_RETURN_IF_ERROR(
      rows::checkDType(call.op, "scale", call.inputs[xAt + 1].dtype));
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

class LayerNormKernel : public PreparedKernel {
public:
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    AMPC_RETURN_IF_ERROR(checkInputs(call, 0));
    const TensorView &x = call.inputs[0], &scale = call.inputs[1];
    int64_t axis = call.attrs->getInt("axis");
    Shape normalized(x.shape.begin() + axis, x.shape.end());
    rows_ = ops::product(x.shape, 0, axis);
    d_ = numElements(normalized);
    eps_ = call.attrs->getFloat("epsilon");
    AMPC_RETURN_IF_ERROR(indexTable(ctx.device, scale, normalized,
                                    "layer_norm scale index", scaleIdx_));
    p_ = LnParams{};
    p_.scale = scale.data;
    p_.scaleType = code(scale.dtype);
    p_.scaleIdx = tablePtr(scaleIdx_);
    if (ops::hasInput(call, 2)) {
      const TensorView &bias = call.inputs[2];
      AMPC_RETURN_IF_ERROR(indexTable(ctx.device, bias, normalized,
                                      "layer_norm bias index", biasIdx_));
      p_.bias = bias.data;
      p_.biasType = code(bias.dtype);
      p_.biasIdx = tablePtr(biasIdx_);
    }
    x_ = x.data;
    y_ = call.outputs[0].data;
    mean_ = call.outputs[1].data;
    invStd_ = call.outputs[2].data;
    if (rows_ == 0)
      return Status::ok();
    return rows::choose(ctx.device, CudaKernel::LayerNormWarp,
                        CudaKernel::LayerNormBlock, x.dtype, rows_, d_,
                        {x_, y_}, fn_, name_, dims_, vec_);
  }
  Status launch(const LaunchContext &ctx) override {
    if (rows_ == 0)
      return Status::ok();
    void *args[] = {&x_, &y_, &p_, &mean_, &invStd_, &rows_, &d_, &eps_, &vec_};
    return launchKernel(ctx, fn_, dims_, args, name_.c_str());
  }
  size_t deviceBytes() const override {
    return scaleIdx_.size() + biasIdx_.size();
  }

private:
  DeviceBuffer scaleIdx_, biasIdx_;
  LnParams p_{};
  void *x_ = nullptr, *y_ = nullptr, *mean_ = nullptr, *invStd_ = nullptr;
  int64_t rows_ = 0, d_ = 0;
  double eps_ = 0;
  int vec_ = 0;
  LaunchDims dims_;
  std::string name_;
  CUfunction fn_ = nullptr;
};

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

// (grad, input, scale, mean, inv_std_dev) -> (input_grad, scale_grad,
// bias_grad): a row kernel for input_grad, then f64 partial sums of
// g * xhat and g over `slices` fixed slices of rows (workspace), then one
// thread per scale element adds them up in order.
class LayerNormGradKernel : public PreparedKernel {
public:
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    AMPC_RETURN_IF_ERROR(checkInputs(call, 1));
    const TensorView &x = call.inputs[1], &scale = call.inputs[2];
    int64_t axis = call.attrs->getInt("axis");
    Shape normalized(x.shape.begin() + axis, x.shape.end());
    rows_ = ops::product(x.shape, 0, axis);
    d_ = numElements(normalized);
    targets_ = scale.numElements();
    AMPC_RETURN_IF_ERROR(indexTable(ctx.device, scale, normalized,
                                    "layer_norm_grad scale index", scaleIdx_));
    p_ = LnParams{};
    p_.scale = scale.data;
    p_.scaleType = code(scale.dtype);
    p_.scaleIdx = tablePtr(scaleIdx_);
    st_.mean = call.inputs[3].data;
    st_.meanType = code(call.inputs[3].dtype);
    st_.invStd = call.inputs[4].data;
    st_.invStdType = code(call.inputs[4].dtype);
    g_ = call.inputs[0].data;
    x_ = x.data;
    dx_ = call.outputs[0].data;
    scaleGrad_ = call.outputs[1].data;
    biasGrad_ = call.outputs[2].data;
    scaleGradType_ = code(call.outputs[1].dtype);
    biasGradType_ = code(call.outputs[2].dtype);
    if (targets_ != d_) {
      // Which normalized elements each scale element was broadcast to, in
      // ascending order (the CPU adds them in that order).
      std::vector<int64_t> src = ops::broadcastIndex(scale.shape, normalized);
      std::vector<int32_t> off(size_t(targets_) + 1, 0), ks(src.size());
      for (int64_t s : src)
        ++off[size_t(s) + 1];
      for (size_t t = 0; t < size_t(targets_); ++t)
        off[t + 1] += off[t];
      std::vector<int32_t> next(off.begin(), off.end() - 1);
      for (size_t k = 0; k < src.size(); ++k)
        ks[size_t(next[size_t(src[k])]++)] = int32_t(k);
      off.insert(off.end(), ks.begin(), ks.end());
      AMPC_RETURN_IF_ERROR(csr_.upload(ctx.device, off.data(),
                                       off.size() * sizeof(int32_t),
                                       "layer_norm_grad scale gradient map"));
      csrOff_ = tablePtr(csr_);
      csrK_ = csrOff_ + targets_ + 1;
    }
    if (rows_ > 0 && d_ > 0) {
      AMPC_RETURN_IF_ERROR(
          rows::choose(ctx.device, CudaKernel::LayerNormGradWarp,
                       CudaKernel::LayerNormGradBlock, x.dtype, rows_, d_,
                       {g_, x_, dx_}, rowFn_, rowName_, rowDims_, vec_));
      // Enough (column block, slice) blocks to fill the GPU: about four
      // per SM, at most 512 slices.
      const int64_t colBlocks = (d_ + 255) / 256;
      const int64_t want =
          (4 * int64_t(std::max(1, ctx.device.multiprocessors())) + colBlocks -
           1) /
          colBlocks;
      slices_ = std::max<int64_t>(1, std::min({rows_, want, int64_t(512)}));
      AMPC_RETURN_IF_ERROR(
          kernelFunction(ctx.device, CudaKernel::LayerNormGradPartial,
                         {name(x.dtype)}, partialFn_, &partialName_));
      partialDims_.block[0] = 256;
      partialDims_.grid[0] = unsigned(colBlocks);
      partialDims_.grid[1] = unsigned(slices_);
      ctx.requestWorkspace(size_t(2 * slices_ * d_) * sizeof(double));
    }
    AMPC_RETURN_IF_ERROR(kernelFunction(
        ctx.device, CudaKernel::LayerNormGradFinish, {}, finishFn_));
    finishDims_ = gridFor(ctx.device, targets_);
    return Status::ok();
  }
  Status launch(const LaunchContext &ctx) override {
    if (targets_ == 0)
      return Status::ok();
    double *partial = reinterpret_cast<double *>(ctx.workspace);
    if (slices_ > 0) {
      void *rowArgs[] = {&g_, &x_, &dx_, &p_, &st_, &rows_, &d_, &vec_};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, rowFn_, rowDims_, rowArgs, rowName_.c_str()));
      void *partArgs[] = {&g_, &x_, &st_, &rows_, &d_, &slices_, &partial};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, partialFn_, partialDims_, partArgs,
                                        partialName_.c_str()));
    }
    void *finArgs[] = {&partial,   &slices_,      &d_,         &csrOff_,
                       &csrK_,     &targets_,     &scaleGrad_, &scaleGradType_,
                       &biasGrad_, &biasGradType_};
    return launchKernel(ctx, finishFn_, finishDims_, finArgs,
                        "ampc_layer_norm_grad_finish");
  }
  size_t deviceBytes() const override { return scaleIdx_.size() + csr_.size(); }

private:
  DeviceBuffer scaleIdx_, csr_;
  LnParams p_{};
  LnStats st_{};
  const int32_t *csrOff_ = nullptr, *csrK_ = nullptr;
  void *g_ = nullptr, *x_ = nullptr, *dx_ = nullptr;
  void *scaleGrad_ = nullptr, *biasGrad_ = nullptr;
  int scaleGradType_ = 0, biasGradType_ = 0, vec_ = 0;
  int64_t rows_ = 0, d_ = 0, targets_ = 0, slices_ = 0;
  std::string rowName_, partialName_;
  LaunchDims rowDims_, partialDims_, finishDims_;
  CUfunction rowFn_ = nullptr, partialFn_ = nullptr, finishFn_ = nullptr;
};

template <typename K>
Status prepareWith(const std::vector<const ops::OpCall *> &calls,
                   PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  auto k = std::make_unique<K>();
  AMPC_RETURN_IF_ERROR(k->prepare(*calls[0], ctx));
  out = std::move(k);
  return Status::ok();
}

} // namespace

void addNormalizationKernels(std::vector<KernelEntry> &out) {
  out.push_back({"layer_norm", prepareWith<LayerNormKernel>});
  out.push_back({"layer_norm_grad", prepareWith<LayerNormGradKernel>});
}

} // namespace ampc::rt::cuda
