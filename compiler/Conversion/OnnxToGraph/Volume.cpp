//===- Volume.cpp - 3-D convolution and pooling as 2-D ops ----------------===//
//
// See Window.h. A 3-D convolution becomes one conv2d whose batch is
// [N, output depth] and whose channels are [group, depth tap, channel]: the
// depth taps are gathered at constant indices (a zero slice stands for the
// depth padding), and the filter's depth taps join its channels the same
// way. Gradients come from those ops' own. A 3-D pool is separable: a 2-D
// pool over height and width, then one over depth.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/Window.h"
#include "dialects/Graph/ShapeInference.h"

using namespace mlir;

namespace ampc::onnx_to_graph {
namespace {

Value transpose(NodeBinder &n, Value v, ArrayRef<int64_t> perm) {
  auto t = n.transpose(v, perm);
  return succeeded(t) ? *t : Value();
}

/// The output length of a window over `in` elements; error when the window
/// does not fit once.
FailureOr<int64_t> outLength(NodeBinder &n, int64_t in, const Window &w,
                             size_t i, RankedTensorType type) {
  std::optional<int64_t> span = shape::dilatedSpan(w.kernel[i], w.dilations[i]);
  int64_t begin = w.pads[i], end = w.pads[i + w.spatial];
  int64_t padded = in + begin + end; // pads are below 2^62 (the caller)
  if (!span || w.strides[i] < 1 || begin < 0 || end < 0 || *span > padded)
    return n.error() << "the window of kernel_shape " << w.kernel[i]
                     << " dilated by " << w.dilations[i]
                     << " does not fit spatial dimension " << i << " of "
                     << type << " with its pads",
           failure();
  return (padded - *span) / w.strides[i] + 1;
}

} // namespace

FailureOr<Value> conv3d(NodeBinder &n, Value x, Value w, Value bias,
                        const Window &win, int64_t group) {
  auto xt = n.typeOf(x), wt = n.typeOf(w);
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          depth = xt.getDimSize(2), height = xt.getDimSize(3),
          width = xt.getDimSize(4);
  int64_t outChannels = wt.getDimSize(0), groupChannels = wt.getDimSize(1),
          taps = wt.getDimSize(2);
  if (group < 1 || channels != group * groupChannels ||
      outChannels % group != 0)
    return n.error() << "input " << xt << " and filter " << wt
                     << " do not fit group " << group,
           failure();
  FailureOr<int64_t> outDepth = outLength(n, depth, win, 0, xt);
  if (failed(outDepth))
    return failure();
  // [N, D, C, H, W]; depth D stands for the padding's zeros.
  Value v = transpose(n, x, {0, 2, 1, 3, 4});
  if (!v)
    return failure();
  SmallVector<int64_t> index;
  for (int64_t od = 0; od < *outDepth; ++od)
    for (int64_t k = 0; k < taps; ++k) {
      int64_t d = od * win.strides[0] - win.pads[0] + k * win.dilations[0];
      index.push_back(d < 0 || d >= depth ? depth : d);
    }
  FailureOr<Value> taken = gatherAxisOr(n, v, 1, index, 0.0);
  if (failed(taken))
    return failure();
  int64_t rows = batch * *outDepth, perGroup = channels / group;
  // Channels ordered [group, tap, channel], as the filter's below.
  v = n.reshape(*taken, {rows, taps, group, perGroup, height, width});
  if (group > 1 && !(v = transpose(n, v, {0, 2, 1, 3, 4, 5})))
    return failure();
  v = n.reshape(v, {rows, group * taps * perGroup, height, width});
  Value filter = transpose(n, w, {0, 2, 1, 3, 4});
  if (!filter)
    return failure();
  filter = n.reshape(filter, {outChannels, taps * groupChannels,
                              wt.getDimSize(3), wt.getDimSize(4)});
  SmallVector<Value> operands{v, filter};
  if (bias)
    operands.push_back(bias);
  auto tail = [](ArrayRef<int64_t> a) { return a.drop_front(); };
  SmallVector<int64_t> pads{win.pads[1], win.pads[2], win.pads[4], win.pads[5]};
  auto y = n.create1<graph::Conv2dOp>(
      operands,
      {n.named("strides", n.b.getDenseI64ArrayAttr(tail(win.strides))),
       n.named("pads", n.b.getDenseI64ArrayAttr(pads)),
       n.named("dilations", n.b.getDenseI64ArrayAttr(tail(win.dilations))),
       n.named("group", n.b.getI64IntegerAttr(group))});
  if (failed(y))
    return failure();
  auto yt = n.typeOf(*y);
  Value out = n.reshape(
      *y, {batch, *outDepth, outChannels, yt.getDimSize(2), yt.getDimSize(3)});
  out = transpose(n, out, {0, 2, 1, 3, 4});
  if (!out)
    return failure();
  return out;
}

FailureOr<Value> pool3d(NodeBinder &n, Value x, const Window &win,
                        Pool2d pool2d) {
  auto xt = n.typeOf(x);
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          depth = xt.getDimSize(2);
  // Height and width, each depth slice a channel of its own.
  Window plane{{win.kernel[1], win.kernel[2]},
               {win.strides[1], win.strides[2]},
               {win.pads[1], win.pads[2], win.pads[4], win.pads[5]},
               {win.dilations[1], win.dilations[2]}};
  FailureOr<Value> hw =
      pool2d(n.reshape(x, {batch, channels * depth, xt.getDimSize(3),
                           xt.getDimSize(4)}),
             plane);
  if (failed(hw))
    return failure();
  auto ht = n.typeOf(*hw);
  int64_t oh = ht.getDimSize(2), ow = ht.getDimSize(3);
  // Depth, as the height of a [N, C, D, OH * OW] tensor.
  Window column{{win.kernel[0], 1},
                {win.strides[0], 1},
                {win.pads[0], 0, win.pads[3], 0},
                {win.dilations[0], 1}};
  FailureOr<Value> d =
      pool2d(n.reshape(*hw, {batch, channels, depth, oh * ow}), column);
  if (failed(d))
    return failure();
  return n.reshape(*d, {batch, channels, n.typeOf(*d).getDimSize(2), oh, ow});
}

} // namespace ampc::onnx_to_graph
