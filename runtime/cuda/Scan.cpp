//===- Scan.cpp - arg_max, cumsum and top_k on the GPU --------------------===//
//
// The CPU kernels' semantics (runtime/cpu/Scan.cpp) over the same
// [outer, len, inner] view (runtime/ops/AxisPlan.h); kernels/Scan.cu says
// how each op is laid out on threads. One launch per op.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/StepList.h"
#include "runtime/cuda/kernels/ScanArgs.h"
#include "runtime/ops/AxisPlan.h"

namespace ampc::rt::cuda {
namespace {

using namespace ampc_cuda;

ScanArgs argsOf(const ops::OpCall &call) {
  const ops::AxisView v =
      ops::axisView(call.inputs[0].shape, call.attrs->getInt("axis"));
  ScanArgs a{};
  a.outer = v.outer;
  a.len = v.len;
  a.inner = v.inner;
  return a;
}

// One launch of `k` over `work` threads: (args, input, outputs...).
Status launchOne(const ops::OpCall &call, PrepareContext &ctx, StepList &out,
                 CudaKernel k, const ScanArgs &a, int64_t work) {
  if (work == 0)
    return Status::ok();
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(
      ctx.device, k, {rt::name(call.inputs[0].dtype)}, fn, &name));
  out.kernel(fn, gridFor(ctx.device, work), name);
  out.arg(a);
  out.arg(devicePtr(call.inputs[0]));
  for (const TensorView &o : call.outputs)
    out.arg(devicePtr(o));
  return Status::ok();
}

Status prepareCumSum(const ops::OpCall &call, PrepareContext &ctx,
                     StepList &out) {
  ScanArgs a = argsOf(call);
  a.flag0 = call.attrs->getInt("exclusive") != 0;
  a.flag1 = call.attrs->getInt("reverse") != 0;
  return launchOne(call, ctx, out, CudaKernel::CumSum, a, a.outer * a.inner);
}

Status prepareArgMax(const ops::OpCall &call, PrepareContext &ctx,
                     StepList &out) {
  ScanArgs a = argsOf(call);
  a.flag0 = call.attrs->getInt("select_last_index") != 0;
  return launchOne(call, ctx, out, CudaKernel::ArgMax, a, a.outer * a.inner);
}

Status prepareTopK(const ops::OpCall &call, PrepareContext &ctx,
                   StepList &out) {
  ScanArgs a = argsOf(call);
  a.k = call.attrs->getInt("k");
  a.flag0 = call.attrs->getInt("largest") != 0;
  if (a.k == 0)
    return Status::ok();
  return launchOne(call, ctx, out, CudaKernel::TopK, a,
                   a.outer * a.len * a.inner);
}

} // namespace

void addScanKernels(std::vector<KernelEntry> &out) {
  out.push_back({"arg_max", prepareOne<prepareArgMax>});
  out.push_back({"cumsum", prepareOne<prepareCumSum>});
  out.push_back({"top_k", prepareOne<prepareTopK>});
}

} // namespace ampc::rt::cuda
