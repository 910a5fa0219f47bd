//===- Movement.cpp - data movement on the GPU ----------------------------===//
//
// copy, broadcast_to, transpose, slice, slice_grad, concat, gather,
// gather_grad and dropout, with the CPU kernels' semantics
// (runtime/cpu/Movement.cpp, MovementGrad.cpp). Everything that only moves
// bytes becomes strided copies planned here once: dims of size 1 dropped,
// dims contiguous in both source and destination merged, then the widest
// access (up to 16 bytes) every stride and address allows.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/StepList.h"
#include "runtime/cuda/kernels/CopyArgs.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <cstdlib>

namespace ampc::rt::cuda {
namespace {

using ops::product;

using namespace ampc_cuda;

using ops::contiguousStrides;

// One strided copy: dst[dstOffset + sum i*dst] = src[srcOffset + sum i*src]
// over `shape`, strides and offsets in elements of `elemSize` bytes.
struct CopyDesc {
  Shape shape;
  std::vector<int64_t> src, dst;
  int64_t srcOffset = 0, dstOffset = 0;
  size_t elemSize = 1;
  CUdeviceptr srcPtr = 0, dstPtr = 0;
};

Status addTiledTranspose(CudaDevice &device, const std::vector<int64_t> &d,
                         const std::vector<int64_t> &s, int64_t srcOffset,
                         size_t es, CUdeviceptr srcPtr, CUdeviceptr dstPtr,
                         const std::string &op, StepList &out) {
  const size_t r = d.size();
  TileArgs a{};
  a.P = d[r - 2];
  a.Q = d[r - 1];
  a.srcQ = s[r - 1];
  a.srcOffset = srcOffset;
  a.outer = 1;
  a.outerRank = static_cast<int>(r - 2);
  for (size_t k = 0; k + 2 < r; ++k) {
    a.outerDims[k] = d[k];
    a.outerSrc[k] = s[k];
    a.outer *= d[k];
  }
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(device, CudaKernel::TransposeTile,
                                      {std::to_string(es)}, fn, &name));
  LaunchDims dims;
  dims.block[0] = 32;
  dims.block[1] = 8;
  // Grid y and z are capped at CUDA's 65535; the kernel loops over the
  // rest of P's tiles and of the outer indices.
  dims.grid[0] = static_cast<unsigned>((a.Q + 31) / 32);
  dims.grid[1] =
      static_cast<unsigned>(std::min<int64_t>((a.P + 31) / 32, 65535));
  dims.grid[2] = static_cast<unsigned>(std::min<int64_t>(a.outer, 65535));
  out.kernel(fn, dims, name + " (" + op + ")");
  out.arg(a);
  out.arg(srcPtr);
  out.arg(dstPtr);
  return Status::ok();
}

Status addCopy(CudaDevice &device, const CopyDesc &c, const std::string &op,
               StepList &out) {
  if (numElements(c.shape) == 0)
    return Status::ok();
  std::vector<int64_t> d, s, t;
  for (size_t i = 0; i < c.shape.size(); ++i) {
    const int64_t n = c.shape[i];
    if (n == 1)
      continue;
    if (!d.empty() && s.back() == c.src[i] * n && t.back() == c.dst[i] * n) {
      d.back() *= n;
      s.back() = c.src[i];
      t.back() = c.dst[i];
      continue;
    }
    d.push_back(n);
    s.push_back(c.src[i]);
    t.push_back(c.dst[i]);
  }
  if (d.empty()) {
    d = {1};
    s = {0};
    t = {0};
  }
  const size_t r = d.size();
  if (r > static_cast<size_t>(kMaxCopyRank))
    return Status::error(op + ": the copy has " + std::to_string(r) +
                         " dims after merging, more than the " +
                         std::to_string(kMaxCopyRank) +
                         " the CUDA strided copy takes");
  size_t es = c.elemSize;
  int64_t srcOffset = c.srcOffset, dstOffset = c.dstOffset;

  // The 2-D swap of a contiguous output: tiles keep both sides coalesced.
  bool dstContiguous = t == contiguousStrides(Shape(d.begin(), d.end()));
  if (r >= 2 && dstContiguous && dstOffset == 0 && es <= 8 && s[r - 2] == 1 &&
      s[r - 1] != 1 && d[r - 1] >= 16 && d[r - 2] >= 16 &&
      (d[r - 1] + 31) / 32 <= 0x7fffffff)
    return addTiledTranspose(device, d, s, srcOffset, es, c.srcPtr, c.dstPtr,
                             op, out);

  // Widen the element when the innermost dim is contiguous on both sides.
  size_t width = es;
  if (s[r - 1] == 1 && t[r - 1] == 1) {
    const int64_t innerBytes = d[r - 1] * static_cast<int64_t>(es);
    for (size_t w : {16, 8, 4, 2}) {
      if (w <= es)
        break;
      bool ok = innerBytes % w == 0 && c.srcPtr % w == 0 && c.dstPtr % w == 0 &&
                (srcOffset * int64_t(es)) % w == 0 &&
                (dstOffset * int64_t(es)) % w == 0;
      for (size_t k = 0; ok && k + 1 < r; ++k)
        ok = (s[k] * int64_t(es)) % int64_t(w) == 0 &&
             (t[k] * int64_t(es)) % int64_t(w) == 0;
      if (ok) {
        width = w;
        break;
      }
    }
    if (width != es) {
      const int64_t f = static_cast<int64_t>(width / es);
      d[r - 1] /= f;
      for (size_t k = 0; k + 1 < r; ++k) {
        s[k] /= f;
        t[k] /= f;
      }
      srcOffset /= f;
      dstOffset /= f;
    }
  }
  StridedCopyArgs a{};
  a.rank = static_cast<int>(r);
  a.total = 1;
  a.srcOffset = srcOffset;
  a.dstOffset = dstOffset;
  int64_t srcReach = std::llabs(srcOffset), dstReach = std::llabs(dstOffset);
  for (size_t k = 0; k < r; ++k) {
    a.dims[k] = d[k];
    a.src[k] = s[k];
    a.dst[k] = t[k];
    a.total *= d[k];
    srcReach += std::llabs(s[k]) * (d[k] - 1);
    dstReach += std::llabs(t[k]) * (d[k] - 1);
  }
  // 32-bit index arithmetic when every index fits (grid-stride included).
  const int64_t limit = int64_t(1) << 30;
  bool narrow = a.total < limit && srcReach < limit && dstReach < limit;
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(
      device, CudaKernel::StridedCopy,
      {std::to_string(width), narrow ? "i32" : "i64"}, fn, &name));
  out.kernel(fn, gridFor(device, a.total), name + " (" + op + ")");
  out.arg(a);
  out.arg(c.srcPtr);
  out.arg(c.dstPtr);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// The byte movers
//===----------------------------------------------------------------------===//

Status prepareCopyOp(const ops::OpCall &call, PrepareContext &, StepList &out) {
  const TensorView &in = call.inputs[0], &o = call.outputs[0];
  if (in.byteSize() > 0 && in.data != o.data)
    out.memcpy(devicePtr(o), devicePtr(in), in.byteSize());
  return Status::ok();
}

CopyDesc denseOutput(const TensorView &in, const TensorView &out) {
  CopyDesc c;
  c.shape = out.shape;
  c.dst = contiguousStrides(out.shape);
  c.elemSize = sizeOf(in.dtype);
  c.srcPtr = devicePtr(in);
  c.dstPtr = devicePtr(out);
  return c;
}

Status prepareBroadcastTo(const ops::OpCall &call, PrepareContext &ctx,
                          StepList &out) {
  const TensorView &in = call.inputs[0], &o = call.outputs[0];
  CopyDesc c = denseOutput(in, o);
  size_t r = o.shape.size(), off = r - in.shape.size();
  std::vector<int64_t> inStrides = contiguousStrides(in.shape);
  c.src.assign(r, 0);
  for (size_t i = off; i < r; ++i)
    c.src[i] = in.shape[i - off] == 1 ? 0 : inStrides[i - off];
  return addCopy(ctx.device, c, call.op, out);
}

Status prepareTranspose(const ops::OpCall &call, PrepareContext &ctx,
                        StepList &out) {
  const TensorView &in = call.inputs[0], &o = call.outputs[0];
  std::vector<int64_t> perm = call.attrs->getInts("perm");
  CopyDesc c = denseOutput(in, o);
  std::vector<int64_t> inStrides = contiguousStrides(in.shape);
  for (int64_t p : perm)
    c.src.push_back(inStrides[p]);
  return addCopy(ctx.device, c, call.op, out);
}

// The strides and offset, in a dense tensor of shape `full`, of the elements
// a slice with the call's 'starts' and 'steps' takes.
void slicedView(const ops::OpCall &call, const Shape &full,
                std::vector<int64_t> &strides, int64_t &offset) {
  ops::SlicedView v = ops::slicedView(full, call.attrs->getInts("starts"),
                                      call.attrs->getInts("steps"));
  strides = std::move(v.strides);
  offset = v.offset;
}

Status prepareSlice(const ops::OpCall &call, PrepareContext &ctx,
                    StepList &out) {
  const TensorView &in = call.inputs[0], &o = call.outputs[0];
  CopyDesc c = denseOutput(in, o);
  slicedView(call, in.shape, c.src, c.srcOffset);
  return addCopy(ctx.device, c, call.op, out);
}

// Zeros, then grad at the sliced positions (which are distinct).
Status prepareSliceGrad(const ops::OpCall &call, PrepareContext &ctx,
                        StepList &out) {
  const TensorView &g = call.inputs[0], &o = call.outputs[0];
  if (o.byteSize() == 0)
    return Status::ok();
  out.memset8(devicePtr(o), o.byteSize());
  CopyDesc c;
  c.shape = g.shape;
  c.src = contiguousStrides(g.shape);
  c.elemSize = sizeOf(g.dtype);
  c.srcPtr = devicePtr(g);
  c.dstPtr = devicePtr(o);
  slicedView(call, o.shape, c.dst, c.dstOffset);
  return addCopy(ctx.device, c, call.op, out);
}

// One copy per input, into its columns of every output row.
Status prepareConcat(const ops::OpCall &call, PrepareContext &ctx,
                     StepList &out) {
  const TensorView &o = call.outputs[0];
  const size_t axis = static_cast<size_t>(call.attrs->getInt("axis"));
  const int64_t outer = product(o.shape, 0, axis);
  const int64_t inner = product(o.shape, axis + 1, o.shape.size());
  const int64_t outRow = o.shape[axis] * inner;
  int64_t at = 0;
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    const TensorView &in = call.inputs[k];
    const int64_t row = in.shape[axis] * inner;
    CopyDesc c;
    c.shape = {outer, row};
    c.src = {row, 1};
    c.dst = {outRow, 1};
    c.dstOffset = at;
    c.elemSize = sizeOf(o.dtype);
    c.srcPtr = devicePtr(in);
    c.dstPtr = devicePtr(o);
    AMPC_RETURN_IF_ERROR(
        addCopy(ctx.device, c, call.op + " input " + std::to_string(k), out));
    at += row;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather / gather_grad
//===----------------------------------------------------------------------===//

Status prepareGather(const ops::OpCall &call, PrepareContext &ctx,
                     StepList &out) {
  const TensorView &data = call.inputs[0], &idx = call.inputs[1];
  const TensorView &o = call.outputs[0];
  const size_t axis = static_cast<size_t>(call.attrs->getInt("axis"));
  const int64_t outer = product(data.shape, 0, axis), dim = data.shape[axis];
  const int64_t inner = product(data.shape, axis + 1, data.shape.size());
  const int64_t count = idx.numElements();
  const int64_t innerBytes = inner * static_cast<int64_t>(sizeOf(data.dtype));
  if (innerBytes == 0 || outer * count == 0)
    return Status::ok();
  int64_t width = 1;
  for (int64_t w : {16, 8, 4, 2})
    if (innerBytes % w == 0 && devicePtr(data) % w == 0 &&
        devicePtr(o) % w == 0) {
      width = w;
      break;
    }
  const int64_t units = innerBytes / width;
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(
      kernelFunction(ctx.device, CudaKernel::Gather,
                     {std::to_string(width), rt::name(idx.dtype)}, fn, &name));
  out.kernel(fn, gridFor(ctx.device, outer * count * units), name);
  out.arg(devicePtr(data));
  out.arg(devicePtr(idx));
  out.arg(devicePtr(o));
  out.arg(outer);
  out.arg(count);
  out.arg(dim);
  out.arg(units);
  return Status::ok();
}

// Buckets the index positions by row in the workspace (counts, offsets,
// cursor, bucketed, sorted), then sums each row's bucket in index order.
Status prepareGatherGrad(const ops::OpCall &call, PrepareContext &ctx,
                         StepList &out) {
  const TensorView &g = call.inputs[0], &idx = call.inputs[1];
  const TensorView &o = call.outputs[0];
  const size_t axis = static_cast<size_t>(call.attrs->getInt("axis"));
  const int64_t outer = product(o.shape, 0, axis), dim = o.shape[axis];
  const int64_t inner = product(o.shape, axis + 1, o.shape.size());
  const int64_t count = idx.numElements();
  if (o.numElements() == 0)
    return Status::ok();
  if (dim >= (int64_t(1) << 31) - 1 || count >= (int64_t(1) << 31) - 1)
    return Status::error("gather_grad: " + std::to_string(count) +
                         " indices into an axis of size " +
                         std::to_string(dim) +
                         " exceed the CUDA kernel's 32-bit buckets");
  const size_t ints = sizeof(int);
  const size_t countsAt = 0, offsetsAt = alignUp(dim * ints);
  const size_t cursorAt = offsetsAt + alignUp((dim + 1) * ints);
  const size_t bucketedAt = cursorAt + alignUp(dim * ints);
  const size_t sortedAt = bucketedAt + alignUp(count * ints);
  ctx.requestWorkspace(sortedAt + alignUp(count * ints));
  CudaDevice &dev = ctx.device;
  const std::string_view sfx = rt::name(idx.dtype);
  std::string name;
  CUfunction fn;

  out.memset32(0, countsAt, static_cast<size_t>(dim), 0);
  AMPC_RETURN_IF_ERROR(
      kernelFunction(dev, CudaKernel::GatherGradCount, {sfx}, fn, &name));
  out.kernel(fn, gridFor(dev, count), name);
  out.arg(devicePtr(idx));
  out.arg(count);
  out.arg(dim);
  out.workspaceArg(countsAt);

  AMPC_RETURN_IF_ERROR(
      kernelFunction(dev, CudaKernel::GatherGradScan, {}, fn, &name));
  LaunchDims one;
  one.block[0] = 1024;
  out.kernel(fn, one, name);
  out.workspaceArg(countsAt);
  out.arg(dim);
  out.workspaceArg(offsetsAt);
  out.workspaceArg(cursorAt);

  AMPC_RETURN_IF_ERROR(
      kernelFunction(dev, CudaKernel::GatherGradPlace, {sfx}, fn, &name));
  out.kernel(fn, gridFor(dev, count), name);
  out.arg(devicePtr(idx));
  out.arg(count);
  out.arg(dim);
  out.workspaceArg(cursorAt);
  out.workspaceArg(bucketedAt);

  AMPC_RETURN_IF_ERROR(
      kernelFunction(dev, CudaKernel::GatherGradSort, {sfx}, fn, &name));
  out.kernel(fn, gridFor(dev, dim * 32), name);
  out.arg(devicePtr(idx));
  out.arg(count);
  out.workspaceArg(offsetsAt);
  out.arg(dim);
  out.workspaceArg(bucketedAt);
  out.workspaceArg(sortedAt);

  AMPC_RETURN_IF_ERROR(kernelFunction(dev, CudaKernel::GatherGradSum,
                                      {rt::name(o.dtype)}, fn, &name));
  out.kernel(fn, gridFor(dev, o.numElements()), name);
  out.arg(devicePtr(g));
  out.workspaceArg(offsetsAt);
  out.workspaceArg(sortedAt);
  out.arg(devicePtr(o));
  out.arg(outer);
  out.arg(count);
  out.arg(dim);
  out.arg(inner);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

Status prepareDropout(const ops::OpCall &call, PrepareContext &ctx,
                      StepList &out) {
  const TensorView &in = call.inputs[0];
  const TensorView &o = call.outputs[0], &mask = call.outputs[1];
  const int64_t n = in.numElements();
  if (n == 0)
    return Status::ok();
  std::string name;
  CUfunction fn;
  AMPC_RETURN_IF_ERROR(kernelFunction(ctx.device, CudaKernel::Dropout,
                                      {rt::name(in.dtype)}, fn, &name));
  out.kernel(fn, gridFor(ctx.device, n), name);
  out.arg(devicePtr(in));
  out.arg(devicePtr(o));
  out.arg(devicePtr(mask));
  out.arg(n);
  out.arg(int64_t(call.attrs->getInt("seed")));
  out.arg(double(call.attrs->getFloat("ratio")));
  out.arg(int(call.attrs->getInt("training") != 0));
  out.stepCounterArg();
  return Status::ok();
}

} // namespace

void addMovementKernels(std::vector<KernelEntry> &out) {
  out.push_back({"broadcast_to", prepareOne<prepareBroadcastTo>});
  out.push_back({"concat", prepareOne<prepareConcat>});
  out.push_back({"copy", prepareOne<prepareCopyOp>});
  out.push_back({"dropout", prepareOne<prepareDropout>});
  out.push_back({"gather", prepareOne<prepareGather>});
  out.push_back({"gather_grad", prepareOne<prepareGatherGrad>});
  out.push_back({"slice", prepareOne<prepareSlice>});
  out.push_back({"slice_grad", prepareOne<prepareSliceGrad>});
  out.push_back({"transpose", prepareOne<prepareTranspose>});
}

} // namespace ampc::rt::cuda
