//===- Pooling.cpp - max/avg/global-avg pooling on the CPU ----------------===//
//
// NCHW pooling, one (image, channel) plane per task. Planes are converted to
// the compute type (f32, or f64 for f64) and each output rounded once.
// Window geometry (ceil mode, the count_include_pad divisor, which element
// is the max) lives in WindowGeometry.h, shared with the gradients, and
// follows GraphOps.td and ONNX: pads never win a max, NaN propagates, and a
// ceil-mode window that runs past the end padding counts only up to it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/MaxPoolPlane.h"
#include "runtime/cpu/MaxPoolTiles.h"
#include "runtime/ops/WindowGeometry.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

template <typename T> void avgPlane(const PoolPlan &p, const T *x, T *y) {
  for (int64_t oy = 0; oy < p.oh; ++oy)
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      AvgWindow a = avgWindow(p, oy, ox);
      T s = 0;
      for (int64_t iy = a.y0; iy < a.y1; ++iy)
        for (int64_t ix = a.x0; ix < a.x1; ++ix)
          s += x[iy * p.w + ix];
      y[oy * p.ow + ox] = s / static_cast<T>(a.count);
    }
}

template <typename T>
void runPoolT(const OpCall &call, const PoolPlan &p, bool isMax,
              const CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  int64_t inPlane = p.h * p.w, outPlane = p.oh * p.ow;
  parallelFor(ctx, p.n * p.c, 4, [&](int64_t b, int64_t e) {
    std::vector<T> xin(static_cast<size_t>(inPlane)),
        yout(static_cast<size_t>(outPlane));
    std::vector<int32_t> winner(isMax ? static_cast<size_t>(outPlane) : 0);
    for (int64_t plane = b; plane < e; ++plane) {
      loadC(x, plane * inPlane, inPlane, xin.data());
      if (isMax)
        maxPoolPlane(p, xin.data(), yout.data(), winner.data());
      else
        avgPlane(p, xin.data(), yout.data());
      storeC(yout.data(), outPlane, out, plane * outPlane);
    }
  });
}

// Windows that tile the planes (MaxPoolTiles.h): rows of windows across
// planes, in chunks of about kConvertChunk input elements; bf16 as
// stored, other types in their compute type.
template <typename E>
void runMaxTilesT(const OpCall &call, const PoolPlan &p,
                  const CpuContext &ctx) {
  using T = typename E::Stored;
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  const int64_t rows = p.n * p.c * p.oh, inRow = p.sh * p.w;
  const int64_t chunk = std::max<int64_t>(1, kConvertChunk / inRow);
  parallelFor(ctx, (rows + chunk - 1) / chunk, 1, [&](int64_t b, int64_t e) {
    Scratch<T> xin, yout;
    TileScratch<E> scratch;
    for (int64_t c = b; c < e; ++c) {
      const int64_t r0 = c * chunk, n = std::min(chunk, rows - r0);
      const T *xs = tileRunIn<E>(x, r0 * inRow, n * inRow, xin);
      T *ys = tileRunOut<E>(out, r0 * p.ow, n * p.ow, yout);
      maxTileRows<E>(p, xs, n, ys, scratch);
      tileRunStore<E>(ys, out, r0 * p.ow, n * p.ow);
    }
  });
}

Status runPool(const OpCall &call, CpuContext &ctx, bool isMax) {
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(*call.attrs, call.inputs[0].shape, isMax, p));
  if (isMax)
    AMPC_RETURN_IF_ERROR(checkMaxPoolPlane(p));
  if (isMax && windowsTilePlanes(p)) {
    if (call.inputs[0].dtype == DType::F64)
      runMaxTilesT<FloatTile<double>>(call, p, ctx);
    else if (call.inputs[0].dtype == DType::BF16)
      runMaxTilesT<Bf16Tile>(call, p, ctx);
    else
      runMaxTilesT<FloatTile<float>>(call, p, ctx);
    return Status::ok();
  }
  if (call.inputs[0].dtype == DType::F64)
    runPoolT<double>(call, p, isMax, ctx);
  else
    runPoolT<float>(call, p, isMax, ctx);
  return Status::ok();
}
Status runMaxPool(const OpCall &call, CpuContext &ctx) {
  return runPool(call, ctx, true);
}
Status runAvgPool(const OpCall &call, CpuContext &ctx) {
  return runPool(call, ctx, false);
}

template <typename T>
void runGlobalAvgPoolT(const OpCall &call, const CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  int64_t planes = x.shape[0] * x.shape[1];
  int64_t size = product(x.shape, 2, x.shape.size());
  parallelFor(ctx, planes, 4, [&](int64_t b, int64_t e) {
    std::vector<T> buf(static_cast<size_t>(size));
    for (int64_t plane = b; plane < e; ++plane) {
      loadC(x, plane * size, size, buf.data());
      T mean = sumRow(buf.data(), size) / static_cast<T>(size);
      storeC(&mean, 1, out, plane);
    }
  });
}

Status runGlobalAvgPool(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[0].dtype == DType::F64)
    runGlobalAvgPoolT<double>(call, ctx);
  else
    runGlobalAvgPoolT<float>(call, ctx);
  return Status::ok();
}

} // namespace

void addPoolingKernels(std::vector<KernelEntry> &out) {
  out.push_back({"max_pool2d", runMaxPool});
  out.push_back({"avg_pool2d", runAvgPool});
  out.push_back({"global_avg_pool", runGlobalAvgPool});
}

} // namespace ampc::rt::cpu
