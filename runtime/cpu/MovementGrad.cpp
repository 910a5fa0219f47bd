//===- MovementGrad.cpp - slice_grad and gather_grad on the CPU -----------===//
//
// The adjoints of Movement.cpp's slice and gather. Their checks
// (runtime/ops/MovementChecks.cpp) run the forward op's own check on the
// result's shape, so the two cannot drift apart. slice_grad only moves
// bytes (zeros, then grad at the sliced positions); gather_grad adds, in
// f32 (f64 for f64) with each stored value rounded once, repeated indices
// in index order.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/Shapes.h"

#include <cstring>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

void zeroBytes(const TensorView &t, const CpuContext &ctx) {
  int64_t bytes = t.numElements() * static_cast<int64_t>(sizeOf(t.dtype));
  parallelFor(ctx, bytes, 1 << 20, [&](int64_t b, int64_t e) {
    std::memset(static_cast<char *>(t.data) + b, 0, e - b);
  });
}

//===----------------------------------------------------------------------===//
// slice_grad
//===----------------------------------------------------------------------===//

// dst[offset + k * stride] = src[k] for k < n, elements of E.
template <typename E>
void scatterRow(const char *src, char *dst, int64_t stride, int64_t n) {
  const E *s = reinterpret_cast<const E *>(src);
  E *d = reinterpret_cast<E *>(dst);
  for (int64_t k = 0; k < n; ++k)
    d[k * stride] = s[k];
}

Status runSliceGrad(const OpCall &call, CpuContext &ctx) {
  const TensorView &grad = call.inputs[0], &out = call.outputs[0];
  std::vector<int64_t> starts, steps;
  AMPC_RETURN_IF_ERROR(getInts(*call.attrs, "starts", starts));
  AMPC_RETURN_IF_ERROR(getInts(*call.attrs, "steps", steps));
  zeroBytes(out, ctx);
  int64_t total = grad.numElements();
  if (total == 0)
    return Status::ok();
  // Element strides in the output of one step along each grad dimension.
  size_t r = out.shape.size();
  const ops::SlicedView v = ops::slicedView(out.shape, starts, steps);
  const std::vector<int64_t> &stride = v.strides;
  const int64_t base = v.offset;
  int64_t inner = r ? grad.shape[r - 1] : 1,
          innerStride = r ? stride[r - 1] : 1;
  int64_t rows = total / inner;
  const int64_t es = static_cast<int64_t>(sizeOf(out.dtype));
  const char *src = static_cast<const char *>(grad.data);
  char *dst = static_cast<char *>(out.data);
  // The sliced positions are distinct, so rows never overlap.
  parallelFor(ctx, rows, std::max<int64_t>(1, 16384 / inner),
              [&](int64_t b, int64_t e) {
                for (int64_t row = b; row < e; ++row) {
                  int64_t off = base, rem = row;
                  for (int64_t d = static_cast<int64_t>(r) - 2; d >= 0; --d) {
                    off += (rem % grad.shape[d]) * stride[d];
                    rem /= grad.shape[d];
                  }
                  const char *s = src + row * inner * es;
                  char *o = dst + off * es;
                  if (es == 2)
                    scatterRow<uint16_t>(s, o, innerStride, inner);
                  else if (es == 4)
                    scatterRow<uint32_t>(s, o, innerStride, inner);
                  else
                    scatterRow<uint64_t>(s, o, innerStride, inner);
                }
              });
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// gather_grad
//===----------------------------------------------------------------------===//

// Columns of a row added per task: long enough to vectorize, short enough
// that an axis-0 gather (one outer row) still splits across threads.
constexpr int64_t kColumnBlock = 1024;

template <typename T>
void runGatherGradT(const OpCall &call, int64_t axis,
                    const std::vector<int64_t> &rows, const CpuContext &ctx) {
  const TensorView &grad = call.inputs[0], &out = call.outputs[0];
  int64_t outer = product(out.shape, 0, axis), dim = out.shape[axis];
  int64_t inner = product(out.shape, axis + 1, out.shape.size());
  int64_t count = static_cast<int64_t>(rows.size());
  Scratch<T> sg, so;
  const T *G = computeView<T>(grad, sg, ctx);
  T *DX = computeOut<T>(out, so);
  int64_t blocks = (inner + kColumnBlock - 1) / kColumnBlock;
  // Task (o, block) owns columns of block in every row of outer slice o, so
  // tasks never write the same element and each sums in index order.
  int64_t work =
      std::max<int64_t>(1, (count + dim) * std::min(inner, kColumnBlock));
  parallelFor(ctx, outer * blocks, std::max<int64_t>(1, 65536 / work),
              [&](int64_t t0, int64_t t1) {
                for (int64_t t = t0; t < t1; ++t) {
                  int64_t o = t / blocks, c0 = (t % blocks) * kColumnBlock;
                  int64_t c1 = std::min(inner, c0 + kColumnBlock);
                  T *dxo = DX + o * dim * inner;
                  for (int64_t d = 0; d < dim; ++d)
                    std::fill(dxo + d * inner + c0, dxo + d * inner + c1, T(0));
                  const T *go = G + o * count * inner;
                  for (int64_t j = 0; j < count; ++j) {
                    T *dst = dxo + rows[j] * inner;
                    const T *src = go + j * inner;
                    for (int64_t c = c0; c < c1; ++c)
                      dst[c] += src[c];
                  }
                }
              });
  storeFromCompute(DX, out, ctx);
}

Status runGatherGrad(const OpCall &call, CpuContext &ctx) {
  const TensorView &idx = call.inputs[1], &out = call.outputs[0];
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  int64_t dim = out.shape[axis];
  std::vector<int64_t> rows;
  AMPC_RETURN_IF_ERROR(resolveGatherIndices(idx, axis, dim, rows));
  if (out.numElements() == 0)
    return Status::ok();
  if (out.dtype == DType::F64)
    runGatherGradT<double>(call, axis, rows, ctx);
  else
    runGatherGradT<float>(call, axis, rows, ctx);
  return Status::ok();
}

} // namespace

void addMovementGradKernels(std::vector<KernelEntry> &out) {
  out.push_back({"slice_grad", runSliceGrad});
  out.push_back({"gather_grad", runGatherGrad});
}

} // namespace ampc::rt::cpu
