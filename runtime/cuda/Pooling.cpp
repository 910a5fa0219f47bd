//===- Pooling.cpp - max/avg pooling, their gradients, global average -----===//
//
// Host side of kernels/Pooling.cu. The geometry comes from ops::planPool
// (runtime/ops/WindowGeometry.h), so output sizes, ceil mode and the
// average divisor are decided by the same code on both backends; the
// kernels repeat its per-window rules on the device. cuDNN pooling is not
// used: see kernels/Pooling.cu for the semantics it lacks.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudnnFamily.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/kernels/PoolArgs.h"
#include "runtime/ops/WindowGeometry.h"

namespace ampc::rt::cuda {
namespace {

ampc_cuda::PoolArgs toArgs(const ops::PoolPlan &p) {
  return ampc_cuda::PoolArgs{p.n,
                             p.c,
                             p.h,
                             p.w,
                             p.kh,
                             p.kw,
                             p.sh,
                             p.sw,
                             p.dh,
                             p.dw,
                             p.pt,
                             p.pl,
                             p.pb,
                             p.pr,
                             p.oh,
                             p.ow,
                             p.countIncludePad ? 1 : 0};
}

// max_pool2d / avg_pool2d (input -> output), max_pool2d_grad (grad, input
// -> input's gradient), avg_pool2d_grad (grad -> input's gradient): one
// launch over the output's elements.
class PoolKernel final : public PreparedKernel {
public:
  enum Kind { MaxFwd, AvgFwd, MaxGrad, AvgGrad };

  static Status prepare(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out, Kind kind) {
    const ops::OpCall &call = *calls.front();
    auto k = std::make_unique<PoolKernel>();
    k->kind_ = kind;
    k->out_ = call.outputs[0];
    k->in0_ = call.inputs[0];
    bool isMax = kind == MaxFwd || kind == MaxGrad;
    // The pooled input's shape: the forward input, max_pool2d_grad's
    // input, or avg_pool2d_grad's output.
    const Shape &pooled = kind == MaxGrad   ? call.inputs[1].shape
                          : kind == AvgGrad ? call.outputs[0].shape
                                            : call.inputs[0].shape;
    ops::PoolPlan plan;
    AMPC_RETURN_IF_ERROR((kind == AvgGrad
                              ? ops::planAvgPoolGrad(*call.attrs, pooled, plan)
                              : ops::planPool(*call.attrs, pooled, isMax, plan))
                             .withContext(call.op));
    k->args_ = toArgs(plan);
    if (kind == MaxGrad)
      k->in1_ = call.inputs[1];
    static const CudaKernel kernels[] = {
        CudaKernel::MaxPool2d, CudaKernel::AvgPool2d, CudaKernel::MaxPool2dGrad,
        CudaKernel::AvgPool2dGrad};
    AMPC_RETURN_IF_ERROR(typedFunction(ctx.device, call.op, kernels[kind],
                                       call.inputs[0].dtype, k->fn_));
    k->dims_ = gridFor(ctx.device, k->out_.numElements());
    out = std::move(k);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override {
    if (out_.numElements() == 0)
      return Status::ok();
    CUdeviceptr a = devicePtr(in0_), b = devicePtr(in1_), y = devicePtr(out_);
    static const char *names[] = {"max_pool2d", "avg_pool2d", "max_pool2d_grad",
                                  "avg_pool2d_grad"};
    if (kind_ == MaxGrad) {
      void *params[] = {&args_, &a, &b, &y};
      return launchKernel(ctx, fn_, dims_, params, names[kind_]);
    }
    void *params[] = {&args_, &a, &y};
    return launchKernel(ctx, fn_, dims_, params, names[kind_]);
  }

private:
  Kind kind_ = MaxFwd;
  ampc_cuda::PoolArgs args_{};
  TensorView in0_, in1_, out_;
  CUfunction fn_ = nullptr;
  LaunchDims dims_;
};

template <PoolKernel::Kind K>
Status preparePool(const std::vector<const ops::OpCall *> &calls,
                   PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  return PoolKernel::prepare(calls, ctx, out, K);
}

// global_avg_pool: one warp per (image, channel) plane.
class GlobalAvgPoolKernel final : public PreparedKernel {
public:
  static Status prepare(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out) {
    const ops::OpCall &call = *calls.front();
    auto k = std::make_unique<GlobalAvgPoolKernel>();
    k->x_ = call.inputs[0];
    k->y_ = call.outputs[0];
    const Shape &s = k->x_.shape;
    k->planes_ = s[0] * s[1];
    k->size_ = ops::product(s, 2, s.size());
    AMPC_RETURN_IF_ERROR(typedFunction(
        ctx.device, call.op, CudaKernel::GlobalAvgPool, k->x_.dtype, k->fn_));
    // 8 warps a block, one plane each per pass.
    k->dims_ = gridFor(ctx.device, k->planes_ * 32, 256);
    out = std::move(k);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override {
    if (planes_ == 0)
      return Status::ok();
    CUdeviceptr x = devicePtr(x_), y = devicePtr(y_);
    void *params[] = {&x, &y, &planes_, &size_};
    return launchKernel(ctx, fn_, dims_, params, "global_avg_pool");
  }

private:
  TensorView x_, y_;
  int64_t planes_ = 0, size_ = 0;
  CUfunction fn_ = nullptr;
  LaunchDims dims_;
};

} // namespace

void addPoolingKernels(std::vector<KernelEntry> &out) {
  out.push_back({"max_pool2d", preparePool<PoolKernel::MaxFwd>});
  out.push_back({"avg_pool2d", preparePool<PoolKernel::AvgFwd>});
  out.push_back({"max_pool2d_grad", preparePool<PoolKernel::MaxGrad>});
  out.push_back({"avg_pool2d_grad", preparePool<PoolKernel::AvgGrad>});
  out.push_back({"global_avg_pool", GlobalAvgPoolKernel::prepare});
}

} // namespace ampc::rt::cuda
