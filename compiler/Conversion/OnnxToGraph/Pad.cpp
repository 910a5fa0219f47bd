//===- Pad.cpp - ONNX Pad and Tile -> graph -------------------------------===//
//
// Both extend or repeat data along axes, and both are written with existing
// graph ops, so they have gradients and kernels on every backend without
// ops of their own:
// - Pad crops negative pads with a slice, then per axis: constant mode
//   concatenates blocks of the value (a broadcast scalar); edge and reflect
//   gather the input at constant indices (0 0 0 1 2 ... for edge, 2 1 0 1
//   2 ... for reflect), whose gradient sums what each element fed.
// - Tile broadcasts the input over a new dimension before each repeated
//   one and merges the two: [d] tiled r times is [r, d] read as [r * d].
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinAttributes.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// The largest pad on one side: edge and reflect build an index per
/// element of the padded axis at compile time.
constexpr int64_t kMaxPad = int64_t(1) << 24;

FailureOr<SmallVector<Value>> convertPad(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  auto t = n.typeOf(*x);
  int64_t rank = t.getRank();
  std::string mode = n.strAttr("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    return n.error() << "mode '" << mode
                     << "' is not supported (constant, reflect, edge)",
           failure();
  auto given = n.constInts(1, "pads");
  if (failed(given))
    return failure();
  // From opset 18 `axes` (input 3) names the axes `pads` covers; the others
  // are not padded.
  SmallVector<int64_t> axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  if (n.input(3)) {
    auto a = n.constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
    if (failed(n.axes(axes, rank)))
      return failure();
  }
  int64_t count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(given->size()) != 2 * count) {
    auto diag = n.error() << "pads has " << given->size() << " entries; ";
    if (n.input(3))
      diag << "axes names " << count << " axes, which need " << 2 * count;
    else
      diag << "the input " << t << " needs " << 2 * rank;
    return diag << " (a begin and an end per axis)", failure();
  }
  SmallVector<int64_t> pads(2 * rank, 0);
  for (auto [i, a] : llvm::enumerate(axes)) {
    pads[a] = (*given)[i];
    pads[a + rank] = (*given)[i + count];
  }
  double value = 0;
  if (n.input(2)) {
    FailureOr<double> c = n.constScalar(2, "constant_value");
    if (failed(c))
      return failure();
    value = *c;
  }
  // Negative pads crop first.
  SmallVector<int64_t> starts(rank, 0), ends(t.getShape()), steps(rank, 1);
  bool crop = false;
  for (int64_t a = 0; a < rank; ++a) {
    int64_t b = pads[a], e = pads[a + rank], d = t.getDimSize(a);
    // Checked before negating: -INT64_MIN overflows.
    if (b < -d || e < -d || (b < 0 && e < 0 && -b > d + e))
      return n.error() << "pads " << b << " and " << e << " crop more than "
                       << "axis " << a << " of " << t << " holds",
             failure();
    if (b > kMaxPad || e > kMaxPad)
      return n.error() << "pads " << b << " and " << e << " on axis " << a
                       << " are larger than ampc pads at compile time ("
                       << kMaxPad << ")",
             failure();
    starts[a] = std::max<int64_t>(0, -b);
    ends[a] = d - std::max<int64_t>(0, -e);
    crop |= b < 0 || e < 0;
  }
  Value cur = *x;
  if (crop) {
    auto s = n.create1<graph::SliceOp>(
        cur, {n.named("starts", n.b.getDenseI64ArrayAttr(starts)),
              n.named("ends", n.b.getDenseI64ArrayAttr(ends)),
              n.named("steps", n.b.getDenseI64ArrayAttr(steps))});
    if (failed(s))
      return failure();
    cur = *s;
  }
  for (int64_t a = 0; a < rank; ++a) {
    int64_t b = std::max<int64_t>(0, pads[a]),
            e = std::max<int64_t>(0, pads[a + rank]);
    if (b == 0 && e == 0)
      continue;
    auto ct = n.typeOf(cur);
    int64_t d = ct.getDimSize(a);
    FailureOr<Value> next;
    if (mode == "constant") {
      SmallVector<Value> parts;
      for (int64_t size : {b, int64_t(-1), e}) {
        if (size == 0)
          continue;
        if (size < 0) {
          parts.push_back(cur);
          continue;
        }
        SmallVector<int64_t> shape(ct.getShape());
        shape[a] = size;
        FailureOr<Value> block = fill(n, shape, ct.getElementType(), value);
        if (failed(block))
          return failure();
        parts.push_back(*block);
      }
      next = n.create1<graph::ConcatOp>(
          parts, {n.named("axis", n.b.getI64IntegerAttr(a))});
    } else {
      // reflect mirrors without repeating the edge, so it needs more than
      // the pad's elements (as PyTorch's ReflectionPad); edge needs one.
      if (d == 0 || (mode == "reflect" && (b >= d || e >= d)))
        return n.error() << mode << " padding of " << b << " and " << e
                         << " on axis " << a << " of " << t << " needs "
                         << (mode == "reflect"
                                 ? "the axis to be longer than each pad"
                                 : "a non-empty axis"),
               failure();
      SmallVector<int64_t> idx;
      for (int64_t i = b; i > 0; --i)
        idx.push_back(mode == "edge" ? 0 : i);
      for (int64_t i = 0; i < d; ++i)
        idx.push_back(i);
      for (int64_t i = 1; i <= e; ++i)
        idx.push_back(mode == "edge" ? d - 1 : d - 1 - i);
      next = gatherAxis(n, cur, a, idx);
    }
    if (failed(next))
      return failure();
    cur = *next;
  }
  return SmallVector<Value>{cur};
}

FailureOr<SmallVector<Value>> convertTile(NodeBinder &n) {
  auto x = n.required(0, "input");
  auto repeats = n.constInts(1, "repeats");
  if (failed(x) || failed(repeats))
    return failure();
  auto t = n.typeOf(*x);
  if (static_cast<int64_t>(repeats->size()) != t.getRank())
    return n.error() << "repeats has " << repeats->size()
                     << " entries but the input " << t << " has rank "
                     << t.getRank(),
           failure();
  // [.., d, ..] -> [.., 1, d, ..] -> broadcast [.., r, d, ..] -> [.., r*d, ..]
  SmallVector<int64_t> split, wide, out;
  for (auto [d, r] : llvm::zip(t.getShape(), *repeats)) {
    if (r < 0)
      return n.error() << "repeats " << shape::str(*repeats)
                       << " has a negative entry",
             failure();
    if (r != 1) {
      split.push_back(1);
      wide.push_back(r);
    }
    split.push_back(d);
    wide.push_back(d);
    out.push_back(r * d);
  }
  if (split.size() == static_cast<size_t>(t.getRank()))
    return SmallVector<Value>{*x};
  auto wideType = RankedTensorType::get(wide, t.getElementType());
  if (failed(n.checkSize(wideType)))
    return failure();
  auto op = n.createTyped<graph::BroadcastToOp>(wideType, n.reshape(*x, split));
  if (failed(op))
    return failure();
  return SmallVector<Value>{n.reshape(n.foldResult(*op), out)};
}

} // namespace

void populatePadHandlers(HandlerTable &t) {
  addHandler(t, "Pad", kMinOpset, kMaxOpset, convertPad);
  addHandler(t, "Tile", kMinOpset, kMaxOpset, convertTile);
}

} // namespace ampc::onnx_to_graph
