//===- Shape.cpp - ONNX data movement, shapes and constants -> graph ------===//
//
// Reshape, Flatten, Squeeze and Unsqueeze become graph.reshape; Split
// becomes slices; Shape and Constant become constants. Where ONNX takes a
// shape, axes or bounds as an input (opset 13 and later) it must be a
// compile-time constant: ampc compiles static shapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// Axes from the attribute (before opset 13) or the input at `index`.
FailureOr<std::optional<SmallVector<int64_t>>> axesOf(NodeBinder &n,
                                                      unsigned index) {
  if (n.opset() < 13)
    return n.intsAttr("axes");
  if (!n.input(index))
    return std::optional<SmallVector<int64_t>>();
  auto a = n.constInts(index, "axes");
  if (failed(a))
    return failure();
  return std::optional<SmallVector<int64_t>>(*a);
}

/// "[2, -1, 0]": a Reshape shape input as given (shape::str writes the
/// negative entries as ?).
std::string entries(ArrayRef<int64_t> values) {
  std::string s = "[";
  for (auto [i, v] : llvm::enumerate(values))
    s += (i ? ", " : "") + std::to_string(v);
  return s + "]";
}

FailureOr<SmallVector<Value>> convertReshape(NodeBinder &n) {
  auto x = n.required(0, "data");
  auto spec = n.constInts(1, "shape");
  if (failed(x) || failed(spec))
    return failure();
  // The 0 (copy) entries below are replaced in *spec; messages quote this.
  std::string given = entries(*spec);
  auto in = n.typeOf(*x);
  bool allowZero = n.opset() >= 14 && n.intAttr("allowzero", 0);
  SmallVector<int64_t> shape;
  int64_t inferred = -1, nonZero = 1;
  bool zero = false;
  for (auto [i, d] : llvm::enumerate(*spec)) {
    if (d == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= in.getRank())
        return n.error() << "shape entry " << i
                         << " is 0 (copy) but the input " << in
                         << " has no such dimension",
               failure();
      d = in.getDimSize(i);
    }
    if (d == -1) {
      if (inferred >= 0)
        return n.error() << "shape " << given << " has more than one -1",
               failure();
      inferred = i;
      shape.push_back(-1);
      continue;
    }
    if (d < 0)
      return n.error() << "shape " << given << " has a negative entry " << d,
             failure();
    shape.push_back(d);
    // Zero entries are left out of the overflow test, as everywhere
    // (TensorSize.h): no partial product of the shape may overflow.
    if (d == 0)
      zero = true;
    else if (llvm::MulOverflow(nonZero, d, nonZero))
      return n.error() << "shape " << given
                       << " has more elements than int64 can count",
             failure();
  }
  int64_t known = zero ? 0 : nonZero;
  int64_t total = in.getNumElements();
  if (inferred >= 0) {
    if (known == 0 || total % known != 0)
      return n.error() << "cannot reshape " << in << " to " << given << ": "
                       << total << " elements do not divide into " << known,
             failure();
    shape[inferred] = total / known;
  } else if (known != total) {
    return n.error() << "cannot reshape " << in << " (" << total
                     << " elements) to " << shape::str(shape) << " (" << known
                     << " elements)",
           failure();
  }
  return SmallVector<Value>{n.reshape(*x, shape)};
}

FailureOr<SmallVector<Value>> convertFlatten(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  auto in = n.typeOf(*x);
  int64_t rank = in.getRank();
  auto axisOr = n.axis(n.intAttr("axis", 1), rank, /*inclusive=*/true);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= in.getDimSize(i);
  return SmallVector<Value>{n.reshape(*x, {outer, inner})};
}

FailureOr<SmallVector<Value>> convertSqueeze(NodeBinder &n) {
  auto x = n.required(0, "data");
  auto axesOr = axesOf(n, 1);
  if (failed(x) || failed(axesOr))
    return failure();
  auto in = n.typeOf(*x);
  SmallVector<int64_t> axes;
  if (*axesOr) {
    axes = **axesOr;
    if (failed(n.axes(axes, in.getRank())))
      return failure();
    for (int64_t a : axes)
      if (in.getDimSize(a) != 1)
        return n.error() << "cannot squeeze axis " << a << " of " << in
                         << ": its size is " << in.getDimSize(a) << ", not 1",
               failure();
  } else {
    for (int64_t i = 0; i < in.getRank(); ++i)
      if (in.getDimSize(i) == 1)
        axes.push_back(i);
  }
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < in.getRank(); ++i)
    if (!llvm::is_contained(axes, i))
      shape.push_back(in.getDimSize(i));
  return SmallVector<Value>{n.reshape(*x, shape)};
}

FailureOr<SmallVector<Value>> convertUnsqueeze(NodeBinder &n) {
  auto x = n.required(0, "data");
  auto axesOr = axesOf(n, 1);
  if (failed(x) || failed(axesOr))
    return failure();
  if (!*axesOr)
    return n.error() << "missing axes", failure();
  auto in = n.typeOf(*x);
  SmallVector<int64_t> axes = **axesOr;
  int64_t outRank = in.getRank() + axes.size();
  if (failed(n.axes(axes, outRank)))
    return failure();
  SmallVector<int64_t> shape;
  auto src = in.getShape().begin();
  for (int64_t i = 0; i < outRank; ++i)
    shape.push_back(llvm::is_contained(axes, i) ? 1 : *src++);
  return SmallVector<Value>{n.reshape(*x, shape)};
}

FailureOr<SmallVector<Value>> convertTranspose(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  int64_t rank = n.typeOf(*x).getRank();
  SmallVector<int64_t> perm;
  if (auto p = n.intsAttr("perm"))
    perm = *p;
  else
    for (int64_t i = rank - 1; i >= 0; --i)
      perm.push_back(i);
  return results(n.create1<graph::TransposeOp>(
      *x, {n.named("perm", n.b.getDenseI64ArrayAttr(perm))}));
}

FailureOr<SmallVector<Value>> convertConcat(NodeBinder &n) {
  SmallVector<Value> inputs;
  for (unsigned i = 0; i < n.numInputs(); ++i)
    if (Value v = n.input(i))
      inputs.push_back(v);
  if (inputs.empty())
    return n.error() << "has no inputs", failure();
  std::optional<int64_t> axis = n.intAttr("axis");
  if (!axis)
    return n.error() << "missing attribute 'axis'", failure();
  auto a = n.axis(*axis, n.typeOf(inputs[0]).getRank());
  if (failed(a))
    return failure();
  return results(n.create1<graph::ConcatOp>(
      inputs, {n.named("axis", n.b.getI64IntegerAttr(*a))}));
}

FailureOr<SmallVector<Value>> convertSplit(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  auto in = n.typeOf(*x);
  auto axisOr = n.axis(n.intAttr("axis", 0), in.getRank());
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  int64_t dim = in.getDimSize(axis);
  unsigned parts = n.numOutputs();
  SmallVector<int64_t> sizes;
  if (n.opset() < 13) {
    if (auto s = n.intsAttr("split"))
      sizes = *s;
  } else if (n.input(1)) {
    auto s = n.constInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  }
  if (n.opset() >= 18 && !n.input(1)) {
    // From opset 18 `num_outputs` gives the count: parts of ceil(dim / N),
    // the last one smaller when N does not divide the dimension.
    std::optional<int64_t> count = n.intAttr("num_outputs");
    if (!count)
      return n.error() << "needs the split sizes (input #1) or the attribute "
                          "num_outputs",
             failure();
    if (*count != static_cast<int64_t>(parts) || parts == 0)
      return n.error() << "num_outputs is " << *count << " but the node has "
                       << parts << " outputs",
             failure();
    int64_t chunk = llvm::divideCeil(dim, static_cast<int64_t>(parts));
    int64_t last = dim - chunk * (parts - 1);
    if (last < 0)
      return n.error() << "dimension " << axis << " of " << in
                       << " does not split into " << parts << " parts of "
                       << chunk << " and a smaller last one",
             failure();
    sizes.assign(parts - 1, chunk);
    sizes.push_back(last);
  } else if (n.input(1) && n.attr("num_outputs")) {
    return n.error() << "gives both the split sizes (input #1) and "
                        "num_outputs; ONNX allows one",
           failure();
  }
  if (sizes.empty()) {
    if (parts == 0 || dim % parts != 0)
      return n.error() << "dimension " << axis << " of " << in
                       << " does not split evenly into " << parts << " outputs",
             failure();
    sizes.assign(parts, dim / parts);
  }
  int64_t total = 0;
  bool overflow = false;
  for (int64_t s : sizes) {
    if (s < 0)
      return n.error() << "split sizes must be >= 0", failure();
    // A sum past int64 must not wrap around to the dimension.
    overflow |= llvm::AddOverflow(total, s, total);
  }
  if (sizes.size() != parts || overflow || total != dim)
    return n.error() << "split sizes " << shape::str(sizes) << " must give "
                     << parts << " parts summing to " << dim,
           failure();
  SmallVector<Value> outs;
  int64_t start = 0;
  for (int64_t s : sizes) {
    auto part = sliceAxis(n, *x, axis, start, start + s);
    if (failed(part))
      return failure();
    outs.push_back(*part);
    start += s;
  }
  return outs;
}

FailureOr<SmallVector<Value>> convertSlice(NodeBinder &n) {
  auto x = n.required(0, "data");
  auto starts = n.constInts(1, "starts"), ends = n.constInts(2, "ends");
  if (failed(x) || failed(starts) || failed(ends))
    return failure();
  auto in = n.typeOf(*x);
  int64_t rank = in.getRank();
  SmallVector<int64_t> axes, steps;
  if (n.input(3)) {
    auto a = n.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    for (int64_t i = 0; i < static_cast<int64_t>(starts->size()); ++i)
      axes.push_back(i);
  }
  if (n.input(4)) {
    auto s = n.constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (ends->size() != starts->size() || axes.size() != starts->size() ||
      steps.size() != starts->size())
    return n.error() << "starts, ends, axes and steps must have the same "
                        "length",
           failure();
  if (failed(n.axes(axes, rank)))
    return failure();
  SmallVector<int64_t> s(rank, 0), e(in.getShape()), st(rank, 1);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    int64_t d = in.getDimSize(axis), step = steps[i];
    if (step == 0)
      return n.error() << "step of axis " << axis << " is 0", failure();
    int64_t start = (*starts)[i], end = (*ends)[i];
    if (start < 0)
      start += d;
    if (end < 0)
      end += d;
    // ONNX clamps: [0, d] for positive steps, [-1, d-1] for negative ones.
    if (step > 0) {
      start = std::clamp<int64_t>(start, 0, d);
      end = std::clamp<int64_t>(end, 0, d);
      end = std::max(end, start);
    } else {
      start = std::clamp<int64_t>(start, -1, d - 1);
      end = std::clamp<int64_t>(end, -1, d - 1);
      end = std::min(end, start);
    }
    s[axis] = start;
    e[axis] = end;
    st[axis] = step;
  }
  return results(n.create1<graph::SliceOp>(
      *x, {n.named("starts", n.b.getDenseI64ArrayAttr(s)),
           n.named("ends", n.b.getDenseI64ArrayAttr(e)),
           n.named("steps", n.b.getDenseI64ArrayAttr(st))}));
}

FailureOr<SmallVector<Value>> convertGather(NodeBinder &n) {
  auto data = n.required(0, "data"), indices = n.required(1, "indices");
  if (failed(data) || failed(indices))
    return failure();
  auto axis = n.axis(n.intAttr("axis", 0), n.typeOf(*data).getRank());
  if (failed(axis))
    return failure();
  return results(n.create1<graph::GatherOp>(
      {*data, *indices}, {n.named("axis", n.b.getI64IntegerAttr(*axis))}));
}

FailureOr<SmallVector<Value>> convertExpand(NodeBinder &n) {
  auto x = n.required(0, "input");
  auto spec = n.constInts(1, "shape");
  if (failed(x) || failed(spec))
    return failure();
  std::string error;
  auto out = shape::broadcast(n.typeOf(*x).getShape(), *spec, error);
  if (!out)
    return n.error() << error, failure();
  if (ArrayRef<int64_t>(*out) == n.typeOf(*x).getShape())
    return SmallVector<Value>{*x};
  auto op = n.createTyped<graph::BroadcastToOp>(
      n.typeOf(*x).clone(ArrayRef<int64_t>(*out)), *x);
  if (failed(op))
    return failure();
  return SmallVector<Value>{n.foldResult(*op)};
}

/// Size: the element count, a constant.
FailureOr<SmallVector<Value>> convertSize(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  auto type = RankedTensorType::get({}, n.b.getI64Type());
  return SmallVector<Value>{n.constant(DenseElementsAttr::get(
      type, n.b.getI64IntegerAttr(n.typeOf(*x).getNumElements())))};
}

FailureOr<SmallVector<Value>> convertShape(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  ArrayRef<int64_t> dims = n.typeOf(*x).getShape();
  int64_t rank = dims.size();
  int64_t start = n.opset() >= 15 ? n.intAttr("start", 0) : 0;
  int64_t end = n.opset() >= 15 ? n.intAttr("end", rank) : rank;
  if (start < 0)
    start += rank;
  if (end < 0)
    end += rank;
  start = std::clamp<int64_t>(start, 0, rank);
  end = std::clamp<int64_t>(end, start, rank);
  SmallVector<int64_t> values(dims.begin() + start, dims.begin() + end);
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())},
                                    n.b.getI64Type());
  return SmallVector<Value>{
      n.constant(DenseIntElementsAttr::get(type, ArrayRef<int64_t>(values)))};
}

FailureOr<SmallVector<Value>> convertConstant(NodeBinder &n) {
  Builder &b = n.b;
  if (auto v = dyn_cast_or_null<ElementsAttr>(n.attr("value")))
    return SmallVector<Value>{n.constant(v)};
  if (auto f = dyn_cast_or_null<FloatAttr>(n.attr("value_float")))
    return SmallVector<Value>{n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, b.getF32Type()),
        static_cast<float>(f.getValueAsDouble())))};
  if (auto i = dyn_cast_or_null<IntegerAttr>(n.attr("value_int")))
    return SmallVector<Value>{n.constant(DenseElementsAttr::get(
        RankedTensorType::get({}, b.getI64Type()), i.getInt()))};
  if (auto fs = dyn_cast_or_null<DenseF32ArrayAttr>(n.attr("value_floats")))
    return SmallVector<Value>{n.constant(DenseElementsAttr::get(
        RankedTensorType::get({fs.size()}, b.getF32Type()), fs.asArrayRef()))};
  if (auto is = dyn_cast_or_null<DenseI64ArrayAttr>(n.attr("value_ints")))
    return SmallVector<Value>{n.constant(DenseElementsAttr::get(
        RankedTensorType::get({is.size()}, b.getI64Type()), is.asArrayRef()))};
  return n.error() << "needs one of the attributes value, value_float, "
                      "value_floats, value_int, value_ints (string and "
                      "sparse constants are not supported)",
         failure();
}

} // namespace

void populateShapeHandlers(HandlerTable &t) {
  addHandler(t, "Reshape", kMinOpset, kMaxOpset, convertReshape);
  addHandler(t, "Flatten", kMinOpset, kMaxOpset, convertFlatten);
  addHandler(t, "Squeeze", kMinOpset, kMaxOpset, convertSqueeze);
  addHandler(t, "Unsqueeze", kMinOpset, kMaxOpset, convertUnsqueeze);
  addHandler(t, "Transpose", kMinOpset, kMaxOpset, convertTranspose);
  addHandler(t, "Concat", kMinOpset, kMaxOpset, convertConcat);
  addHandler(t, "Split", kMinOpset, kMaxOpset, convertSplit);
  addHandler(t, "Slice", kMinOpset, kMaxOpset, convertSlice);
  addHandler(t, "Gather", kMinOpset, kMaxOpset, convertGather);
  addHandler(t, "Expand", kMinOpset, kMaxOpset, convertExpand);
  addHandler(t, "Shape", kMinOpset, kMaxOpset, convertShape);
  addHandler(t, "Size", kMinOpset, kMaxOpset, convertSize);
  addHandler(t, "Constant", kMinOpset, kMaxOpset, convertConstant);
}

} // namespace ampc::onnx_to_graph
