//===- Movement.cpp - data movement CPU kernels ---------------------------===//
//
// Owns broadcast_to, transpose, concat, slice, gather, dropout and "copy".
// Apart from dropout these only move bytes, so one implementation serves
// every dtype: a strided copy over the output with the element size as the
// only type information.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/DropoutRng.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

namespace ampc::rt::cpu {
namespace {

using ops::contiguousStrides;

constexpr int64_t kGrainBytes = 64 * 1024;

template <typename T>
void copyStrided(const char *src, int64_t stride, char *dst, int64_t n) {
  const T *s = reinterpret_cast<const T *>(src);
  T *d = reinterpret_cast<T *>(dst);
  for (int64_t i = 0; i < n; ++i)
    d[i] = s[i * stride];
}

// dst (contiguous, of shape `shape`) [i...] = src[offset + sum i_d * strides_d]
// with element strides that may be 0 (broadcast) or negative (reversed
// slices).
void stridedCopy(const void *srcBase, int64_t srcOffset,
                 std::vector<int64_t> strides, Shape shape, size_t elemSize,
                 void *dstBase, const CpuContext &ctx) {
  int64_t total = numElements(shape);
  if (total == 0)
    return;
  // Drop size-1 dims and merge dims that are contiguous in the source, so
  // the innermost loop is as long as possible.
  std::vector<int64_t> dims, st;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1)
      continue;
    if (!dims.empty() && st.back() == strides[i] * shape[i]) {
      dims.back() *= shape[i];
      st.back() = strides[i];
      continue;
    }
    dims.push_back(shape[i]);
    st.push_back(strides[i]);
  }
  if (dims.empty()) {
    dims.push_back(1);
    st.push_back(0);
  }
  const size_t r = dims.size();
  const int64_t inner = dims[r - 1], innerStride = st[r - 1];
  const int64_t rows = total / inner;
  const char *src = static_cast<const char *>(srcBase);
  char *dst = static_cast<char *>(dstBase);
  const int64_t es = static_cast<int64_t>(elemSize);
  int64_t grain = std::max<int64_t>(1, kGrainBytes / (inner * es));
  parallelFor(ctx, rows, grain, [&](int64_t rb, int64_t re) {
    for (int64_t row = rb; row < re; ++row) {
      int64_t off = srcOffset, rem = row;
      for (size_t d = r - 1; d-- > 0;) {
        off += (rem % dims[d]) * st[d];
        rem /= dims[d];
      }
      const char *s = src + off * es;
      char *o = dst + row * inner * es;
      if (innerStride == 1) {
        std::memcpy(o, s, inner * es);
        continue;
      }
      switch (elemSize) {
      case 1:
        copyStrided<uint8_t>(s, innerStride, o, inner);
        break;
      case 2:
        copyStrided<uint16_t>(s, innerStride, o, inner);
        break;
      case 4:
        copyStrided<uint32_t>(s, innerStride, o, inner);
        break;
      default:
        copyStrided<uint64_t>(s, innerStride, o, inner);
        break;
      }
    }
  });
}

void parallelMemcpy(void *dst, const void *src, int64_t bytes,
                    const CpuContext &ctx) {
  if (bytes <= 0 || dst == src)
    return;
  parallelFor(ctx, bytes, 1 << 20, [&](int64_t b, int64_t e) {
    std::memcpy(static_cast<char *>(dst) + b,
                static_cast<const char *>(src) + b, e - b);
  });
}

//===----------------------------------------------------------------------===//
// broadcast_to
//===----------------------------------------------------------------------===//

Status runBroadcastTo(const OpCall &call, CpuContext &ctx) {
  const TensorView &in = call.inputs[0], &out = call.outputs[0];
  size_t r = out.shape.size(), off = r - in.shape.size();
  std::vector<int64_t> inStrides = contiguousStrides(in.shape);
  std::vector<int64_t> strides(r, 0);
  for (size_t i = off; i < r; ++i)
    strides[i] = in.shape[i - off] == 1 ? 0 : inStrides[i - off];
  stridedCopy(in.data, 0, strides, out.shape, sizeOf(in.dtype), out.data, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// transpose
//===----------------------------------------------------------------------===//

Status runTranspose(const OpCall &call, CpuContext &ctx) {
  const TensorView &in = call.inputs[0], &out = call.outputs[0];
  std::vector<int64_t> perm = call.attrs->getInts("perm");
  std::vector<int64_t> inStrides = contiguousStrides(in.shape);
  std::vector<int64_t> strides(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    strides[i] = inStrides[perm[i]];
  stridedCopy(in.data, 0, strides, out.shape, sizeOf(in.dtype), out.data, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// concat
//===----------------------------------------------------------------------===//

Status runConcat(const OpCall &call, CpuContext &ctx) {
  const TensorView &out = call.outputs[0];
  int64_t axis = call.attrs->getInt("axis");
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= out.shape[i];
  for (int64_t i = axis + 1; i < out.rank(); ++i)
    inner *= out.shape[i];
  const int64_t es = static_cast<int64_t>(sizeOf(out.dtype));
  const int64_t outRow = out.shape[axis] * inner * es;
  int64_t at = 0; // bytes into each output row
  for (const TensorView &in : call.inputs) {
    const int64_t row = in.shape[axis] * inner * es;
    const char *src = static_cast<const char *>(in.data);
    char *dst = static_cast<char *>(out.data) + at;
    if (row > 0)
      parallelFor(ctx, outer, std::max<int64_t>(1, kGrainBytes / row),
                  [&](int64_t b, int64_t e) {
                    for (int64_t o = b; o < e; ++o)
                      std::memcpy(dst + o * outRow, src + o * row, row);
                  });
    at += row;
  }
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// slice
//===----------------------------------------------------------------------===//

Status runSlice(const OpCall &call, CpuContext &ctx) {
  const TensorView &in = call.inputs[0], &out = call.outputs[0];
  const ops::SlicedView v = ops::slicedView(
      in.shape, call.attrs->getInts("starts"), call.attrs->getInts("steps"));
  if (out.numElements() == 0)
    return Status::ok();
  stridedCopy(in.data, v.offset, v.strides, out.shape, sizeOf(in.dtype),
              out.data, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather
//===----------------------------------------------------------------------===//

Status runGather(const OpCall &call, CpuContext &ctx) {
  const TensorView &data = call.inputs[0], &idx = call.inputs[1];
  const TensorView &out = call.outputs[0];
  int64_t axis = call.attrs->getInt("axis");
  int64_t outer = 1, inner = 1, dim = data.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= data.shape[i];
  for (int64_t i = axis + 1; i < data.rank(); ++i)
    inner *= data.shape[i];
  const int64_t count = idx.numElements();
  std::vector<int64_t> rows;
  AMPC_RETURN_IF_ERROR(kh::resolveGatherIndices(idx, axis, dim, rows));
  const int64_t es = static_cast<int64_t>(sizeOf(data.dtype));
  const int64_t block = inner * es;
  if (block == 0 || outer * count == 0)
    return Status::ok();
  const char *src = static_cast<const char *>(data.data);
  char *dst = static_cast<char *>(out.data);
  parallelFor(ctx, outer * count, std::max<int64_t>(1, kGrainBytes / block),
              [&](int64_t b, int64_t e) {
                for (int64_t t = b; t < e; ++t) {
                  int64_t o = t / count, j = t % count;
                  std::memcpy(dst + t * block,
                              src + (o * dim + rows[j]) * block, block);
                }
              });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// dropout
//===----------------------------------------------------------------------===//

Status runDropout(const OpCall &call, CpuContext &ctx) {
  const TensorView &in = call.inputs[0];
  const TensorView &out = call.outputs[0], &mask = call.outputs[1];
  const double ratio = call.attrs->getFloat("ratio");
  const bool training = call.attrs->getInt("training") != 0;
  const int64_t n = in.numElements();
  uint8_t *m = mask.as<uint8_t>();
  if (!training || ratio == 0) {
    parallelMemcpy(out.data, in.data, in.byteSize(), ctx);
    if (n > 0)
      std::memset(m, 1, n);
    return Status::ok();
  }
  const uint64_t stream =
      ops::dropoutStream(call.attrs->getInt("seed"), call.rngCounter);
  const double scale = ratio < 1 ? 1 / (1 - ratio) : 0;
  constexpr int64_t kChunk = 1024;
  parallelFor(ctx, (n + kChunk - 1) / kChunk, 16, [&](int64_t cb, int64_t ce) {
    float fbuf[kChunk];
    double dbuf[kChunk];
    for (int64_t c = cb; c < ce; ++c) {
      const int64_t c0 = c * kChunk, len = std::min(kChunk, n - c0);
      for (int64_t i = 0; i < len; ++i)
        m[c0 + i] = ops::dropoutKeep(stream, c0 + i, ratio);
      // Dropped elements are +0 (not x * 0, which would keep NaN and -0).
      if (in.dtype == DType::F64) {
        loadF64(in, c0, len, dbuf);
        for (int64_t i = 0; i < len; ++i)
          dbuf[i] = m[c0 + i] ? dbuf[i] * scale : 0.0;
        storeF64(dbuf, len, out, c0);
      } else {
        const float s = static_cast<float>(scale);
        loadF32(in, c0, len, fbuf);
        for (int64_t i = 0; i < len; ++i)
          fbuf[i] = m[c0 + i] ? fbuf[i] * s : 0.0f;
        storeF32(fbuf, len, out, c0);
      }
    }
  });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// copy
//===----------------------------------------------------------------------===//

Status runCopy(const OpCall &call, CpuContext &ctx) {
  parallelMemcpy(call.outputs[0].data, call.inputs[0].data,
                 call.inputs[0].byteSize(), ctx);
  return Status::ok();
}

} // namespace

void addMovementKernels(std::vector<KernelEntry> &out) {
  out.push_back({"broadcast_to", runBroadcastTo});
  out.push_back({"transpose", runTranspose});
  out.push_back({"concat", runConcat});
  out.push_back({"slice", runSlice});
  out.push_back({"gather", runGather});
  out.push_back({"dropout", runDropout});
  out.push_back({"copy", runCopy});
}

} // namespace ampc::rt::cpu
