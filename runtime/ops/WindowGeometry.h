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

// The input rows [y0, y1) and columns [x0, x1) an average-pooling window
// covers, and its divisor: with count_include_pad the padding counts, but a
// ceil-mode window running past the end padding counts only up to it.
struct AvgWindow {
  int64_t y0, y1, x0, x1, count;
};
inline AvgWindow avgWindow(const PoolPlan &p, int64_t oy, int64_t ox) {
  int64_t wy0 = oy * p.sh - p.pt, wy1 = wy0 + p.kh;
  int64_t wx0 = ox * p.sw - p.pl, wx1 = wx0 + p.kw;
  AvgWindow a;
  a.y0 = std::max<int64_t>(wy0, 0);
  a.y1 = std::min(wy1, p.h);
  a.x0 = std::max<int64_t>(wx0, 0);
  a.x1 = std::min(wx1, p.w);
  if (p.countIncludePad)
    a.count =
        (std::min(wy1, p.h + p.pb) - wy0) * (std::min(wx1, p.w + p.pr) - wx0);
  else
    a.count = (a.y1 - a.y0) * (a.x1 - a.x0);
  return a;
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

// The taps t in [lo, hi) of a window that starts at `base` and has `k` taps
// `d` apart which land inside [0, size); lo >= hi when none does.
inline void tapRange(int64_t base, int64_t k, int64_t d, int64_t size,
                     int64_t &lo, int64_t &hi) {
  lo = base >= 0 ? 0 : (-base + d - 1) / d;
  hi = base >= size ? 0 : std::min(k, (size - 1 - base) / d + 1);
}

// Offset in the plane `x` of the element max pooling takes for window
// (oy, ox): the first maximum in row-major window order, or the last NaN
// (NaN propagates). Padding never wins; -1 for a window of padding only
// (possible only with dilation), whose maximum is -inf.
template <typename T>
int64_t maxIndex(const PoolPlan &p, const T *x, int64_t oy, int64_t ox) {
  int64_t by = oy * p.sh - p.pt, bx = ox * p.sw - p.pl, i0, i1, j0, j1;
  tapRange(by, p.kh, p.dh, p.h, i0, i1);
  tapRange(bx, p.kw, p.dw, p.w, j0, j1);
  if (i0 >= i1 || j0 >= j1)
    return -1;
  int64_t best = (by + i0 * p.dh) * p.w + bx + j0 * p.dw;
  T m = x[best];
  // Once m is NaN only another NaN passes, so NaN sticks.
  for (int64_t i = i0; i < i1; ++i) {
    const int64_t row = (by + i * p.dh) * p.w + bx;
    for (int64_t j = j0; j < j1; ++j) {
      int64_t at = row + j * p.dw;
      T v = x[at];
      bool take = (v > m) | (v != v);
      m = take ? v : m;
      best = take ? at : best;
    }
  }
  return best;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_WINDOWGEOMETRY_H
