//===- GraphFold.cpp - graph ops on small constants, at compile time ------===//
//
// Shapes are static, so the shape arithmetic that exporters emit (Shape,
// Gather, Concat, Reshape on i64) folds away at compile time. Only small
// tensors fold (kMaxFoldElements); large ones are runtime data.
//
// Float arithmetic folds too where both operands are small constants (the
// attention scale a PyTorch export computes as Pow(head_dim, -0.5) from the
// input's shape), computed as the CPU kernels compute it: f16 and bf16 in
// f32, rounded to the element type once, f32 in f32, f64 in f64. (CUDA's
// powf may differ from the host's by an ulp; the folded value is the
// host's on both backends.)
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/GraphOps.h"
#include "dialects/Graph/ShapeInference.h"
#include "dialects/Graph/VerifyHelpers.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>

using namespace mlir;
using namespace ampc::graph;
using namespace ampc::graph::detail;
using ampc::shape::unravel;

namespace {
constexpr int64_t kMaxFoldElements = 4096;

std::optional<SmallVector<int64_t>> foldableInts(Attribute a) {
  auto d = dyn_cast_or_null<DenseIntElementsAttr>(a);
  if (!d || d.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  SmallVector<int64_t> v;
  for (const APInt &x : d.getValues<APInt>())
    v.push_back(x.getBitWidth() == 1 ? x.getZExtValue() : x.getSExtValue());
  return v;
}

/// The values as an attribute of `type`, or null if one does not fit.
Attribute intsAttr(Type type, ArrayRef<int64_t> values) {
  auto t = cast<ShapedType>(type);
  if (!t.getElementType().isSignlessInteger())
    return {};
  unsigned w = t.getElementTypeBitWidth();
  SmallVector<APInt> ap;
  for (int64_t v : values) {
    if (w == 1) {
      ap.push_back(APInt(1, v != 0));
      continue;
    }
    if (w < 64 &&
        (v < -(int64_t(1) << (w - 1)) || v >= (int64_t(1) << (w - 1))))
      return {};
    ap.push_back(APInt(w, static_cast<uint64_t>(v), /*isSigned=*/true,
                       /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(t, ap);
}

int64_t ravel(ArrayRef<int64_t> idx, ArrayRef<int64_t> shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + idx[i];
  return flat;
}

/// Element of a right-aligned broadcast operand at output index `idx`.
template <typename T>
T broadcastAt(ArrayRef<T> values, ArrayRef<int64_t> shape,
              ArrayRef<int64_t> idx) {
  size_t off = idx.size() - shape.size();
  SmallVector<int64_t> in(shape.size());
  for (size_t i = 0; i < shape.size(); ++i)
    in[i] = shape[i] == 1 ? 0 : idx[off + i];
  return values[ravel(in, shape)];
}

/// The elements of a small float constant, widened (exactly) to double.
std::optional<SmallVector<double>> foldableFloats(Attribute a) {
  auto d = dyn_cast_or_null<DenseFPElementsAttr>(a);
  if (!d || d.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  SmallVector<double> v;
  for (APFloat x : d.getValues<APFloat>()) {
    bool lost;
    x.convert(APFloat::IEEEdouble(), APFloat::rmNearestTiesToEven, &lost);
    v.push_back(x.convertToDouble());
  }
  return v;
}

/// `values` as a constant of `type` (a float element type), each rounded
/// once to it, to nearest even.
Attribute floatsAttr(ShapedType type, ArrayRef<double> values) {
  auto elem = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> out;
  for (double v : values) {
    APFloat x(v);
    bool lost;
    x.convert(elem.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    out.push_back(x);
  }
  return DenseElementsAttr::get(type, out);
}

/// fn(l, r) for each element of `op`'s result, its two operands `lhs` and
/// `rhs` broadcast numpy-style; none when fn gives none for one, or when
/// the result is large (broadcasting two small operands can make one).
template <typename R, typename T, typename Fn>
std::optional<SmallVector<R>> broadcastElements(Operation *op, ArrayRef<T> lhs,
                                                ArrayRef<T> rhs, Fn fn) {
  auto outType = cast<ShapedType>(op->getResult(0).getType());
  if (outType.getNumElements() > kMaxFoldElements)
    return std::nullopt;
  ArrayRef<int64_t> ls = shapeOf(op->getOperand(0)),
                    rs = shapeOf(op->getOperand(1));
  SmallVector<R> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    std::optional<R> v =
        fn(broadcastAt<T>(lhs, ls, idx), broadcastAt<T>(rhs, rs, idx));
    if (!v)
      return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

/// fn(lhs, rhs) of two small float constants as the runtime computes it:
/// in double for f64, in float otherwise, the result rounded once to the
/// element type.
template <typename Fn>
OpFoldResult foldBinaryFloat(Operation *op, Attribute lhsAttr,
                             Attribute rhsAttr, Fn fn) {
  auto outType = cast<ShapedType>(op->getResult(0).getType());
  auto elem = dyn_cast<FloatType>(outType.getElementType());
  auto lhs = foldableFloats(lhsAttr), rhs = foldableFloats(rhsAttr);
  if (!elem || !lhs || !rhs)
    return {};
  auto values = broadcastElements<double, double>(
      op, *lhs, *rhs, [&](double x, double y) -> std::optional<double> {
        if (elem.isF64())
          return fn(x, y);
        return static_cast<double>(
            fn(static_cast<float>(x), static_cast<float>(y)));
      });
  if (!values)
    return {};
  return floatsAttr(outType, *values);
}

template <typename Fn>
OpFoldResult foldBinary(Operation *op, Attribute lhsAttr, Attribute rhsAttr,
                        Fn fn) {
  auto lhs = foldableInts(lhsAttr), rhs = foldableInts(rhsAttr);
  if (!lhs || !rhs)
    return {};
  auto values = broadcastElements<int64_t, int64_t>(op, *lhs, *rhs, fn);
  if (!values)
    return {};
  return intsAttr(op->getResult(0).getType(), *values);
}
} // namespace

/// x op y, or std::nullopt when it overflows int64 (LLVM's *Overflow
/// helpers return non-zero on overflow).
template <int64_t (*Op)(int64_t, int64_t, int64_t &)>
static std::optional<int64_t> checked(int64_t x, int64_t y) {
  int64_t r;
  if (Op(x, y, r))
    return std::nullopt;
  return r;
}

OpFoldResult NegOp::fold(FoldAdaptor a) {
  // Small integer constants only: shapes and axes computed in the graph.
  auto values = foldableInts(a.getInput());
  if (!values || isa<FloatType>(getElementTypeOrSelf(getType())))
    return {};
  SmallVector<int64_t> out;
  for (int64_t v : *values) {
    if (v == INT64_MIN)
      return {};
    out.push_back(-v);
  }
  return intsAttr(getType(), out);
}

OpFoldResult AddOp::fold(FoldAdaptor a) {
  if (isa<FloatType>(getElementTypeOrSelf(getType())))
    return foldBinaryFloat(*this, a.getLhs(), a.getRhs(),
                           [](auto x, auto y) { return x + y; });
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::AddOverflow<int64_t>>);
}
OpFoldResult SubOp::fold(FoldAdaptor a) {
  if (isa<FloatType>(getElementTypeOrSelf(getType())))
    return foldBinaryFloat(*this, a.getLhs(), a.getRhs(),
                           [](auto x, auto y) { return x - y; });
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::SubOverflow<int64_t>>);
}
OpFoldResult MulOp::fold(FoldAdaptor a) {
  if (isa<FloatType>(getElementTypeOrSelf(getType())))
    return foldBinaryFloat(*this, a.getLhs(), a.getRhs(),
                           [](auto x, auto y) { return x * y; });
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    checked<llvm::MulOverflow<int64_t>>);
}
OpFoldResult DivOp::fold(FoldAdaptor a) {
  if (isa<FloatType>(getElementTypeOrSelf(getType())))
    return foldBinaryFloat(*this, a.getLhs(), a.getRhs(),
                           [](auto x, auto y) { return x / y; });
  return foldBinary(*this, a.getLhs(), a.getRhs(),
                    [](int64_t x, int64_t y) -> std::optional<int64_t> {
                      if (y == 0 || (x == INT64_MIN && y == -1))
                        return std::nullopt;
                      return x / y;
                    });
}
OpFoldResult PowOp::fold(FoldAdaptor a) {
  // std::pow's float overload, as the CPU kernel calls it (ScalarMath.h).
  return foldBinaryFloat(*this, a.getLhs(), a.getRhs(),
                         [](auto x, auto y) { return std::pow(x, y); });
}

/// A comparison of two small constants (ints, or floats widened exactly to
/// double, so every float type compares as its kernel does).
template <typename Fn>
static OpFoldResult foldCompare(Operation *op, Attribute lhsAttr,
                                Attribute rhsAttr, Fn fn) {
  std::optional<SmallVector<int64_t>> values;
  auto asBool = [&](auto x, auto y) -> std::optional<int64_t> {
    return fn(x, y) ? 1 : 0;
  };
  if (auto l = foldableInts(lhsAttr), r = foldableInts(rhsAttr); l && r)
    values = broadcastElements<int64_t, int64_t>(op, *l, *r, asBool);
  else if (auto lf = foldableFloats(lhsAttr), rf = foldableFloats(rhsAttr);
           lf && rf)
    values = broadcastElements<int64_t, double>(op, *lf, *rf, asBool);
  if (!values)
    return {};
  return intsAttr(op->getResult(0).getType(), *values);
}

#define AMPC_COMPARE_FOLD(OP, EXPR)                                            \
  OpFoldResult OP::fold(FoldAdaptor a) {                                       \
    return foldCompare(*this, a.getLhs(), a.getRhs(),                          \
                       [](auto x, auto y) { return EXPR; });                   \
  }
AMPC_COMPARE_FOLD(EqualOp, x == y)
AMPC_COMPARE_FOLD(LessOp, x < y)
AMPC_COMPARE_FOLD(LessEqualOp, x <= y)
AMPC_COMPARE_FOLD(GreaterOp, x > y)
AMPC_COMPARE_FOLD(GreaterEqualOp, x >= y)
AMPC_COMPARE_FOLD(LogicalAndOp, x &&y)
AMPC_COMPARE_FOLD(LogicalOrOp, x || y)
AMPC_COMPARE_FOLD(LogicalXorOp, (x != 0) != (y != 0))
#undef AMPC_COMPARE_FOLD

OpFoldResult LogicalNotOp::fold(FoldAdaptor a) {
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  for (int64_t &v : *values)
    v = v == 0;
  return intsAttr(getType(), *values);
}

/// where of a constant condition: one of x and y when the condition is one
/// value and that operand has the result's type; elementwise when all three
/// are small constants (the shape logic of an Expand export).
OpFoldResult WhereOp::fold(FoldAdaptor a) {
  auto cond = foldableInts(a.getCondition());
  if (!cond)
    return {};
  auto outType = cast<ShapedType>(getType());
  bool allTrue = llvm::all_of(*cond, [](int64_t c) { return c != 0; });
  bool allFalse = llvm::all_of(*cond, [](int64_t c) { return c == 0; });
  if (allTrue && getX().getType() == outType)
    return getX();
  if (allFalse && getY().getType() == outType)
    return getY();
  if (outType.getNumElements() > kMaxFoldElements)
    return {};
  auto pick = [&](auto x, auto y) {
    using T = typename std::decay_t<decltype(*x)>::value_type;
    SmallVector<T> out;
    for (int64_t i = 0; i < outType.getNumElements(); ++i) {
      auto idx = unravel(i, outType.getShape());
      out.push_back(broadcastAt<int64_t>(*cond, shapeOf(getCondition()), idx)
                        ? broadcastAt<T>(*x, shapeOf(getX()), idx)
                        : broadcastAt<T>(*y, shapeOf(getY()), idx));
    }
    return out;
  };
  if (auto x = foldableInts(a.getX()), y = foldableInts(a.getY()); x && y)
    return intsAttr(outType, pick(x, y));
  auto elem = dyn_cast<FloatType>(outType.getElementType());
  auto x = foldableFloats(a.getX()), y = foldableFloats(a.getY());
  if (!elem || !x || !y)
    return {};
  // Exact: each value came from a value of this type.
  return floatsAttr(outType, pick(x, y));
}

OpFoldResult ReshapeOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  if (auto d = dyn_cast_or_null<DenseElementsAttr>(a.getInput()))
    if (d.getNumElements() <= kMaxFoldElements)
      return d.reshape(cast<ShapedType>(getType()));
  return {};
}

OpFoldResult CastOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto outType = cast<ShapedType>(getType());
  // A small float constant (an exported epsilon, a clamp bound): rounded
  // once to a float type, or truncated toward zero to an integer as the
  // runtime casts (not folded where that is out of range).
  if (auto floats = foldableFloats(a.getInput())) {
    Type elem = outType.getElementType();
    if (isa<FloatType>(elem))
      return floatsAttr(outType, *floats);
    SmallVector<int64_t> out;
    for (double v : *floats) {
      if (elem.isInteger(1)) {
        out.push_back(v != 0);
        continue;
      }
      if (!std::isfinite(v) || std::fabs(v) >= 0x1p62)
        return {};
      out.push_back(static_cast<int64_t>(v));
    }
    return intsAttr(outType, out);
  }
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  if (auto f = dyn_cast<FloatType>(outType.getElementType())) {
    SmallVector<APFloat> out;
    for (int64_t v : *values) {
      APFloat x(f.getFloatSemantics());
      x.convertFromAPInt(APInt(64, static_cast<uint64_t>(v), true), true,
                         APFloat::rmNearestTiesToEven);
      out.push_back(x);
    }
    return DenseElementsAttr::get(outType, out);
  }
  return intsAttr(outType, *values);
}

OpFoldResult BroadcastToOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType())
    return getInput();
  auto values = foldableInts(a.getInput());
  auto outType = cast<ShapedType>(getType());
  if (!values || outType.getNumElements() > kMaxFoldElements)
    return {};
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i)
    out.push_back(broadcastAt<int64_t>(*values, shapeOf(getInput()),
                                       unravel(i, outType.getShape())));
  return intsAttr(outType, out);
}

/// Small constants of any element type (ints, or floats such as the scales
/// an F.interpolate export concatenates) join element by element.
OpFoldResult ConcatOp::fold(FoldAdaptor a) {
  if (getInputs().size() == 1)
    return getInputs()[0];
  SmallVector<SmallVector<Attribute>> inputs;
  for (Attribute attr : a.getInputs()) {
    auto d = dyn_cast_or_null<DenseElementsAttr>(attr);
    if (!d || d.getNumElements() > kMaxFoldElements)
      return {};
    inputs.emplace_back(d.getValues<Attribute>().begin(),
                        d.getValues<Attribute>().end());
  }
  auto outType = cast<ShapedType>(getType());
  if (outType.getNumElements() > kMaxFoldElements)
    return {}; // many small inputs
  int64_t axis = getAxis();
  SmallVector<Attribute> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    for (auto [k, v] : llvm::enumerate(getInputs())) {
      ArrayRef<int64_t> s = shapeOf(v);
      if (idx[axis] < s[axis]) {
        out.push_back(inputs[k][ravel(idx, s)]);
        break;
      }
      idx[axis] -= s[axis];
    }
  }
  return DenseElementsAttr::get(outType, out);
}

/// PyTorch's F.pad export reverses its pads pairwise through a transpose of
/// a [n, 2] constant.
OpFoldResult TransposeOp::fold(FoldAdaptor a) {
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  auto outType = cast<ShapedType>(getType());
  ArrayRef<int64_t> perm = getPerm(), inShape = shapeOf(getInput());
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    SmallVector<int64_t> src(idx.size());
    for (size_t d = 0; d < idx.size(); ++d)
      src[perm[d]] = idx[d];
    out.push_back((*values)[ravel(src, inShape)]);
  }
  return intsAttr(outType, out);
}

OpFoldResult SliceOp::fold(FoldAdaptor a) {
  if (getInput().getType() == getType() &&
      llvm::all_of(getSteps(), [](int64_t s) { return s == 1; }))
    return getInput();
  auto values = foldableInts(a.getInput());
  if (!values)
    return {};
  auto outType = cast<ShapedType>(getType());
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    for (size_t d = 0; d < idx.size(); ++d)
      idx[d] = getStarts()[d] + idx[d] * getSteps()[d];
    out.push_back((*values)[ravel(idx, shapeOf(getInput()))]);
  }
  return intsAttr(outType, out);
}

OpFoldResult GatherOp::fold(FoldAdaptor a) {
  auto data = foldableInts(a.getData()), indices = foldableInts(a.getIndices());
  auto outType = cast<ShapedType>(getType());
  // Up to 4096 indices, each picking a slice of up to 4096 elements.
  if (!data || !indices || outType.getNumElements() > kMaxFoldElements)
    return {};
  ArrayRef<int64_t> ds = shapeOf(getData());
  int64_t axis = getAxis(), rank = shapeOf(getIndices()).size();
  SmallVector<int64_t> out;
  for (int64_t i = 0; i < outType.getNumElements(); ++i) {
    auto idx = unravel(i, outType.getShape());
    SmallVector<int64_t> ii(idx.begin() + axis, idx.begin() + axis + rank);
    int64_t k = (*indices)[ravel(ii, shapeOf(getIndices()))];
    if (k < 0)
      k += ds[axis];
    if (k < 0 || k >= ds[axis])
      return {}; // out of range: left for the kernel to report
    SmallVector<int64_t> src(idx.begin(), idx.begin() + axis);
    src.push_back(k);
    src.append(idx.begin() + axis + rank, idx.end());
    out.push_back((*data)[ravel(src, ds)]);
  }
  return intsAttr(outType, out);
}
