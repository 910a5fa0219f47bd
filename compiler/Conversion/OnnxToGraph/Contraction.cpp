//===- Contraction.cpp - ONNX MatMul, Gemm, Conv, pooling -> graph --------===//
//
// Contractions and windowed ops. ONNX's auto_pad and default attributes are
// resolved here into explicit strides/pads/dilations; 1-D convolution and
// pooling run as 2-D with a unit height, 3-D as 2-D ops (Volume.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/Window.h"
#include "dialects/Graph/ShapeInference.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

FailureOr<SmallVector<Value>> convertMatMul(NodeBinder &n) {
  auto a = n.required(0, "A"), b = n.required(1, "B");
  if (failed(a) || failed(b))
    return failure();
  return results(n.create1<graph::MatMulOp>({*a, *b}));
}

FailureOr<SmallVector<Value>> convertGemm(NodeBinder &n) {
  auto a = n.required(0, "A"), b = n.required(1, "B");
  if (failed(a) || failed(b))
    return failure();
  SmallVector<Value> operands{*a, *b};
  if (Value c = n.input(2))
    operands.push_back(c);
  SmallVector<NamedAttribute> attrs;
  double alpha = n.floatAttr("alpha", 1.0), beta = n.floatAttr("beta", 1.0);
  if (alpha != 1.0)
    attrs.push_back(n.named("alpha", n.b.getF64FloatAttr(alpha)));
  if (beta != 1.0)
    attrs.push_back(n.named("beta", n.b.getF64FloatAttr(beta)));
  if (n.intAttr("transA", 0))
    attrs.push_back(n.named("trans_a", n.b.getBoolAttr(true)));
  if (n.intAttr("transB", 0))
    attrs.push_back(n.named("trans_b", n.b.getBoolAttr(true)));
  return results(n.create1<graph::GemmOp>(operands, attrs));
}

/// Reads kernel_shape/strides/pads/dilations/auto_pad for an input of rank
/// 3 to 5; `kernel` is given for Conv (from the filter). A 1-D window comes
/// back as a 2-D one of unit height.
FailureOr<Window> window(NodeBinder &n, RankedTensorType input,
                         std::optional<SmallVector<int64_t>> kernel) {
  int64_t rank = input.getRank();
  if (rank < 3 || rank > 5)
    return n.error() << "input " << input
                     << " must be 3-D, 4-D or 5-D ([N, C] and 1 to 3 "
                        "spatial dimensions)",
           failure();
  size_t sp = rank - 2;
  Window w;
  w.spatial = sp;
  if (!kernel)
    kernel = n.intsAttr("kernel_shape");
  if (!kernel)
    return n.error() << "missing attribute 'kernel_shape'", failure();
  w.kernel = *kernel;
  w.strides = n.intsAttr("strides").value_or(SmallVector<int64_t>(sp, 1));
  w.dilations = n.intsAttr("dilations").value_or(SmallVector<int64_t>(sp, 1));
  w.pads = n.intsAttr("pads").value_or(SmallVector<int64_t>(2 * sp, 0));
  if (w.kernel.size() != sp || w.strides.size() != sp ||
      w.dilations.size() != sp || w.pads.size() != 2 * sp)
    return n.error() << "kernel_shape, strides, dilations and pads must have "
                     << sp << ", " << sp << ", " << sp << " and " << 2 * sp
                     << " entries for input " << input,
           failure();
  std::string autoPad = n.strAttr("auto_pad", "NOTSET");
  if (autoPad == "VALID") {
    w.pads.assign(2 * sp, 0);
  } else if (autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    for (size_t i = 0; i < sp; ++i) {
      int64_t in = input.getDimSize(2 + i);
      if (w.strides[i] < 1)
        return n.error() << "strides must be >= 1", failure();
      if (w.kernel[i] < 1 || w.dilations[i] < 1)
        return n.error() << "kernel_shape and dilations must be >= 1",
               failure();
      // Attributes come from the model: no step may overflow int64.
      int64_t out = in ? (in - 1) / w.strides[i] + 1 : 0;
      int64_t lastStart = (out - 1) * w.strides[i] - in; // within [-s, 0)
      std::optional<int64_t> span =
          shape::dilatedSpan(w.kernel[i], w.dilations[i]);
      int64_t total;
      if (!span || llvm::AddOverflow(*span, lastStart, total))
        return n.error() << "the window of kernel_shape " << w.kernel[i]
                         << " dilated by " << w.dilations[i]
                         << " in spatial dimension " << i
                         << " is not a size int64 can count",
               failure();
      total = std::max<int64_t>(0, total);
      int64_t small = total / 2, big = total - small;
      w.pads[i] = autoPad == "SAME_UPPER" ? small : big;
      w.pads[i + sp] = autoPad == "SAME_UPPER" ? big : small;
    }
  } else if (autoPad != "NOTSET") {
    return n.error() << "auto_pad must be NOTSET, SAME_UPPER, SAME_LOWER or "
                        "VALID, got \""
                     << autoPad << "\"",
           failure();
  }
  // The 2-D ops check their own windows; a 3-D window's depth goes into
  // index arithmetic first (Volume.cpp).
  if (sp == 3) {
    for (int64_t p : w.pads)
      if (p < 0 || p > (int64_t(1) << 40)) {
        auto diag = n.error() << "pads [";
        llvm::interleaveComma(w.pads, diag);
        return diag << "] must be between 0 and 2^40", failure();
      }
    for (size_t i = 0; i < sp; ++i)
      if (w.kernel[i] < 1 || w.strides[i] < 1 || w.dilations[i] < 1)
        return n.error() << "kernel_shape, strides and dilations must be >= 1 "
                            "(spatial dimension "
                         << i << ": " << w.kernel[i] << ", " << w.strides[i]
                         << ", " << w.dilations[i] << ")",
               failure();
  }
  if (sp == 1) {
    w.kernel.insert(w.kernel.begin(), 1);
    w.strides.insert(w.strides.begin(), 1);
    w.dilations.insert(w.dilations.begin(), 1);
    w.pads = {0, w.pads[0], 0, w.pads[1]};
  }
  return w;
}

/// [N, C, W] -> [N, C, 1, W] for 1-D windows.
Value to2d(NodeBinder &n, Value v) {
  auto t = n.typeOf(v);
  return n.reshape(v, {t.getDimSize(0), t.getDimSize(1), 1, t.getDimSize(2)});
}

FailureOr<Value> from2d(NodeBinder &n, FailureOr<Value> v, bool oneD) {
  if (failed(v) || !oneD)
    return v;
  auto t = n.typeOf(*v);
  return n.reshape(*v, {t.getDimSize(0), t.getDimSize(1), t.getDimSize(3)});
}

/// `pool2d` applied to `x` over `win`: a 1-D input as 2-D of unit height,
/// a 3-D one as two 2-D pools.
FailureOr<Value> pooled(NodeBinder &n, Value x, const Window &win,
                        Pool2d pool2d) {
  if (win.spatial == 3)
    return pool3d(n, x, win, pool2d);
  bool oneD = win.spatial == 1;
  return from2d(n, pool2d(oneD ? to2d(n, x) : x, win), oneD);
}

FailureOr<SmallVector<Value>> convertConv(NodeBinder &n) {
  auto x = n.required(0, "X"), w = n.required(1, "W");
  if (failed(x) || failed(w))
    return failure();
  auto filter = n.typeOf(*w), inType = n.typeOf(*x);
  if (filter.getRank() != inType.getRank())
    return n.error() << "input X " << inType << " (rank " << inType.getRank()
                     << ") and filter W " << filter << " (rank "
                     << filter.getRank() << ") must have the same rank",
           failure();
  auto win = window(n, n.typeOf(*x),
                    SmallVector<int64_t>(filter.getShape().drop_front(2)));
  if (failed(win))
    return failure();
  if (auto k = n.intsAttr("kernel_shape"))
    if (ArrayRef<int64_t>(*k) != filter.getShape().drop_front(2))
      return n.error() << "kernel_shape does not match the filter " << filter,
             failure();
  if (win->spatial == 3)
    return results(conv3d(n, *x, *w, n.input(2), *win, n.intAttr("group", 1)));
  bool oneD = win->spatial == 1;
  Value input = oneD ? to2d(n, *x) : *x;
  Value weight = oneD ? to2d(n, *w) : *w;
  SmallVector<Value> operands{input, weight};
  if (Value bias = n.input(2))
    operands.push_back(bias);
  auto y = n.create1<graph::Conv2dOp>(
      operands, {n.named("strides", n.b.getDenseI64ArrayAttr(win->strides)),
                 n.named("pads", n.b.getDenseI64ArrayAttr(win->pads)),
                 n.named("dilations", n.b.getDenseI64ArrayAttr(win->dilations)),
                 n.named("group", n.b.getI64IntegerAttr(n.intAttr("group", 1)))});
  return results(from2d(n, y, oneD));
}

/// MaxPool's Indices output for a 2-D window over x [N, C, H, W] whose
/// pooled result has [OH, OW]: each window's elements gathered (a -inf
/// stands for the padding), arg_max over them gives the tap k, and a
/// constant table maps (position, tap) to the flat index in a plane,
/// h W + w (or h + w H with `columnMajor`, storage_order 1); a padding tap
/// maps to the window's first inside one, which holds the maximum when a
/// window's inside is all -inf and the padding ties with it. Then the
/// plane's offset, (n C + c) H W.
FailureOr<Value> maxPoolIndices(NodeBinder &n, Value x, const Window &win,
                                int64_t oh, int64_t ow, bool columnMajor) {
  auto xt = n.typeOf(x);
  int64_t batch = xt.getDimSize(0), channels = xt.getDimSize(1),
          h = xt.getDimSize(2), w = xt.getDimSize(3);
  int64_t kh = win.kernel[0], kw = win.kernel[1], taps = kh * kw;
  SmallVector<int64_t> at, flat, rowStarts;
  for (int64_t i = 0; i < oh; ++i)
    for (int64_t j = 0; j < ow; ++j) {
      int64_t r0 = i * win.strides[0] - win.pads[0],
              c0 = j * win.strides[1] - win.pads[1];
      size_t start = flat.size();
      int64_t first = -1;
      for (int64_t a = 0; a < kh; ++a)
        for (int64_t b = 0; b < kw; ++b) {
          int64_t r = r0 + a * win.dilations[0], c = c0 + b * win.dilations[1];
          bool inside = r >= 0 && r < h && c >= 0 && c < w;
          at.push_back(inside ? r * w + c : h * w);
          int64_t f = inside ? (columnMajor ? r + c * h : r * w + c) : -1;
          if (inside && first < 0)
            first = f;
          flat.push_back(f);
        }
      // Every window ONNX's output size makes holds an element of the
      // input; 0 keeps one that did not in range.
      first = std::max<int64_t>(first, 0);
      for (size_t t = start; t < flat.size(); ++t)
        if (flat[t] < 0)
          flat[t] = first;
      rowStarts.push_back((i * ow + j) * taps);
    }
  auto windows = gatherAxisOr(n, n.reshape(x, {batch, channels, h * w}), 2, at,
                              -std::numeric_limits<double>::infinity());
  if (failed(windows))
    return failure();
  auto tap = n.create1<graph::ArgMaxOp>(
      n.reshape(*windows, {batch, channels, oh, ow, taps}),
      {n.named("axis", n.b.getI64IntegerAttr(4)),
       n.named("keepdims", n.b.getBoolAttr(false))});
  if (failed(tap))
    return failure();
  auto i64 = n.b.getI64Type();
  auto table = [&](ArrayRef<int64_t> shape, ArrayRef<int64_t> values) {
    return n.constant(
        DenseElementsAttr::get(RankedTensorType::get(shape, i64), values));
  };
  // Row (position * taps + tap) of the table.
  auto row = n.create1<graph::AddOp>({*tap, table({1, 1, oh, ow}, rowStarts)});
  if (failed(row))
    return failure();
  auto inPlane =
      n.create1<graph::GatherOp>({table({oh * ow * taps}, flat), *row},
                                 {n.named("axis", n.b.getI64IntegerAttr(0))});
  if (failed(inPlane))
    return failure();
  SmallVector<int64_t> planes;
  for (int64_t p = 0; p < batch * channels; ++p)
    planes.push_back(p * h * w);
  return n.create1<graph::AddOp>(
      {*inPlane, table({batch, channels, 1, 1}, planes)});
}

FailureOr<SmallVector<Value>> convertMaxPool(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  auto win = window(n, n.typeOf(*x), std::nullopt);
  if (failed(win))
    return failure();
  bool ceil = n.intAttr("ceil_mode", 0);
  auto pool = [&](Value input, const Window &w) {
    return n.create1<graph::MaxPool2dOp>(
        input, {n.named("kernel_shape", n.b.getDenseI64ArrayAttr(w.kernel)),
                n.named("strides", n.b.getDenseI64ArrayAttr(w.strides)),
                n.named("pads", n.b.getDenseI64ArrayAttr(w.pads)),
                n.named("dilations", n.b.getDenseI64ArrayAttr(w.dilations)),
                n.named("ceil_mode", n.b.getBoolAttr(ceil))});
  };
  FailureOr<Value> y = pooled(n, *x, *win, pool);
  if (failed(y) || !n.outputUsed(1))
    return results(y);
  if (win->spatial == 3)
    return n.error() << "the Indices output of a 3-D MaxPool is not "
                        "supported",
           failure();
  // Indices count the elements of X, so a 1-D input's are those of its
  // unit-height 2-D view.
  bool oneD = win->spatial == 1;
  auto yt = n.typeOf(*y);
  int64_t oh = oneD ? 1 : yt.getDimSize(2), ow = yt.getDimSize(oneD ? 2 : 3);
  FailureOr<Value> indices =
      maxPoolIndices(n, oneD ? to2d(n, *x) : *x, *win, oh, ow,
                     n.intAttr("storage_order", 0) != 0);
  if (failed(indices))
    return failure();
  return SmallVector<Value>{*y, n.reshape(*indices, yt.getShape())};
}

FailureOr<SmallVector<Value>> convertAveragePool(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  auto win = window(n, n.typeOf(*x), std::nullopt);
  if (failed(win))
    return failure();
  if (llvm::any_of(win->dilations, [](int64_t d) { return d != 1; }))
    return n.error() << "dilated average pooling is not supported", failure();
  bool ceil = n.intAttr("ceil_mode", 0),
       includePad = n.intAttr("count_include_pad", 0);
  auto pool = [&](Value input, const Window &w) {
    return n.create1<graph::AvgPool2dOp>(
        input, {n.named("kernel_shape", n.b.getDenseI64ArrayAttr(w.kernel)),
                n.named("strides", n.b.getDenseI64ArrayAttr(w.strides)),
                n.named("pads", n.b.getDenseI64ArrayAttr(w.pads)),
                n.named("ceil_mode", n.b.getBoolAttr(ceil)),
                n.named("count_include_pad", n.b.getBoolAttr(includePad))});
  };
  return results(pooled(n, *x, *win, pool));
}

FailureOr<SmallVector<Value>> convertGlobalAveragePool(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  return results(n.create1<graph::GlobalAvgPoolOp>(*x));
}

} // namespace

void populateContractionHandlers(HandlerTable &t) {
  addHandler(t, "MatMul", kMinOpset, kMaxOpset, convertMatMul);
  addHandler(t, "Gemm", kMinOpset, kMaxOpset, convertGemm);
  addHandler(t, "Conv", kMinOpset, kMaxOpset, convertConv);
  addHandler(t, "MaxPool", kMinOpset, kMaxOpset, convertMaxPool);
  addHandler(t, "AveragePool", kMinOpset, kMaxOpset, convertAveragePool);
  // Unchanged since opset 1 (ONNX still tests it at opset 1).
  addHandler(t, "GlobalAveragePool", 1, kMaxOpset, convertGlobalAveragePool);
}

} // namespace ampc::onnx_to_graph
