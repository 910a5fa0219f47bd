//===- WindowGeometry.h - conv2d and pooling windows, forward and back ----===//
//
// Attribute checks, output sizes and per-window index ranges shared by the
// conv2d and pooling kernels and their gradients on every backend, so that a
// gradient walks exactly the windows (padding, ceil mode, divisor, argmax)
// its forward kernel read.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_WINDOWGEOMETRY_H
#define AMPC_RUNTIME_OPS_WINDOWGEOMETRY_H

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/PoolWindow.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <limits>
#include <optional>

namespace ampc::rt::ops {

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

struct ConvPlan {
  int64_t n, c, h, w;    // input
  int64_t o, cg, kh, kw; // filter (cg: input channels per group)
  int64_t oh, ow, group; // output
  int64_t sh, sw, dh, dw, pt, pl;
};

// How far a window of `kernel` taps `dilation` apart can still move along
// spatial dimension `dim` of an input of extent `in` padded by `padBegin`
// and `padEnd`; an error when not even one window fits.
inline Status windowRoom(int64_t in, int64_t padBegin, int64_t padEnd,
                         int64_t kernel, int64_t dilation, int dim,
                         int64_t &room) {
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = in + padBegin + padEnd;
  if (padded < span)
    return Status::error("kernel extent " + std::to_string(span) +
                         " is larger than the padded input " +
                         std::to_string(padded) + " in spatial dimension " +
                         std::to_string(dim));
  room = padded - span;
  return Status::ok();
}

// `in` is the NCHW input's shape and `f` the OIHW filter's; the gradient
// kernels pass the shape they produce in place of the one they lack.
inline Status planConv(const Attrs &at, const Shape &in, const Shape &f,
                       ConvPlan &p) {
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 0;
  AMPC_RETURN_IF_ERROR(getInts(at, "strides", strides));
  AMPC_RETURN_IF_ERROR(getInts(at, "pads", pads));
  AMPC_RETURN_IF_ERROR(getInts(at, "dilations", dilations));
  AMPC_RETURN_IF_ERROR(getInt(at, "group", group));
  AMPC_RETURN_IF_ERROR(checkWindow(strides, pads, dilations));
  if (in.size() != 4)
    return Status::error("input must be 4-D NCHW, got " + shapeStr(in));
  if (f.size() != 4)
    return Status::error("filter must be 4-D OIHW, got " + shapeStr(f));
  if (group < 1)
    return Status::error("attribute 'group' must be >= 1, got " +
                         std::to_string(group));
  if (f[1] * group != in[1])
    return Status::error("filter has " + std::to_string(f[1]) +
                         " input channels per group but input has " +
                         std::to_string(in[1]) + " channels and group " +
                         std::to_string(group));
  if (f[0] % group != 0)
    return Status::error("filter has " + std::to_string(f[0]) +
                         " output channels, not divisible by group " +
                         std::to_string(group));
  p = ConvPlan{in[0],      in[1],        in[2],
               in[3],      f[0],         f[1],
               f[2],       f[3],         0,
               0,          group,        strides[0],
               strides[1], dilations[0], dilations[1],
               pads[0],    pads[1]};
  int64_t outHW[2];
  for (int i = 0; i < 2; ++i) {
    int64_t room = 0;
    AMPC_RETURN_IF_ERROR(windowRoom(in[2 + i], pads[i], pads[i + 2], f[2 + i],
                                    dilations[i], i, room));
    outHW[i] = room / strides[i] + 1;
  }
  p.oh = outHW[0];
  p.ow = outHW[1];
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

struct PoolPlan {
  int64_t n, c, h, w;
  int64_t kh, kw, sh, sw, dh = 1, dw = 1;
  int64_t pt, pl, pb, pr;
  int64_t oh, ow;
  bool ceil = false, countIncludePad = false;
};

// `in` is the pooled NCHW input's shape. Average pooling has no dilations
// and max pooling no count_include_pad.
inline Status planPool(const Attrs &at, const Shape &in, bool isMax,
                       PoolPlan &p) {
  std::vector<int64_t> kernel, strides, pads, dilations{1, 1};
  AMPC_RETURN_IF_ERROR(getInts(at, "kernel_shape", kernel));
  AMPC_RETURN_IF_ERROR(getInts(at, "strides", strides));
  AMPC_RETURN_IF_ERROR(getInts(at, "pads", pads));
  if (isMax)
    AMPC_RETURN_IF_ERROR(getInts(at, "dilations", dilations));
  AMPC_RETURN_IF_ERROR(getBool(at, "ceil_mode", p.ceil));
  if (!isMax)
    AMPC_RETURN_IF_ERROR(getBool(at, "count_include_pad", p.countIncludePad));
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
    int64_t rem = 0;
    AMPC_RETURN_IF_ERROR(windowRoom(in[2 + i], pads[i], pads[i + 2], kernel[i],
                                    dilations[i], i, rem));
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

// avg_pool2d_grad has no forward input: its windows are planned over its
// output, the pooled input's gradient.
inline Status planAvgPoolGrad(const Attrs &attrs, const Shape &out,
                              PoolPlan &p) {
  if (out.size() != 4)
    return Status::error("output (the pooled input's gradient) must be 4-D "
                         "NCHW, got " +
                         shapeStr(out));
  return planPool(attrs, out, /*isMax=*/false, p);
}

// ops::maxIndexOf over the elements of the plane `x` (PoolWindow.h).
template <typename T>
int64_t maxIndex(const PoolPlan &p, const T *x, int64_t oy, int64_t ox) {
  return maxIndexOf(
      p, [x](int64_t i) { return x[i]; }, oy, ox);
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_WINDOWGEOMETRY_H
