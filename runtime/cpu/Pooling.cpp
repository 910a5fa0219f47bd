//===- Pooling.cpp - max/avg/global-avg pooling on the CPU ----------------===//
//
// NCHW pooling, one (image, channel) plane per task. Planes are converted to
// the compute type (f32, or f64 for f64) and each output rounded once.
// Window geometry (ceil mode, the count_include_pad divisor) follows
// GraphOps.td and ONNX: pads never win a max, NaN propagates, and a
// ceil-mode window that runs past the end padding counts only up to it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

struct PoolPlan {
  int64_t n, c, h, w;
  int64_t kh, kw, sh, sw, dh = 1, dw = 1;
  int64_t pt, pl, pb, pr;
  int64_t oh, ow;
  bool ceil = false, countIncludePad = false;
};

Status planPool(const OpCall &call, bool isMax, PoolPlan &p) {
  const Attrs &at = *call.attrs;
  std::vector<int64_t> kernel, strides, pads, dilations{1, 1};
  AMPC_RETURN_IF_ERROR(getInts(at, "kernel_shape", kernel));
  AMPC_RETURN_IF_ERROR(getInts(at, "strides", strides));
  AMPC_RETURN_IF_ERROR(getInts(at, "pads", pads));
  if (isMax)
    AMPC_RETURN_IF_ERROR(getInts(at, "dilations", dilations));
  AMPC_RETURN_IF_ERROR(getBool(at, "ceil_mode", false, p.ceil));
  if (!isMax)
    AMPC_RETURN_IF_ERROR(
        getBool(at, "count_include_pad", false, p.countIncludePad));
  const Shape &in = call.inputs[0].shape;
  if (in.size() != 4)
    return Status::error("input must be 4-D NCHW, got " + shapeStr(in));
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1)
    return Status::error("attribute 'kernel_shape' must be 2 sizes >= 1, got " +
                         shapeStr(kernel));
  AMPC_RETURN_IF_ERROR(checkWindow(strides, pads, dilations));
  p.n = in[0];
  p.c = in[1];
  p.h = in[2];
  p.w = in[3];
  p.kh = kernel[0];
  p.kw = kernel[1];
  p.sh = strides[0];
  p.sw = strides[1];
  p.dh = dilations[0];
  p.dw = dilations[1];
  p.pt = pads[0];
  p.pl = pads[1];
  p.pb = pads[2];
  p.pr = pads[3];
  int64_t outHW[2];
  for (int i = 0; i < 2; ++i) {
    if (pads[i] >= kernel[i] || pads[i + 2] >= kernel[i])
      return Status::error("attribute 'pads' " + shapeStr(pads) +
                           " must be smaller than the kernel " +
                           shapeStr(kernel));
    int64_t span = dilations[i] * (kernel[i] - 1) + 1;
    int64_t padded = in[2 + i] + pads[i] + pads[i + 2];
    if (padded < span)
      return Status::error("kernel extent " + std::to_string(span) +
                           " is larger than the padded input " +
                           std::to_string(padded) + " in spatial dimension " +
                           std::to_string(i));
    int64_t rem = padded - span;
    int64_t o =
        (p.ceil ? (rem + strides[i] - 1) / strides[i] : rem / strides[i]) + 1;
    // A ceil-mode window must start inside the input or the begin padding.
    if (p.ceil && (o - 1) * strides[i] >= in[2 + i] + pads[i])
      --o;
    outHW[i] = o;
  }
  p.oh = outHW[0];
  p.ow = outHW[1];
  return Status::ok();
}

Status checkPool(const OpCall &call, bool isMax) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(call, isMax, p));
  return checkOutput(call, 0, "output", Shape{p.n, p.c, p.oh, p.ow}, x.dtype);
}
Status checkMaxPool(const OpCall &call) { return checkPool(call, true); }
Status checkAvgPool(const OpCall &call) { return checkPool(call, false); }

template <typename T> void maxPlane(const PoolPlan &p, const T *x, T *y) {
  for (int64_t oy = 0; oy < p.oh; ++oy)
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      // An all-padding window (possible only with dilation) gives -inf.
      T m = -std::numeric_limits<T>::infinity();
      for (int64_t i = 0; i < p.kh; ++i) {
        int64_t iy = oy * p.sh - p.pt + i * p.dh;
        if (iy < 0 || iy >= p.h)
          continue;
        for (int64_t j = 0; j < p.kw; ++j) {
          int64_t ix = ox * p.sw - p.pl + j * p.dw;
          if (ix < 0 || ix >= p.w)
            continue;
          T v = x[iy * p.w + ix];
          // Once m is NaN neither test holds, so NaN sticks.
          m = (v > m || v != v) ? v : m;
        }
      }
      y[oy * p.ow + ox] = m;
    }
}

template <typename T> void avgPlane(const PoolPlan &p, const T *x, T *y) {
  for (int64_t oy = 0; oy < p.oh; ++oy) {
    int64_t y0 = oy * p.sh - p.pt, y1 = y0 + p.kh;
    int64_t vy0 = std::max<int64_t>(y0, 0), vy1 = std::min(y1, p.h);
    for (int64_t ox = 0; ox < p.ow; ++ox) {
      int64_t x0 = ox * p.sw - p.pl, x1 = x0 + p.kw;
      int64_t vx0 = std::max<int64_t>(x0, 0), vx1 = std::min(x1, p.w);
      T s = 0;
      for (int64_t iy = vy0; iy < vy1; ++iy)
        for (int64_t ix = vx0; ix < vx1; ++ix)
          s += x[iy * p.w + ix];
      int64_t count;
      if (p.countIncludePad)
        count =
            (std::min(y1, p.h + p.pb) - y0) * (std::min(x1, p.w + p.pr) - x0);
      else
        count = (vy1 - vy0) * (vx1 - vx0);
      y[oy * p.ow + ox] = s / static_cast<T>(count);
    }
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
    for (int64_t plane = b; plane < e; ++plane) {
      loadC(x, plane * inPlane, inPlane, xin.data());
      if (isMax)
        maxPlane(p, xin.data(), yout.data());
      else
        avgPlane(p, xin.data(), yout.data());
      storeC(yout.data(), outPlane, out, plane * outPlane);
    }
  });
}

Status runPool(const OpCall &call, CpuContext &ctx, bool isMax) {
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(call, isMax, p));
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

Status checkGlobalAvgPool(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  if (x.rank() < 3)
    return Status::error("input must be [N, C, spatial...] of rank >= 3, got " +
                         shapeStr(x.shape));
  Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  return checkOutput(call, 0, "output", out, x.dtype);
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
  out.push_back({"max_pool2d", checkMaxPool, runMaxPool});
  out.push_back({"avg_pool2d", checkAvgPool, runAvgPool});
  out.push_back({"global_avg_pool", checkGlobalAvgPool, runGlobalAvgPool});
}

} // namespace ampc::rt::cpu
