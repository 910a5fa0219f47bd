//===- Collectives.cpp - all_reduce_start / all_reduce_wait over NCCL -----===//
//
// A bucket's exchange on the GPU, the CPU backend's two kernels
// (runtime/cpu/Collectives.cpp) on NCCL (NcclCommunicator.h).
// all_reduce_start gathers the bucket's gradients into its exchange buffer
// (widened into it when the buffer is f32, copied when it is their 16-bit
// type) and queues NCCL's f32 sum over the ranks into the bucket's own f32
// buffer (a 16-bit exchange buffer is widened into it first), on the
// exchange stream; all_reduce_wait makes the compute stream wait for the
// sum and rounds each mean, sum * (1/world_size), once into its output.
// The exchange buffer keeps the rank's own gradients, which are the
// outputs when the step's skip flag is set. The flag lives on the device,
// so the sum is made on such steps too (the host would have to wait for
// the step to skip it) and the wait kernel chooses.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/cuda/Ranks.h"
#include "runtime/ops/AttrReaders.h"

#include <string>

namespace ampc::rt::cuda {

// A bucket's state, shared by its two kernels.
struct ExchangeBucket {
  std::unique_ptr<NcclCommunicator::Bucket> events;
  DeviceBuffer sums; // f32: the sum over the ranks
};

namespace {
using ops::OpCall;

class PreparedExchangeStart final : public PreparedKernel {
public:
  // A gradient into the exchange buffer: widened (count elements), or
  // copied as it is (bytes) when it has the buffer's type.
  struct Piece {
    CUdeviceptr grad = 0, at = 0;
    int64_t count = 0;
    size_t bytes = 0;
    CUfunction widen = nullptr;
  };
  std::vector<Piece> pieces;
  CUfunction widenBuffer = nullptr; // a 16-bit buffer into the sums
  CUdeviceptr exchange = 0;
  int64_t count = 0;
  std::shared_ptr<ExchangeBucket> bucket;
  NcclCommunicator *nccl = nullptr;

  Status launch(const LaunchContext &ctx) override {
    const CudaApi &api = ctx.device.api();
    for (Piece &p : pieces) {
      if (!p.widen) {
        AMPC_CU_CHECK(api,
                      cuMemcpyDtoDAsync(p.at, p.grad, p.bytes, ctx.stream));
        continue;
      }
      void *args[] = {&p.grad, &p.at, &p.count};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, p.widen,
                                        gridFor(ctx.device, p.count), args,
                                        "ampc_exchange_widen"));
    }
    CUdeviceptr sums = bucket->sums.get();
    if (widenBuffer) {
      void *args[] = {&exchange, &sums, &count};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, widenBuffer,
                                        gridFor(ctx.device, count), args,
                                        "ampc_exchange_widen"));
      return nccl->startSum(*bucket->events, sums, sums, count, DType::F32,
                            ctx.stream);
    }
    return nccl->startSum(*bucket->events, exchange, sums, count, DType::F32,
                          ctx.stream);
  }
  size_t deviceBytes() const override { return bucket->sums.size(); }
};

Status prepareStart(const std::vector<const OpCall *> &calls,
                    PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  const OpCall &call = *calls.front();
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(ops::worldSizeOf(call, sessionRanks(ctx), worldSize));
  auto k = std::make_unique<PreparedExchangeStart>();
  const TensorView &exchange = call.outputs[0];
  const bool f32 = exchange.dtype == DType::F32;
  k->exchange = devicePtr(exchange);
  k->count = exchange.numElements();
  k->nccl = ctx.nccl;
  const size_t grads = call.inputs.size() - (ops::endsWithSkip(call) ? 1 : 0);
  int64_t at = 0;
  for (size_t i = 0; i < grads; ++i) {
    const TensorView &g = call.inputs[i];
    PreparedExchangeStart::Piece p;
    p.grad = devicePtr(g);
    p.at = k->exchange + at * sizeOf(exchange.dtype);
    p.count = g.numElements();
    at += p.count;
    if (p.count == 0)
      continue;
    if (f32 && g.dtype != DType::F32)
      AMPC_RETURN_IF_ERROR(kernelFunction(ctx.device, CudaKernel::ExchangeWiden,
                                          {name(g.dtype)}, p.widen));
    else
      p.bytes = g.byteSize();
    k->pieces.push_back(p);
  }
  if (!f32)
    AMPC_RETURN_IF_ERROR(kernelFunction(ctx.device, CudaKernel::ExchangeWiden,
                                        {name(exchange.dtype)},
                                        k->widenBuffer));
  k->bucket = std::make_shared<ExchangeBucket>();
  AMPC_RETURN_IF_ERROR(ctx.nccl->createBucket(k->bucket->events));
  AMPC_RETURN_IF_ERROR(k->bucket->sums.allocate(
      ctx.device, std::max<size_t>(1, k->count) * sizeof(float),
      "the f32 sums of a data-parallel exchange"));
  ctx.exchanges[k->exchange] = k->bucket;
  out = std::move(k);
  return Status::ok();
}

class PreparedExchangeWait final : public PreparedKernel {
public:
  struct Mean {
    CUdeviceptr sum = 0, own = 0, out = 0;
    int64_t count = 0;
    CUfunction finish = nullptr;
  };
  std::vector<Mean> means;
  CUdeviceptr skip = 0; // 0: no skip flag
  int ownIsF32 = 1;
  float inverse = 1;
  std::shared_ptr<ExchangeBucket> bucket;
  NcclCommunicator *nccl = nullptr;

  Status launch(const LaunchContext &ctx) override {
    AMPC_RETURN_IF_ERROR(nccl->finish(*bucket->events, ctx.stream));
    for (Mean &m : means) {
      void *args[] = {&m.sum,   &m.own, &ownIsF32, &skip,
                      &inverse, &m.out, &m.count};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, m.finish,
                                        gridFor(ctx.device, m.count), args,
                                        "ampc_exchange_finish"));
    }
    return Status::ok();
  }
};

Status prepareWait(const std::vector<const OpCall *> &calls,
                   PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  const OpCall &call = *calls.front();
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(ops::worldSizeOf(call, sessionRanks(ctx), worldSize));
  const TensorView &exchange = call.inputs[0];
  auto found = ctx.exchanges.find(devicePtr(exchange));
  if (found == ctx.exchanges.end())
    return Status::error("its exchange buffer was not started by an "
                         "all_reduce_start before it");
  auto k = std::make_unique<PreparedExchangeWait>();
  k->bucket = found->second;
  k->nccl = ctx.nccl;
  k->ownIsF32 = exchange.dtype == DType::F32;
  // Gradient accumulation's mean is the same product: sum * (1/N).
  k->inverse = static_cast<float>(1.0 / static_cast<double>(worldSize));
  if (ops::endsWithSkip(call))
    k->skip = devicePtr(call.inputs.back());
  int64_t at = 0;
  for (const TensorView &o : call.outputs) {
    PreparedExchangeWait::Mean m;
    m.sum = k->bucket->sums.get() + at * sizeof(float);
    m.own = devicePtr(exchange) + at * sizeOf(exchange.dtype);
    m.out = devicePtr(o);
    m.count = o.numElements();
    at += m.count;
    if (m.count == 0)
      continue;
    AMPC_RETURN_IF_ERROR(kernelFunction(ctx.device, CudaKernel::ExchangeFinish,
                                        {name(o.dtype)}, m.finish));
    k->means.push_back(m);
  }
  out = std::move(k);
  return Status::ok();
}

} // namespace

void addCollectiveKernels(std::vector<KernelEntry> &out) {
  out.push_back({"all_reduce_start", prepareStart});
  out.push_back({"all_reduce_wait", prepareWait});
}

} // namespace ampc::rt::cuda
