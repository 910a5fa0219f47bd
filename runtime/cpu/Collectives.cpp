//===- Collectives.cpp - CPU kernels that exchange data between ranks -----===//
//
// all_reduce_mean: the bucket's gradients are widened into one f32 buffer,
// summed over the ranks in place by the session's rt::Collective (one
// exchange per bucket), multiplied by 1/world_size rounded to f32, and
// rounded once into each output. With its skip flag set (an accumulation
// step that only adds) it exchanges nothing.
//
//===----------------------------------------------------------------------===//

#include "runtime/Collective.h"
#include "runtime/TypedIO.h"
#include "runtime/cpu/Registry.h"
#include "runtime/cpu/Scratch.h"
#include "runtime/ops/AttrReaders.h"

#include <cstring>

namespace ampc::rt::cpu {
namespace {

Status runAllReduceMean(const OpCall &call, CpuContext &ctx) {
  int64_t worldSize = 0;
  AMPC_RETURN_IF_ERROR(ops::getInt(*call.attrs, "world_size", worldSize));
  if (!ctx.collective)
    return Status::error(
        "the step averages its gradients over " + std::to_string(worldSize) +
        " ranks (data parallelism), but it runs in one process: start it "
        "under mpirun -n " +
        std::to_string(worldSize));
  if (ctx.collective->size() != worldSize)
    return Status::error("the step was compiled for " +
                         std::to_string(worldSize) + " ranks but runs in " +
                         std::to_string(ctx.collective->size()));
  // A step of gradient accumulation that only adds: every rank skips the
  // exchange alike, and each output is its gradient.
  const size_t grads = call.outputs.size();
  if (call.inputs.size() > grads && elementAsInt(call.inputs.back(), 0) != 0) {
    for (size_t i = 0; i < grads; ++i)
      if (call.outputs[i].data != call.inputs[i].data)
        std::memcpy(call.outputs[i].data, call.inputs[i].data,
                    call.inputs[i].byteSize());
    return Status::ok();
  }
  size_t total = 0;
  for (size_t i = 0; i < grads; ++i)
    total += static_cast<size_t>(call.inputs[i].numElements());
  Scratch<float> sum;
  float *buffer = sum.resize(total);
  size_t at = 0;
  for (size_t i = 0; i < grads; ++i) {
    loadF32(call.inputs[i], 0, call.inputs[i].numElements(), buffer + at);
    at += static_cast<size_t>(call.inputs[i].numElements());
  }
  AMPC_RETURN_IF_ERROR(ctx.collective->allReduceSum(buffer, total));
  // Gradient accumulation's mean is the same product: sum * (1/N).
  const float inverse =
      static_cast<float>(1.0 / static_cast<double>(worldSize));
  for (size_t i = 0; i < total; ++i)
    buffer[i] *= inverse;
  at = 0;
  for (const TensorView &out : call.outputs) {
    storeF32(buffer + at, out.numElements(), out, 0);
    at += static_cast<size_t>(out.numElements());
  }
  return Status::ok();
}

} // namespace

void addCollectiveKernels(std::vector<KernelEntry> &out) {
  out.push_back({"all_reduce_mean", runAllReduceMean});
}

} // namespace ampc::rt::cpu
