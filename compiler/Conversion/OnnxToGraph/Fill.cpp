//===- Fill.cpp - ONNX tensors filled from a shape -> graph ---------------===//
//
// ConstantOfShape and Range make tensors whose every element is known at
// compile time (a causal mask's ones, the positions of a sequence), so they
// become constants; their inputs must be constants, as every shape input.
// Trilu keeps a triangle of its input: a where over a constant mask, so it
// runs as one fusible elementwise op and its gradient is where's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"

#include <algorithm>
#include <cmath>
#include <type_traits>

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

FailureOr<SmallVector<Value>> convertConstantOfShape(NodeBinder &n) {
  auto dims = n.constInts(0, "input");
  if (failed(dims))
    return failure();
  for (int64_t d : *dims)
    if (d < 0)
      return n.error() << "shape " << shape::str(*dims)
                       << " has a negative entry",
             failure();
  // The value: a one-element tensor, float 0 when absent.
  Attribute value = n.b.getF32FloatAttr(0);
  if (Attribute a = n.attr("value")) {
    auto d = dyn_cast<DenseElementsAttr>(a);
    if (!d || d.getNumElements() != 1)
      return n.error() << "attribute 'value' must be a tensor of one element",
             failure();
    value = *d.getValues<Attribute>().begin();
  }
  Type elem = cast<TypedAttr>(value).getType();
  auto type = RankedTensorType::get(*dims, elem);
  if (failed(n.checkSize(type)))
    return failure();
  return SmallVector<Value>{n.constant(DenseElementsAttr::get(type, value))};
}

/// ONNX Range's length, max(ceil((limit - start) / delta), 0), from values
/// of type T (int64 for the integer types, exactly; double for floats);
/// none when it is not finite or too long to make at compile time.
template <typename T>
std::optional<int64_t> rangeLength(T start, T limit, T delta) {
  constexpr double kMaxElements = double(int64_t(1) << 24);
  if constexpr (std::is_floating_point_v<T>) {
    if (delta == 0 || !std::isfinite(start) || !std::isfinite(limit) ||
        !std::isfinite(delta))
      return std::nullopt;
    double count = std::max(std::ceil((limit - start) / delta), 0.0);
    if (count > kMaxElements)
      return std::nullopt;
    return static_cast<int64_t>(count);
  } else {
    // In long double: limit - start may not fit int64.
    if (delta == 0)
      return std::nullopt;
    long double count = std::max<long double>(
        std::ceil((static_cast<long double>(limit) - start) / delta), 0);
    if (count > kMaxElements)
      return std::nullopt;
    return static_cast<int64_t>(count);
  }
}

FailureOr<SmallVector<Value>> convertRange(NodeBinder &n) {
  const char *names[] = {"start", "limit", "delta"};
  Type elem;
  for (unsigned i = 0; i < 3; ++i) {
    auto x = n.required(i, names[i]);
    if (failed(x))
      return failure();
    auto t = n.typeOf(*x);
    if (t.getRank() != 0)
      return n.error() << names[i] << " must be a scalar, got " << t, failure();
    if (i == 0)
      elem = t.getElementType();
    else if (t.getElementType() != elem)
      return n.error() << names[i] << " has type " << t << " but start has "
                       << elem,
             failure();
  }
  if (!elem.isIntOrFloat() || elem.isInteger(1))
    return n.error() << "range of " << elem << " is not supported", failure();
  auto tooLong = [&](auto start, auto limit, auto delta) {
    return n.error() << "range(" << start << ", " << limit << ", " << delta
                     << ") must have a finite length of at most 2^24 "
                        "elements",
           failure();
  };
  if (auto f = dyn_cast<FloatType>(elem)) {
    double v[3];
    for (unsigned i = 0; i < 3; ++i) {
      FailureOr<double> c = n.constScalar(i, names[i]);
      if (failed(c))
        return failure();
      v[i] = *c;
    }
    std::optional<int64_t> len = rangeLength(v[0], v[1], v[2]);
    if (!len)
      return tooLong(v[0], v[1], v[2]);
    auto type = RankedTensorType::get({*len}, elem);
    if (failed(n.checkSize(type)))
      return failure();
    // Each element rounded once from start + i * delta, as numpy's arange.
    SmallVector<APFloat> out;
    for (int64_t i = 0; i < *len; ++i) {
      APFloat x(v[0] + static_cast<double>(i) * v[2]);
      bool lost;
      x.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(x);
    }
    return SmallVector<Value>{n.constant(DenseElementsAttr::get(type, out))};
  }
  int64_t v[3];
  for (unsigned i = 0; i < 3; ++i) {
    auto c = n.constInts(i, names[i]);
    if (failed(c))
      return failure();
    v[i] = (*c)[0];
  }
  std::optional<int64_t> len = rangeLength(v[0], v[1], v[2]);
  if (!len)
    return tooLong(v[0], v[1], v[2]);
  auto type = RankedTensorType::get({*len}, elem);
  if (failed(n.checkSize(type)))
    return failure();
  // Every element lies between start and limit, so it fits the type; the
  // products are taken in uint64, where they wrap instead of overflowing.
  SmallVector<APInt> out;
  unsigned w = elem.getIntOrFloatBitWidth();
  for (int64_t i = 0; i < *len; ++i)
    out.push_back(
        APInt(w,
              static_cast<uint64_t>(v[0]) +
                  static_cast<uint64_t>(i) * static_cast<uint64_t>(v[2]),
              /*isSigned=*/true, /*implicitTrunc=*/true));
  return SmallVector<Value>{n.constant(DenseElementsAttr::get(type, out))};
}

FailureOr<SmallVector<Value>> convertTrilu(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  auto t = n.typeOf(*x);
  if (t.getRank() < 2)
    return n.error() << "input must have rank 2 or more, got " << t, failure();
  int64_t k = 0;
  if (n.input(1)) {
    auto c = n.constInts(1, "k");
    if (failed(c))
      return failure();
    if (c->size() != 1)
      return n.error() << "k must be a scalar", failure();
    // Beyond the matrix's diagonals every k keeps all or nothing.
    k = std::clamp<int64_t>((*c)[0], -(int64_t(1) << 40), int64_t(1) << 40);
  }
  bool upper = n.intAttr("upper", 1) != 0;
  int64_t rows = t.getDimSize(t.getRank() - 2),
          cols = t.getDimSize(t.getRank() - 1);
  // Element (i, j) is kept where j - i >= k (upper) or j - i <= k (lower).
  SmallVector<bool> keep;
  bool all = true;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j) {
      keep.push_back(upper ? j - i >= k : j - i <= k);
      all &= keep.back();
    }
  if (all)
    return SmallVector<Value>{*x};
  auto maskType = RankedTensorType::get({rows, cols}, n.b.getI1Type());
  Value mask = n.constant(DenseElementsAttr::get(maskType, keep));
  Type elem = t.getElementType();
  auto zeroType = RankedTensorType::get({}, elem);
  Attribute zero = isa<FloatType>(elem)
                       ? Attribute(n.b.getFloatAttr(elem, 0))
                       : Attribute(n.b.getIntegerAttr(elem, 0));
  Value z = n.constant(DenseElementsAttr::get(zeroType, zero));
  return results(n.create1<graph::WhereOp>({mask, *x, z}));
}

} // namespace

void populateFillHandlers(HandlerTable &t) {
  addHandler(t, "ConstantOfShape", 11, kMaxOpset, convertConstantOfShape);
  addHandler(t, "Range", 11, kMaxOpset, convertRange);
  addHandler(t, "Trilu", 14, kMaxOpset, convertTrilu);
}

} // namespace ampc::onnx_to_graph
