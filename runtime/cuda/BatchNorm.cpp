//===- BatchNorm.cpp - batch_norm_{training,inference,grad} on CUDA -------===//
//
// Host side of kernels/BatchNorm.cu: our own kernels, not cuDNN's, because
// the CPU semantics (Normalization.cpp, NormalizationGrad.cpp) update the
// running variance with the biased batch variance, keep parameters and
// statistics in the dtype of the scale (f16 or f64 too), and write the new
// running statistics to outputs of their own. Per-channel sums go through
// the workspace: partial sums per (channel, slice of the batch), then a
// per-channel pass, so nothing is allocated at launch and no atomics are
// used.
//
// Synchronised batch norm (sync_ranks = N, graph-data-parallel's
// sync-batch-norm) takes the statistics over every rank's batch, as the CPU
// kernels do: each per-channel sum of this rank (the sum, then the squared
// deviations from the ranks' mean; the gradient's two sums) is summed over
// the ranks in f64 by NCCL (NcclCommunicator::startSum, on the exchange
// stream after the gradient exchanges queued before it) before the
// per-channel pass divides it by the N ranks' count.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudnnFamily.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/Ranks.h"
#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <initializer_list>

namespace ampc::rt::cuda {
namespace {

// kernels/BatchNorm.cu's partial-sum modes.
enum PartialMode : int { kSum = 0, kSqDev = 1, kGradSums = 2 };

constexpr unsigned kReduceThreads = 256;
// A slice (one block of the partial-sum pass) covers at least this many
// values, so short channels are not split into near-empty blocks.
constexpr int64_t kMinSliceValues = 4096;
constexpr int64_t kMaxSlices = 1024;

// [N, C, inner...] as the kernels see it.
struct Layout {
  int64_t n = 0, c = 0, inner = 1, total = 0;
  double count = 0; // values per channel
  int64_t slices = 1;
};

Layout layoutOf(const TensorView &x, const CudaDevice &device) {
  Layout l;
  l.n = x.shape[0];
  l.c = x.shape[1];
  l.inner = ops::product(x.shape, 2, x.shape.size());
  l.total = x.numElements();
  int64_t m = l.n * l.inner;
  l.count = static_cast<double>(m);
  // Enough blocks for every SM a few times over, none shorter than
  // kMinSliceValues unless the channel is.
  int64_t target = int64_t(std::max(1, device.multiprocessors())) * 4;
  int64_t slices = l.c > 0 ? (target + l.c - 1) / l.c : 1;
  slices = std::min(slices, std::max<int64_t>(1, m / kMinSliceValues));
  l.slices = std::clamp<int64_t>(slices, 1, kMaxSlices);
  return l;
}

LaunchDims reduceDims(const Layout &l) {
  LaunchDims d;
  d.block[0] = kReduceThreads;
  d.grid[0] = static_cast<unsigned>(l.c * l.slices);
  return d;
}

Status checkGridSize(const Layout &l, const std::string &op) {
  if (l.c * l.slices > int64_t(0x7fffffff))
    return Status::error(op + ": " + std::to_string(l.c) +
                         " channels are more than one CUDA grid holds");
  return Status::ok();
}

Status checkWorkspace(const LaunchContext &ctx, size_t need, const char *what) {
  if (ctx.workspaceBytes < need)
    return Status::error(std::string(what) + ": the workspace has " +
                         std::to_string(ctx.workspaceBytes) +
                         " bytes, the kernel asked for " +
                         std::to_string(need));
  return Status::ok();
}

// `k`'s <dtype>_<c32|c64> variant: the elementwise passes compute in f64
// when the data or the parameters are f64.
Status computeFunction(CudaDevice &device, const std::string &op, CudaKernel k,
                       DType x, bool f64, CUfunction &out) {
  return typedFunction(device, op, k, x, out, f64 ? "c64" : "c32");
}

/// A synchronised kernel's exchanges: the per-channel sums of this rank
/// (`ampc_bn_mean` with count 1 adds a partial-sum pass's slices), summed
/// over the ranks before the kernel reads them.
class RanksSums {
public:
  // `ranks` is the call's sync_ranks (1: not synchronised, nothing to do).
  Status prepare(PrepareContext &ctx, int64_t ranks, CUfunction addSlices) {
    ranks_ = ranks;
    if (ranks_ <= 1)
      return Status::ok();
    nccl_ = ctx.nccl;
    addSlices_ = addSlices;
    return nccl_->createBucket(bucket_);
  }
  bool synced() const { return ranks_ > 1; }
  int64_t ranks() const { return ranks_; }

  // The channels' sums of `partials` (each `c` channels of `slices`
  // values, one after another) into `own`, one array after another; then
  // their sums over the ranks into `all` (which may be `own`), which the
  // work queued after this on the compute stream sees.
  Status exchange(const LaunchContext &ctx,
                  std::initializer_list<CUdeviceptr> partials, int64_t c,
                  int64_t slices, CUdeviceptr own, CUdeviceptr all,
                  const LaunchDims &perChannel, const char *what) {
    double one = 1;
    CUdeviceptr to = own;
    for (CUdeviceptr partial : partials) {
      void *args[] = {&partial, &c, &slices, &one, &to};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, addSlices_, perChannel, args, what));
      to += sizeof(double) * c;
    }
    size_t count = static_cast<size_t>(c) * partials.size();
    AMPC_RETURN_IF_ERROR(
        nccl_->startSum(*bucket_, own, all, count, DType::F64, ctx.stream)
            .withContext(what));
    return nccl_->finish(*bucket_, ctx.stream).withContext(what);
  }

private:
  int64_t ranks_ = 1;
  NcclCommunicator *nccl_ = nullptr;
  std::unique_ptr<NcclCommunicator::Bucket> bucket_;
  CUfunction addSlices_ = nullptr;
};

//===----------------------------------------------------------------------===//
// batch_norm_training / batch_norm_inference
//===----------------------------------------------------------------------===//

class BatchNormKernel final : public PreparedKernel {
public:
  static Status prepare(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out, bool training) {
    const ops::OpCall &call = *calls.front();
    auto k = std::make_unique<BatchNormKernel>();
    k->training_ = training;
    k->in_ = call.inputs;
    k->out_ = call.outputs;
    AMPC_RETURN_IF_ERROR(
        ops::getFloat(*call.attrs, "epsilon", k->eps_).withContext(call.op));
    int64_t ranks = 1;
    if (training) {
      AMPC_RETURN_IF_ERROR(ops::getFloat(*call.attrs, "momentum", k->momentum_)
                               .withContext(call.op));
      AMPC_RETURN_IF_ERROR(ops::syncRanksOf(call, sessionRanks(ctx), ranks));
    }
    const TensorView &x = call.inputs[0];
    k->l_ = layoutOf(x, ctx.device);
    AMPC_RETURN_IF_ERROR(checkGridSize(k->l_, call.op));
    k->pd_ = static_cast<int>(call.inputs[1].dtype);
    bool f64 = x.dtype == DType::F64 || call.inputs[1].dtype == DType::F64;
    CudaDevice &dev = ctx.device;
    AMPC_RETURN_IF_ERROR(computeFunction(dev, call.op, CudaKernel::BnNormalize,
                                         x.dtype, f64, k->normalize_));
    int64_t c = k->l_.c;
    if (training) {
      AMPC_RETURN_IF_ERROR(typedFunction(dev, call.op, CudaKernel::BnPartial,
                                         x.dtype, k->partial_));
      AMPC_RETURN_IF_ERROR(kernelFunction(dev, CudaKernel::BnMean, {}, k->mean_)
                               .withContext(call.op));
      AMPC_RETURN_IF_ERROR(
          kernelFunction(dev, CudaKernel::BnTrainFinalize, {}, k->finalize_)
              .withContext(call.op));
      k->partialOff_ = 0;
      k->meanOff_ = alignUp(sizeof(double) * c * k->l_.slices);
      k->sumsOff_ = k->meanOff_ + alignUp(sizeof(double) * c);
      k->coefOff_ = k->sumsOff_;
      if (ranks > 1)
        k->coefOff_ += alignUp(sizeof(double) * c);
    } else {
      AMPC_RETURN_IF_ERROR(
          kernelFunction(dev, CudaKernel::BnInferCoef, {}, k->finalize_)
              .withContext(call.op));
      k->coefOff_ = 0;
    }
    k->wsBytes_ = k->coefOff_ + alignUp(sizeof(double) * 3 * c);
    ctx.requestWorkspace(k->wsBytes_);
    k->perChannel_ = gridFor(dev, c);
    k->elementwise_ = gridFor(dev, k->l_.total);
    AMPC_RETURN_IF_ERROR(k->ranks_.prepare(ctx, ranks, k->mean_));
    out = std::move(k);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override {
    const char *what =
        training_ ? "batch_norm_training" : "batch_norm_inference";
    if (l_.c == 0)
      return Status::ok();
    AMPC_RETURN_IF_ERROR(checkWorkspace(ctx, wsBytes_, what));
    CUdeviceptr coef = ctx.workspace + coefOff_;
    CUdeviceptr x = devicePtr(in_[0]);
    CUdeviceptr scale = devicePtr(in_[1]), bias = devicePtr(in_[2]),
                m = devicePtr(in_[3]), v = devicePtr(in_[4]);
    int64_t c = l_.c;
    if (training_) {
      CUdeviceptr partial = ctx.workspace + partialOff_;
      CUdeviceptr mean = ctx.workspace + meanOff_;
      CUdeviceptr none = 0;
      int f64Code = static_cast<int>(DType::F64);
      int mode = kSum;
      void *sumArgs[] = {&x,        &none,      &l_.n, &l_.c,
                         &l_.inner, &l_.slices, &none, &f64Code,
                         &mode,     &partial,   &none};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, partial_, reduceDims(l_), sumArgs, what));
      // Synchronised, the per-channel passes read the ranks' sums, one
      // slice each, and divide by the ranks' count.
      CUdeviceptr sums = ranks_.synced() ? ctx.workspace + sumsOff_ : partial;
      int64_t slices = ranks_.synced() ? 1 : l_.slices;
      double count = l_.count * static_cast<double>(ranks_.ranks());
      if (ranks_.synced())
        AMPC_RETURN_IF_ERROR(ranks_.exchange(ctx, {partial}, c, l_.slices, sums,
                                             sums, perChannel_, what));
      void *meanArgs[] = {&sums, &c, &slices, &count, &mean};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, mean_, perChannel_, meanArgs, what));
      int sqMode = kSqDev;
      void *sqArgs[] = {&x,        &none,      &l_.n, &l_.c,
                        &l_.inner, &l_.slices, &mean, &f64Code,
                        &sqMode,   &partial,   &none};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, partial_, reduceDims(l_), sqArgs, what));
      if (ranks_.synced())
        AMPC_RETURN_IF_ERROR(ranks_.exchange(ctx, {partial}, c, l_.slices, sums,
                                             sums, perChannel_, what));
      CUdeviceptr nm = devicePtr(out_[1]), nv = devicePtr(out_[2]),
                  bm = devicePtr(out_[3]), bi = devicePtr(out_[4]);
      void *finArgs[] = {&sums, &c,  &slices, &count, &mean, &scale,
                         &bias, &m,  &v,      &pd_,   &eps_, &momentum_,
                         &nm,   &nv, &bm,     &bi,    &coef};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, finalize_, perChannel_, finArgs, what));
    } else {
      void *coefArgs[] = {&scale, &bias, &m, &v, &pd_, &eps_, &c, &coef};
      AMPC_RETURN_IF_ERROR(
          launchKernel(ctx, finalize_, perChannel_, coefArgs, what));
    }
    if (l_.total == 0)
      return Status::ok();
    CUdeviceptr y = devicePtr(out_[0]);
    void *normArgs[] = {&x, &y, &coef, &l_.total, &c, &l_.inner};
    return launchKernel(ctx, normalize_, elementwise_, normArgs, what);
  }

private:
  bool training_ = false;
  std::vector<TensorView> in_, out_;
  double eps_ = 0, momentum_ = 0;
  Layout l_;
  int pd_ = 0;
  size_t partialOff_ = 0, meanOff_ = 0, sumsOff_ = 0, coefOff_ = 0,
         wsBytes_ = 0;
  RanksSums ranks_;
  CUfunction partial_ = nullptr, mean_ = nullptr, finalize_ = nullptr,
             normalize_ = nullptr;
  LaunchDims perChannel_, elementwise_;
};

Status prepareTraining(const std::vector<const ops::OpCall *> &calls,
                       PrepareContext &ctx,
                       std::unique_ptr<PreparedKernel> &out) {
  return BatchNormKernel::prepare(calls, ctx, out, true);
}
Status prepareInference(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out) {
  return BatchNormKernel::prepare(calls, ctx, out, false);
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// (grad, input, scale, batch_mean, batch_inv_std) -> (input_grad,
// scale_grad, bias_grad).
class BatchNormGradKernel final : public PreparedKernel {
public:
  static Status prepare(const std::vector<const ops::OpCall *> &calls,
                        PrepareContext &ctx,
                        std::unique_ptr<PreparedKernel> &out) {
    const ops::OpCall &call = *calls.front();
    int64_t ranks = 1;
    AMPC_RETURN_IF_ERROR(ops::syncRanksOf(call, sessionRanks(ctx), ranks));
    auto k = std::make_unique<BatchNormGradKernel>();
    k->in_ = call.inputs;
    k->out_ = call.outputs;
    const TensorView &x = call.inputs[1];
    k->l_ = layoutOf(x, ctx.device);
    AMPC_RETURN_IF_ERROR(checkGridSize(k->l_, call.op));
    bool f64 = x.dtype == DType::F64 || call.inputs[2].dtype == DType::F64;
    CudaDevice &dev = ctx.device;
    AMPC_RETURN_IF_ERROR(typedFunction(dev, call.op, CudaKernel::BnPartial,
                                       x.dtype, k->partial_));
    AMPC_RETURN_IF_ERROR(
        kernelFunction(dev, CudaKernel::BnGradFinalize, {}, k->finalize_)
            .withContext(call.op));
    AMPC_RETURN_IF_ERROR(computeFunction(dev, call.op, CudaKernel::BnGradApply,
                                         x.dtype, f64, k->apply_));
    CUfunction addSlices = nullptr;
    if (ranks > 1)
      AMPC_RETURN_IF_ERROR(
          kernelFunction(dev, CudaKernel::BnMean, {}, addSlices)
              .withContext(call.op));
    int64_t c = k->l_.c;
    size_t partialBytes = alignUp(sizeof(double) * c * k->l_.slices);
    k->sumGXOff_ = partialBytes;
    k->coefOff_ = 2 * partialBytes;
    k->ownOff_ = k->coefOff_ + alignUp(sizeof(double) * 4 * c);
    // Synchronised: this rank's two sums per channel, then the ranks'.
    k->allOff_ = k->ownOff_ + alignUp(sizeof(double) * 2 * c);
    k->wsBytes_ =
        ranks > 1 ? k->allOff_ + alignUp(sizeof(double) * 2 * c) : k->ownOff_;
    ctx.requestWorkspace(k->wsBytes_);
    k->sd_ = static_cast<int>(call.inputs[2].dtype);
    k->md_ = static_cast<int>(call.inputs[3].dtype);
    k->id_ = static_cast<int>(call.inputs[4].dtype);
    k->perChannel_ = gridFor(dev, c);
    k->elementwise_ = gridFor(dev, k->l_.total);
    AMPC_RETURN_IF_ERROR(k->ranks_.prepare(ctx, ranks, addSlices));
    out = std::move(k);
    return Status::ok();
  }

  Status launch(const LaunchContext &ctx) override {
    const char *what = "batch_norm_grad";
    if (l_.c == 0)
      return Status::ok();
    AMPC_RETURN_IF_ERROR(checkWorkspace(ctx, wsBytes_, what));
    CUdeviceptr g = devicePtr(in_[0]), x = devicePtr(in_[1]),
                scale = devicePtr(in_[2]), mean = devicePtr(in_[3]),
                invStd = devicePtr(in_[4]);
    CUdeviceptr sumG = ctx.workspace, sumGX = ctx.workspace + sumGXOff_,
                coef = ctx.workspace + coefOff_;
    int64_t c = l_.c;
    int mode = kGradSums;
    void *sumArgs[] = {&x,    &g,   &l_.n, &l_.c, &l_.inner, &l_.slices,
                       &mean, &md_, &mode, &sumG, &sumGX};
    AMPC_RETURN_IF_ERROR(
        launchKernel(ctx, partial_, reduceDims(l_), sumArgs, what));
    // Synchronised, the input gradient takes both sums over the ranks
    // (one exchange of 2C values) and their count.
    CUdeviceptr ranksSums = 0;
    if (ranks_.synced()) {
      ranksSums = ctx.workspace + allOff_;
      AMPC_RETURN_IF_ERROR(ranks_.exchange(ctx, {sumG, sumGX}, c, l_.slices,
                                           ctx.workspace + ownOff_, ranksSums,
                                           perChannel_, what));
    }
    double count = l_.count * static_cast<double>(ranks_.ranks());
    CUdeviceptr sg = devicePtr(out_[1]), bg = devicePtr(out_[2]);
    void *finArgs[] = {&sumG,   &sumGX, &c,   &l_.slices, &ranksSums,
                       &count,  &scale, &sd_, &mean,      &md_,
                       &invStd, &id_,   &sg,  &bg,        &coef};
    AMPC_RETURN_IF_ERROR(
        launchKernel(ctx, finalize_, perChannel_, finArgs, what));
    if (l_.total == 0)
      return Status::ok();
    CUdeviceptr dx = devicePtr(out_[0]);
    void *applyArgs[] = {&g, &x, &dx, &coef, &l_.total, &c, &l_.inner};
    return launchKernel(ctx, apply_, elementwise_, applyArgs, what);
  }

private:
  std::vector<TensorView> in_, out_;
  Layout l_;
  int sd_ = 0, md_ = 0, id_ = 0;
  size_t sumGXOff_ = 0, coefOff_ = 0, ownOff_ = 0, allOff_ = 0, wsBytes_ = 0;
  RanksSums ranks_;
  CUfunction partial_ = nullptr, finalize_ = nullptr, apply_ = nullptr;
  LaunchDims perChannel_, elementwise_;
};

} // namespace

void addBatchNormKernels(std::vector<KernelEntry> &out) {
  out.push_back({"batch_norm_training", prepareTraining});
  out.push_back({"batch_norm_inference", prepareInference});
  out.push_back({"batch_norm_grad", BatchNormGradKernel::prepare});
}

} // namespace ampc::rt::cuda
