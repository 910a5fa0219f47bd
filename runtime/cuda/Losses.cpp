//===- Losses.cpp - softmax, the losses and their gradients on the GPU ----===//
//
// The CPU kernels' semantics (runtime/cpu/Reduction.cpp, Losses.cpp,
// LossGrad.cpp, LossRules.h): softmax over attribute 'axis' viewed as
// [outer, len, inner]; softmax_cross_entropy and nll_loss over [N, C, D]
// with i32/i64 labels, optional class weights, 'reduction' none/sum/mean
// and 'ignore_index'. One difference: the CPU refuses a label outside
// [0, C) that is not ignore_index at run time, and a kernel cannot fail
// mid-graph, so here such a label gives NaN (its loss, the reduced loss,
// and the gradients it reaches; see kernels/Losses.cuh). f64 is refused
// at prepare time.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/RowLaunch.h"
#include "runtime/cuda/kernels/LossArgs.h"
#include "runtime/ops/LossRules.h"

#include <optional>

namespace ampc::rt::cuda {
namespace {

using ampc_cuda::LossArgs;

enum Reduction : int { kNone = 0, kSum = 1, kMean = 2 };

int code(DType t) { return static_cast<int>(t); }

struct Launch {
  CUfunction fn = nullptr;
  LaunchDims dims;
  std::string name;
};

Status lookup(CudaDevice &device, CudaKernel k, KernelVariant variant,
              Launch &l) {
  return kernelFunction(device, k, variant, l.fn, &l.name);
}

// Viewed as [outer, len, inner] around `axis`.
void splitAt(const Shape &s, int64_t axis, int64_t &outer, int64_t &len,
             int64_t &inner) {
  outer = ops::product(s, 0, axis);
  len = s[axis];
  inner = ops::product(s, axis + 1, s.size());
}

// Softmax over [outer, len, inner]: a row kernel when inner == 1, else a
// column kernel. With `loss`, softmax_cross_entropy's per-sample losses.
struct SoftmaxPlan {
  Launch l;
  int64_t outer = 0, len = 0, inner = 0;
  int vec = 0;
  bool rows = true;
};

// softmax's kernels, or with `grad` softmax_grad's.
Status planSoftmax(CudaDevice &device, bool grad, DType t, const Shape &shape,
                   int64_t axis, std::initializer_list<const void *> ptrs,
                   SoftmaxPlan &p) {
  splitAt(shape, axis, p.outer, p.len, p.inner);
  p.rows = p.inner == 1;
  if (p.rows)
    return rows::choose(
        device, grad ? CudaKernel::SoftmaxGradWarp : CudaKernel::SoftmaxWarp,
        grad ? CudaKernel::SoftmaxGradBlock : CudaKernel::SoftmaxBlock, t,
        p.outer, p.len, ptrs, p.l.fn, p.l.name, p.l.dims, p.vec);
  p.l.dims = gridFor(device, p.outer * p.inner);
  return lookup(device,
                grad ? CudaKernel::SoftmaxGradCol : CudaKernel::SoftmaxCol,
                {name(t)}, p.l);
}

LossArgs lossArgs(const ops::OpCall &call, const ops::LossAttrs &la,
                  size_t labelsAt, const TensorView &x) {
  LossArgs a{};
  const TensorView &labels = call.inputs[labelsAt];
  a.labels = labels.data;
  a.labelType = code(labels.dtype);
  if (ops::hasInput(call, labelsAt + 1)) {
    a.weights = call.inputs[labelsAt + 1].data;
    a.weightType = code(call.inputs[labelsAt + 1].dtype);
  }
  a.samples = labels.numElements();
  a.classes = x.shape[1];
  a.hasIgnore = la.ignoreIndex.has_value();
  a.ignoreIndex = la.ignoreIndex.value_or(0);
  return a;
}

int reductionOf(const ops::LossAttrs &la) {
  return la.reduction == "none" ? kNone : la.reduction == "sum" ? kSum : kMean;
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax / softmax_grad / log_softmax_grad
//===----------------------------------------------------------------------===//

class SoftmaxKernel : public PreparedKernel {
public:
  SoftmaxKernel(bool grad, bool log) : grad_(grad), log_(log ? 1 : 0) {}
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    const TensorView &x = call.inputs[0];
    AMPC_RETURN_IF_ERROR(rows::checkDType(call.op, "input", x.dtype));
    in0_ = x.data;
    in1_ = grad_ ? call.inputs[1].data : nullptr;
    out_ = call.outputs[0].data;
    empty_ = x.numElements() == 0;
    if (empty_)
      return Status::ok();
    return planSoftmax(ctx.device, grad_, x.dtype, x.shape,
                       call.attrs->getInt("axis"),
                       {in0_, in1_ ? in1_ : out_, out_}, p_);
  }
  Status launch(const LaunchContext &ctx) override {
    if (empty_)
      return Status::ok();
    int hasLoss = 0;
    LossArgs la{};
    if (grad_) {
      if (p_.rows) {
        void *args[] = {&in0_,   &in1_, &out_,  &p_.outer,
                        &p_.len, &log_, &p_.vec};
        return launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str());
      }
      void *args[] = {&in0_,   &in1_,     &out_, &p_.outer,
                      &p_.len, &p_.inner, &log_};
      return launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str());
    }
    if (p_.rows) {
      void *args[] = {&in0_, &out_,   &p_.outer, &p_.len,
                      &log_, &p_.vec, &hasLoss,  &la};
      return launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str());
    }
    void *args[] = {&in0_,     &out_, &p_.outer, &p_.len,
                    &p_.inner, &log_, &hasLoss,  &la};
    return launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str());
  }

private:
  bool grad_;
  int log_;
  bool empty_ = false;
  void *in0_ = nullptr, *in1_ = nullptr, *out_ = nullptr;
  SoftmaxPlan p_;
};

//===----------------------------------------------------------------------===//
// softmax_cross_entropy / nll_loss
//===----------------------------------------------------------------------===//

// Per-sample losses (into the loss, or into the workspace and then reduced
// by one block).
class LossKernel : public PreparedKernel {
public:
  explicit LossKernel(bool softmax) : softmax_(softmax) {}
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    ops::LossAttrs attrs;
    AMPC_RETURN_IF_ERROR(ops::readLossAttrs(*call.attrs, attrs));
    const TensorView &x = call.inputs[0], &loss = call.outputs[0];
    AMPC_RETURN_IF_ERROR(
        rows::checkDType(call.op, softmax_ ? "scores" : "input", x.dtype));
    la_ = lossArgs(call, attrs, 1, x);
    reduction_ = reductionOf(attrs);
    if (reduction_ == kNone) {
      la_.loss = loss.data;
      la_.lossType = code(loss.dtype);
    } else {
      ctx.requestWorkspace(size_t(2 * la_.samples) * sizeof(double));
      AMPC_RETURN_IF_ERROR(
          lookup(ctx.device, CudaKernel::LossReduce, {}, reduce_));
      reduce_.dims.block[0] = 1024;
    }
    out_ = loss.data;
    outType_ = code(loss.dtype);
    x_ = x.data;
    xType_ = code(x.dtype);
    d_ = ops::product(x.shape, 2, x.shape.size());
    if (la_.samples == 0)
      return Status::ok();
    if (softmax_) {
      lp_ = call.outputs[1].data;
      return planSoftmax(ctx.device, false, x.dtype, x.shape, 1, {x_, lp_}, p_);
    }
    AMPC_RETURN_IF_ERROR(lookup(ctx.device, CudaKernel::NllLoss, {}, p_.l));
    p_.l.dims = gridFor(ctx.device, la_.samples);
    return Status::ok();
  }
  // The log-probabilities go to the workspace at `offset` instead of the
  // call's output (which prepare then read for its alignment only).
  void logProbInWorkspace(size_t offset) { lpOffset_ = offset; }
  Status launch(const LaunchContext &ctx) override {
    LossArgs la = la_;
    if (reduction_ != kNone)
      la.perSample = reinterpret_cast<double *>(ctx.workspace);
    if (lpOffset_)
      lp_ = reinterpret_cast<void *>(ctx.workspace + *lpOffset_);
    if (la.samples > 0) {
      int log = 1, hasLoss = 1;
      if (!softmax_) {
        void *args[] = {&x_, &xType_, &d_, &la};
        AMPC_RETURN_IF_ERROR(
            launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str()));
      } else if (p_.rows) {
        void *args[] = {&x_,  &lp_,    &p_.outer, &p_.len,
                        &log, &p_.vec, &hasLoss,  &la};
        AMPC_RETURN_IF_ERROR(
            launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str()));
      } else {
        void *args[] = {&x_,       &lp_, &p_.outer, &p_.len,
                        &p_.inner, &log, &hasLoss,  &la};
        AMPC_RETURN_IF_ERROR(
            launchKernel(ctx, p_.l.fn, p_.l.dims, args, p_.l.name.c_str()));
      }
    }
    if (reduction_ == kNone)
      return Status::ok();
    int mean = reduction_ == kMean;
    void *args[] = {&la, &out_, &outType_, &mean};
    return launchKernel(ctx, reduce_.fn, reduce_.dims, args,
                        reduce_.name.c_str());
  }

private:
  bool softmax_;
  int reduction_ = kMean;
  LossArgs la_{};
  void *x_ = nullptr, *lp_ = nullptr, *out_ = nullptr;
  int xType_ = 0, outType_ = 0;
  int64_t d_ = 1;
  std::optional<size_t> lpOffset_;
  SoftmaxPlan p_;
  Launch reduce_;
};

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_grad / nll_loss_grad
//===----------------------------------------------------------------------===//

// Elementwise over [N, C, D] after, for "mean", one block sums the weights
// of the labels not ignored into the workspace.
class LossGradKernel : public PreparedKernel {
public:
  explicit LossGradKernel(bool softmax) : softmax_(softmax) {}
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    ops::LossAttrs attrs;
    AMPC_RETURN_IF_ERROR(ops::readLossAttrs(*call.attrs, attrs));
    const TensorView &out = call.outputs[0];
    AMPC_RETURN_IF_ERROR(rows::checkDType(call.op, "output", out.dtype));
    const size_t labelsAt = softmax_ ? 2 : 1;
    la_ = lossArgs(call, attrs, labelsAt, out);
    reduction_ = reductionOf(attrs);
    grad_ = call.inputs[0].data;
    lp_ = softmax_ ? call.inputs[1].data : nullptr;
    out_ = out.data;
    d_ = ops::product(out.shape, 2, out.shape.size());
    count_ = out.numElements();
    if (count_ == 0)
      return Status::ok();
    if (reduction_ == kMean) {
      ctx.requestWorkspace(sizeof(double));
      AMPC_RETURN_IF_ERROR(
          lookup(ctx.device, CudaKernel::LossWeightSum, {}, sum_));
      sum_.dims.block[0] = 1024;
    }
    AMPC_RETURN_IF_ERROR(
        lookup(ctx.device, softmax_ ? CudaKernel::SceGrad : CudaKernel::NllGrad,
               {name(out.dtype)}, main_));
    main_.dims = gridFor(ctx.device, count_);
    return Status::ok();
  }
  // The f32 log-probabilities are in the workspace at `offset`, and the
  // gradient is written in its own type (sce_grad_from_f32).
  void writeTo(void *out) { out_ = out; }
  Status logProbInWorkspace(CudaDevice &device, DType out, size_t offset) {
    lpOffset_ = offset;
    return lookup(device, CudaKernel::SceGradFromF32, {name(out)}, main_);
  }
  Status launch(const LaunchContext &ctx) override {
    if (count_ == 0)
      return Status::ok();
    if (lpOffset_)
      lp_ = reinterpret_cast<void *>(ctx.workspace + *lpOffset_);
    LossArgs la = la_;
    double *denom = nullptr;
    if (reduction_ == kMean) {
      denom = reinterpret_cast<double *>(ctx.workspace);
      void *args[] = {&la, &denom};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, sum_.fn, sum_.dims, args, sum_.name.c_str()));
    }
    if (softmax_) {
      void *args[] = {&grad_, &lp_, &out_, &la, &d_, &reduction_, &denom};
      return launchKernel(ctx, main_.fn, main_.dims, args, main_.name.c_str());
    }
    void *args[] = {&grad_, &out_, &la, &d_, &reduction_, &denom};
    return launchKernel(ctx, main_.fn, main_.dims, args, main_.name.c_str());
  }

private:
  bool softmax_;
  int reduction_ = kMean;
  LossArgs la_{};
  void *grad_ = nullptr, *lp_ = nullptr, *out_ = nullptr;
  int64_t d_ = 1, count_ = 0;
  std::optional<size_t> lpOffset_;
  Launch sum_, main_;
};

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_with_grad
//===----------------------------------------------------------------------===//

// The two kernels above, one after the other on the stream: the loss writes
// the log-probabilities where the gradient then reads them. With the
// scores' type the gradient is written over them in its own output (an
// element read and written by one thread); an f16/bf16 gradient of f32
// scores reads them from the workspace, past the two kernels' own scratch.
class LossWithGradKernel : public PreparedKernel {
public:
  Status prepare(const ops::OpCall &call, PrepareContext &ctx) {
    const TensorView &grad = call.inputs[0], &scores = call.inputs[1],
                     &dscores = call.outputs[1];
    const bool weights = ops::hasInput(call, 3);
    bool apart = dscores.dtype != scores.dtype;
    if (apart && scores.dtype != DType::F32)
      return Status::error("a " + std::string(name(dscores.dtype)) +
                           " gradient of " + std::string(name(scores.dtype)) +
                           " scores has no CUDA kernel");
    // The log-probabilities: in dscores's bytes, or (for alignment only,
    // launch points at the workspace) the scores'.
    TensorView lp = scores;
    lp.data = apart ? scores.data : dscores.data;
    lossCall_ = call;
    lossCall_.op = "softmax_cross_entropy";
    lossCall_.inputs = {scores, call.inputs[2]};
    lossCall_.present = {true, true};
    if (weights) {
      lossCall_.inputs.push_back(call.inputs[3]);
      lossCall_.present.push_back(true);
    }
    lossCall_.outputs = {call.outputs[0], lp};
    gradCall_ = call;
    gradCall_.op = "softmax_cross_entropy_grad";
    gradCall_.inputs = {grad, lp, call.inputs[2]};
    gradCall_.present = {true, true, true};
    if (weights) {
      gradCall_.inputs.push_back(call.inputs[3]);
      gradCall_.present.push_back(true);
    }
    TensorView out = lp;
    out.data = dscores.data;
    gradCall_.outputs = {apart ? lp : out};
    AMPC_RETURN_IF_ERROR(loss_.prepare(lossCall_, ctx));
    AMPC_RETURN_IF_ERROR(grad_.prepare(gradCall_, ctx));
    if (apart) {
      // Past the loss's per-sample scratch (2 doubles a sample), which also
      // holds the gradient's denominator.
      size_t scratch =
          2 * size_t(call.inputs[2].numElements()) * sizeof(double);
      size_t offset =
          (std::max<size_t>(scratch, sizeof(double)) + 255) / 256 * 256;
      ctx.requestWorkspace(offset +
                           size_t(scores.numElements()) * sizeof(float));
      loss_.logProbInWorkspace(offset);
      AMPC_RETURN_IF_ERROR(
          grad_.logProbInWorkspace(ctx.device, dscores.dtype, offset));
      grad_.writeTo(dscores.data);
    }
    return Status::ok();
  }
  Status launch(const LaunchContext &ctx) override {
    AMPC_RETURN_IF_ERROR(loss_.launch(ctx));
    return grad_.launch(ctx);
  }

private:
  ops::OpCall lossCall_, gradCall_;
  LossKernel loss_{true};
  LossGradKernel grad_{true};
};

// A K built from `Args` (its variant) and prepared from the call.
template <typename K, bool... Args>
Status prepareWith(const std::vector<const ops::OpCall *> &calls,
                   PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  auto k = std::make_unique<K>(Args...);
  AMPC_RETURN_IF_ERROR(k->prepare(*calls[0], ctx));
  out = std::move(k);
  return Status::ok();
}

} // namespace

void addLossKernels(std::vector<KernelEntry> &out) {
  // SoftmaxKernel(grad, log), LossKernel(softmax), LossGradKernel(softmax).
  out.push_back({"softmax", prepareWith<SoftmaxKernel, false, false>});
  out.push_back({"log_softmax", prepareWith<SoftmaxKernel, false, true>});
  out.push_back({"softmax_grad", prepareWith<SoftmaxKernel, true, false>});
  out.push_back({"log_softmax_grad", prepareWith<SoftmaxKernel, true, true>});
  out.push_back({"softmax_cross_entropy", prepareWith<LossKernel, true>});
  out.push_back({"nll_loss", prepareWith<LossKernel, false>});
  out.push_back(
      {"softmax_cross_entropy_grad", prepareWith<LossGradKernel, true>});
  out.push_back({"nll_loss_grad", prepareWith<LossGradKernel, false>});
  out.push_back(
      {"softmax_cross_entropy_with_grad", prepareWith<LossWithGradKernel>});
}

} // namespace ampc::rt::cuda
