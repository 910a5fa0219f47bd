//===- Collectives.cpp - CPU kernels that exchange data between ranks -----===//
//
// A bucket's exchange is two kernels. all_reduce_start widens the bucket's
// gradients into its output, the f32 exchange buffer, and has the
// session's rt::Collective start summing it over the ranks in place; the
// kernels after it run while the ranks exchange. all_reduce_wait waits for
// that sum, multiplies it by 1/world_size rounded to f32 and rounds once
// into each output. A 16-bit buffer holds the gradients as they are, and
// the collective leaves the means in it (Collective::startMean). With the skip
// flag set (an accumulation step that only adds) nothing is exchanged and each
// output is its gradient.
//
//===----------------------------------------------------------------------===//

#include "runtime/Collective.h"
#include "runtime/TypedIO.h"
#include "runtime/cpu/Ranks.h"
#include "runtime/cpu/Registry.h"
#include "runtime/ops/AttrReaders.h"

#include <algorithm>
#include <cstring>

namespace ampc::rt::cpu {
namespace {

/// A step of gradient accumulation that only adds: every rank skips the
/// exchange alike (the trailing skip flag is set).
bool skipped(const OpCall &call) {
  return ops::endsWithSkip(call) && elementAsInt(call.inputs.back(), 0) != 0;
}

Status runAllReduceStart(const OpCall &call, CpuContext &ctx) {
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(ops::worldSizeOf(call, sessionRanks(ctx), worldSize));
  const TensorView &exchange = call.outputs[0];
  size_t grads = call.inputs.size() - (ops::endsWithSkip(call) ? 1 : 0);
  const bool skip = skipped(call);
  auto count = static_cast<size_t>(exchange.numElements());
  if (exchange.dtype != DType::F32) {
    // In the gradients' own 16-bit type (the checks made them all that).
    auto *buffer = static_cast<uint16_t *>(exchange.data);
    size_t at = 0;
    for (size_t i = 0; i < grads; ++i) {
      std::memcpy(buffer + at, call.inputs[i].data, call.inputs[i].byteSize());
      at += static_cast<size_t>(call.inputs[i].numElements());
    }
    if (skip)
      return Status::ok();
    return ctx.collective->startMean(buffer, count, exchange.dtype);
  }
  auto *buffer = static_cast<float *>(exchange.data);
  int64_t at = 0;
  for (size_t i = 0; i < grads; ++i) {
    loadF32(call.inputs[i], 0, call.inputs[i].numElements(), buffer + at);
    at += call.inputs[i].numElements();
  }
  if (skip)
    return Status::ok();
  return ctx.collective->startSum(buffer, count);
}

Status runAllReduceWait(const OpCall &call, CpuContext &ctx) {
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(ops::worldSizeOf(call, sessionRanks(ctx), worldSize));
  const TensorView &exchange = call.inputs[0];
  const bool skip = skipped(call);
  if (!skip)
    AMPC_RETURN_IF_ERROR(ctx.collective->finish(exchange.data));
  if (exchange.dtype != DType::F32) {
    // The means (or, skipped, this rank's gradients) in their own type.
    size_t at = 0;
    for (const TensorView &out : call.outputs) {
      std::memcpy(out.data, static_cast<const char *>(exchange.data) + at,
                  out.byteSize());
      at += out.byteSize();
    }
    return Status::ok();
  }
  auto *buffer = static_cast<const float *>(exchange.data);
  // Gradient accumulation's mean is the same product: sum * (1/N).
  float inverse = static_cast<float>(1.0 / static_cast<double>(worldSize));
  if (skip)
    inverse = 1.0f; // the buffer holds this rank's own gradients
  // The buffer is this kernel's input: the means go through a small block.
  constexpr int64_t kBlock = 1024;
  float block[kBlock];
  int64_t at = 0;
  for (const TensorView &out : call.outputs) {
    for (int64_t done = 0, n = out.numElements(); done < n; done += kBlock) {
      int64_t count = std::min(kBlock, n - done);
      for (int64_t i = 0; i < count; ++i)
        block[i] = buffer[at + done + i] * inverse;
      storeF32(block, count, out, done);
    }
    at += out.numElements();
  }
  return Status::ok();
}

} // namespace

void addCollectiveKernels(std::vector<KernelEntry> &out) {
  out.push_back({"all_reduce_start", runAllReduceStart});
  out.push_back({"all_reduce_wait", runAllReduceWait});
}

} // namespace ampc::rt::cpu
