//===- Reduction.cpp - reduce_sum/mean/max and reduce_max_grad on the GPU -===//
//
// The CPU kernels' semantics (runtime/cpu/Reduction.cpp, LossGrad.cpp):
// 'axes' (normalized, non-negative) and 'keepdims', which only changes the
// output's shape, not its row-major order. Dims are merged into kept and
// reduced groups as runtime/ops/ReducePlan.h does; kernels/Reduction.cu
// says how each layout is reduced. An empty input gives every output the
// reduction of nothing: 0 for sums, NaN (0/0) or 0 (ints) for means, -inf
// or int64 min (converted to the dtype) for max.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/StepList.h"
#include "runtime/cuda/kernels/ReduceArgs.h"
#include "runtime/ops/ReducePlan.h"

#include <algorithm>

namespace ampc::rt::cuda {
namespace {

using namespace ampc_cuda;

// Fills the dims of `a`; rowLayout is true when the last merged dim is
// reduced (contiguous rows of `len`), false when it is kept (columns).
Status planReduction(const std::string &op, const Shape &shape,
                     const std::vector<int64_t> &axes, ReduceArgs &a,
                     bool &rowLayout) {
  a = ReduceArgs{};
  a.count = 1;
  a.outN = 1;
  for (size_t i = 0; i < shape.size(); ++i)
    (ops::isReducedAxis(axes, i) ? a.count : a.outN) *= shape[i];
  a.len = 1;
  a.splits = 1;
  a.chunk = std::max<int64_t>(1, a.count);
  rowLayout = true;
  if (numElements(shape) == 0)
    return Status::ok(); // nothing is read: every output reduces nothing
  const ops::ReduceDims m = ops::mergeReduceDims(shape, axes);
  const std::vector<int64_t> &dims = m.dims, &strides = m.strides;
  const std::vector<bool> &red = m.reduced;
  rowLayout = red.back();
  const size_t n = rowLayout ? dims.size() - 1 : dims.size();
  if (rowLayout)
    a.len = dims.back();
  for (size_t i = 0; i < dims.size(); ++i) {
    int &rank = red[i] ? a.redRank : a.keptRank;
    if (red[i] && i >= n)
      continue; // the row kernel's contiguous last dim
    if (rank == kMaxReduceRank)
      return Status::error(op + ": the input " + str(shape) +
                           " has more than " + std::to_string(kMaxReduceRank) +
                           " separate kept or reduced dim groups");
    if (red[i]) {
      a.redDims[rank] = dims[i];
      a.redStrides[rank] = strides[i];
    } else {
      a.keptDims[rank] = dims[i];
      a.keptStrides[rank] = strides[i];
    }
    ++rank;
  }
  return Status::ok();
}

size_t accBytes(DType t) {
  return t == DType::F32 || t == DType::F16 || t == DType::BF16 ? 4 : 8;
}

template <int K>
Status prepareReduce(const ops::OpCall &call, PrepareContext &ctx,
                     StepList &out) {
  const TensorView &x = call.inputs[0], &o = call.outputs[0];
  ReduceArgs a;
  bool rowLayout;
  AMPC_RETURN_IF_ERROR(planReduction(
      call.op, x.shape, call.attrs->getInts("axes"), a, rowLayout));
  a.kind = K;
  if (a.outN == 0)
    return Status::ok();
  CudaDevice &dev = ctx.device;
  const int64_t sms = std::max(1, dev.multiprocessors());
  // Enough units (warps for rows, threads for columns) to fill the GPU; a
  // chunk stays long enough that the second pass is cheap.
  const int64_t target = rowLayout ? sms * 64 : sms * 2048;
  const int64_t minChunk = rowLayout ? 2048 : 64;
  if (a.outN < target && a.count > minChunk) {
    int64_t splits =
        std::min<int64_t>({(target + a.outN - 1) / a.outN,
                           (a.count + minChunk - 1) / minChunk, 1024});
    a.chunk = (a.count + splits - 1) / splits;
    a.splits = (a.count + a.chunk - 1) / a.chunk;
  }
  const std::string sfx(rt::name(x.dtype));
  const int64_t units = a.outN * a.splits;
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(
      dev, rowLayout ? CudaKernel::ReduceRows : CudaKernel::ReduceColumns,
      {sfx}, fn, &name));
  out.kernel(fn, gridFor(dev, rowLayout ? units * 32 : units),
             name + " (" + call.op + ")");
  out.arg(a);
  out.arg(devicePtr(x));
  out.arg(devicePtr(o));
  if (a.splits == 1) {
    out.arg(CUdeviceptr(0));
    return Status::ok();
  }
  ctx.requestWorkspace(static_cast<size_t>(units) * accBytes(x.dtype));
  out.workspaceArg(0);
  AMPC_RETURN_IF_ERROR(
      kernelFunction(dev, CudaKernel::ReduceFinish, {sfx}, fn, &name));
  out.kernel(fn, gridFor(dev, a.outN), name + " (" + call.op + ")");
  out.arg(a);
  out.workspaceArg(0);
  out.arg(devicePtr(o));
  out.arg(int(rowLayout));
  return Status::ok();
}

// (grad, input, output_value) -> d input.
Status prepareReduceMaxGrad(const ops::OpCall &call, PrepareContext &ctx,
                            StepList &out) {
  const TensorView &g = call.inputs[0], &x = call.inputs[1],
                   &m = call.inputs[2], &dx = call.outputs[0];
  if (x.numElements() == 0)
    return Status::ok();
  ReduceArgs a;
  bool rowLayout;
  AMPC_RETURN_IF_ERROR(planReduction(
      call.op, x.shape, call.attrs->getInts("axes"), a, rowLayout));
  a.kind = kMax;
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(ctx.device,
                                      rowLayout
                                          ? CudaKernel::ReduceMaxGradRows
                                          : CudaKernel::ReduceMaxGradColumns,
                                      {rt::name(x.dtype)}, fn, &name));
  out.kernel(fn, gridFor(ctx.device, rowLayout ? a.outN * 32 : a.outN), name);
  out.arg(a);
  out.arg(devicePtr(g));
  out.arg(devicePtr(x));
  out.arg(devicePtr(m));
  out.arg(devicePtr(dx));
  return Status::ok();
}

} // namespace

void addReductionKernels(std::vector<KernelEntry> &out) {
  out.push_back({"reduce_max", prepareOne<prepareReduce<kMax>>});
  out.push_back({"reduce_max_grad", prepareOne<prepareReduceMaxGrad>});
  out.push_back({"reduce_mean", prepareOne<prepareReduce<kMean>>});
  out.push_back({"reduce_sum", prepareOne<prepareReduce<kSum>>});
}

} // namespace ampc::rt::cuda
