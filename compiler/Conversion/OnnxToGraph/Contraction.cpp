//===- Contraction.cpp - ONNX MatMul, Gemm, Conv, pooling -> graph --------===//
//
// Contractions and windowed ops. ONNX's auto_pad and default attributes are
// resolved here into explicit strides/pads/dilations; 1-D convolution and
// pooling run as 2-D with a unit height.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "llvm/Support/MathExtras.h"

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

/// The window attributes of Conv and the pools, resolved to 2-D.
struct Window {
  SmallVector<int64_t> kernel, strides, pads, dilations;
  bool oneD = false;
};

/// Reads kernel_shape/strides/pads/dilations/auto_pad for a rank-3 or
/// rank-4 input; `kernel` is given for Conv (from the filter).
FailureOr<Window> window(NodeBinder &n, RankedTensorType input,
                         std::optional<SmallVector<int64_t>> kernel) {
  int64_t rank = input.getRank();
  if (rank != 3 && rank != 4)
    return n.error() << "input " << input
                     << " must be 3-D (1-D spatial) or 4-D (2-D spatial); "
                        "ampc has no 3-D convolution or pooling",
           failure();
  size_t sp = rank - 2;
  Window w;
  w.oneD = sp == 1;
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
  if (w.oneD) {
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
  Value input = win->oneD ? to2d(n, *x) : *x;
  Value weight = win->oneD ? to2d(n, *w) : *w;
  SmallVector<Value> operands{input, weight};
  if (Value bias = n.input(2))
    operands.push_back(bias);
  auto y = n.create1<graph::Conv2dOp>(
      operands, {n.named("strides", n.b.getDenseI64ArrayAttr(win->strides)),
                 n.named("pads", n.b.getDenseI64ArrayAttr(win->pads)),
                 n.named("dilations", n.b.getDenseI64ArrayAttr(win->dilations)),
                 n.named("group", n.b.getI64IntegerAttr(n.intAttr("group", 1)))});
  return results(from2d(n, y, win->oneD));
}

FailureOr<SmallVector<Value>> convertMaxPool(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")) ||
      failed(n.atMostOutputs(1)))
    return failure();
  if (n.intAttr("storage_order", 0) != 0)
    return n.error() << "storage_order = 1 (column-major indices) is not "
                        "supported",
           failure();
  auto win = window(n, n.typeOf(*x), std::nullopt);
  if (failed(win))
    return failure();
  Value input = win->oneD ? to2d(n, *x) : *x;
  auto y = n.create1<graph::MaxPool2dOp>(
      input,
      {n.named("kernel_shape", n.b.getDenseI64ArrayAttr(win->kernel)),
       n.named("strides", n.b.getDenseI64ArrayAttr(win->strides)),
       n.named("pads", n.b.getDenseI64ArrayAttr(win->pads)),
       n.named("dilations", n.b.getDenseI64ArrayAttr(win->dilations)),
       n.named("ceil_mode", n.b.getBoolAttr(n.intAttr("ceil_mode", 0)))});
  return results(from2d(n, y, win->oneD));
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
  Value input = win->oneD ? to2d(n, *x) : *x;
  auto y = n.create1<graph::AvgPool2dOp>(
      input,
      {n.named("kernel_shape", n.b.getDenseI64ArrayAttr(win->kernel)),
       n.named("strides", n.b.getDenseI64ArrayAttr(win->strides)),
       n.named("pads", n.b.getDenseI64ArrayAttr(win->pads)),
       n.named("ceil_mode", n.b.getBoolAttr(n.intAttr("ceil_mode", 0))),
       n.named("count_include_pad",
               n.b.getBoolAttr(n.intAttr("count_include_pad", 0)))});
  return results(from2d(n, y, win->oneD));
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
