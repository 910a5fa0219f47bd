//===- PoolingGrad.cpp - max_pool2d_grad and avg_pool2d_grad on the CPU ---===//
//
// The adjoints of Pooling.cpp's kernels over the same windows (shared
// through WindowGeometry.h): max pooling's gradient goes to the element the
// forward kernel picked, average pooling's is spread over the window's
// input elements with the forward divisor. One (image, channel) plane per
// task, in f32 (f64 for f64), each stored value rounded once.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/MaxPoolPlane.h"
#include "runtime/cpu/MaxPoolTiles.h"
#include "runtime/ops/WindowGeometry.h"

namespace ampc::rt::cpu {
namespace {
using namespace kh;

// Per-task scratch of a plane function: max pooling's window maxima and
// winners.
template <typename T> struct PlaneScratch {
  std::vector<T> max;
  std::vector<int32_t> winner;
};

// Runs `plane(g, x, dx, scratch)` over every (image, channel) plane with the
// plane of grad, of the input (when `input` is not null) and of the zeroed
// result.
template <typename T, typename PlaneFn>
void forEachPlane(const OpCall &call, const PoolPlan &p,
                  const TensorView *input, const CpuContext &ctx,
                  PlaneFn plane) {
  const TensorView &grad = call.inputs[0], &out = call.outputs[0];
  int64_t inPlane = p.h * p.w, outPlane = p.oh * p.ow;
  parallelFor(ctx, p.n * p.c, 4, [&](int64_t b, int64_t e) {
    std::vector<T> g(static_cast<size_t>(outPlane)),
        dx(static_cast<size_t>(inPlane)), x;
    PlaneScratch<T> scratch;
    if (input)
      x.resize(static_cast<size_t>(inPlane));
    for (int64_t pl = b; pl < e; ++pl) {
      loadC(grad, pl * outPlane, outPlane, g.data());
      if (input)
        loadC(*input, pl * inPlane, inPlane, x.data());
      std::fill(dx.begin(), dx.end(), T(0));
      plane(g.data(), x.data(), dx.data(), scratch);
      storeC(dx.data(), inPlane, out, pl * inPlane);
    }
  });
}

//===----------------------------------------------------------------------===//
// max_pool2d_grad
//===----------------------------------------------------------------------===//

template <typename T>
void runMaxPoolGradT(const OpCall &call, const PoolPlan &p,
                     const CpuContext &ctx) {
  int64_t outPlane = p.oh * p.ow;
  forEachPlane<T>(call, p, &call.inputs[1], ctx,
                  [&](const T *g, const T *x, T *dx, PlaneScratch<T> &s) {
                    s.max.resize(static_cast<size_t>(outPlane));
                    s.winner.resize(static_cast<size_t>(outPlane));
                    const int32_t *winner = s.winner.data();
                    maxPoolPlane(p, x, s.max.data(), s.winner.data());
                    for (int64_t o = 0; o < outPlane; ++o)
                      // A window of padding only reads no input.
                      if (winner[o] >= 0)
                        dx[winner[o]] += g[o];
                  });
}

// Windows that tile the planes (MaxPoolTiles.h): rows of windows across
// planes, in chunks of about kConvertChunk input elements, every element of
// the result written once; bf16 as stored, other types in their compute
// type.
template <typename E>
void runMaxTilesGradT(const OpCall &call, const PoolPlan &p,
                      const CpuContext &ctx) {
  using T = typename E::Stored;
  const TensorView &grad = call.inputs[0], &x = call.inputs[1],
                   &out = call.outputs[0];
  const int64_t rows = p.n * p.c * p.oh, inRow = p.sh * p.w;
  const int64_t chunk = std::max<int64_t>(1, kConvertChunk / inRow);
  parallelFor(ctx, (rows + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
    Scratch<T> xin, gin, dxout;
    TileScratch<E> scratch;
    for (int64_t c = b; c < e; ++c) {
      const int64_t r0 = c * chunk, n = std::min(chunk, rows - r0);
      const T *xs = tileRunIn<E>(x, r0 * inRow, n * inRow, xin);
      const T *gs = tileRunIn<E>(grad, r0 * p.ow, n * p.ow, gin);
      T *dxs = tileRunOut<E>(out, r0 * inRow, n * inRow, dxout);
      maxTileGradRows<E>(p, xs, gs, n, dxs, scratch);
      tileRunStore<E>(dxs, out, r0 * inRow, n * inRow);
    }
  });
}

Status runMaxPoolGrad(const OpCall &call, CpuContext &ctx) {
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(*call.attrs, call.inputs[1].shape, true, p));
  AMPC_RETURN_IF_ERROR(checkMaxPoolPlane(p));
  if (windowsTilePlanes(p)) {
    // The gradient, the input and the result have one type
    // (ops::checkMaxPoolGrad).
    if (call.inputs[0].dtype == DType::F64)
      runMaxTilesGradT<FloatTile<double>>(call, p, ctx);
    else if (call.inputs[0].dtype == DType::BF16)
      runMaxTilesGradT<Bf16Tile>(call, p, ctx);
    else
      runMaxTilesGradT<FloatTile<float>>(call, p, ctx);
    return Status::ok();
  }
  if (call.inputs[0].dtype == DType::F64)
    runMaxPoolGradT<double>(call, p, ctx);
  else
    runMaxPoolGradT<float>(call, p, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// avg_pool2d_grad
//===----------------------------------------------------------------------===//

template <typename T>
void runAvgPoolGradT(const OpCall &call, const PoolPlan &p,
                     const CpuContext &ctx) {
  forEachPlane<T>(call, p, nullptr, ctx,
                  [&](const T *g, const T *, T *dx, PlaneScratch<T> &) {
                    for (int64_t oy = 0; oy < p.oh; ++oy)
                      for (int64_t ox = 0; ox < p.ow; ++ox) {
                        AvgWindow a = avgWindow(p, oy, ox);
                        T share = g[oy * p.ow + ox] / static_cast<T>(a.count);
                        for (int64_t iy = a.y0; iy < a.y1; ++iy)
                          for (int64_t ix = a.x0; ix < a.x1; ++ix)
                            dx[iy * p.w + ix] += share;
                      }
                  });
}

Status runAvgPoolGrad(const OpCall &call, CpuContext &ctx) {
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planAvgPoolGrad(*call.attrs, call.outputs[0].shape, p));
  if (call.inputs[0].dtype == DType::F64)
    runAvgPoolGradT<double>(call, p, ctx);
  else
    runAvgPoolGradT<float>(call, p, ctx);
  return Status::ok();
}

} // namespace

void addPoolingGradKernels(std::vector<KernelEntry> &out) {
  out.push_back({"max_pool2d_grad", runMaxPoolGrad});
  out.push_back({"avg_pool2d_grad", runAvgPoolGrad});
}

} // namespace ampc::rt::cpu
