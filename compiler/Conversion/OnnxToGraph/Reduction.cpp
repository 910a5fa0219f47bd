//===- Reduction.cpp - ONNX reductions, softmax and losses -> graph -------===//
//
// Reductions (axes as attribute, or as input: ReduceSum from opset 13, the
// others from 18), ArgMax, CumSum and TopK along one axis,
// Softmax/LogSoftmax (2-D coercion before opset 13), and the fused losses.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"
#include "dialects/Graph/ShapeInference.h"

#include <limits>

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// What a Reduce* node reduces: its input, and its axes (sorted), or none
/// when the node reduces nothing (a scalar, or empty axes with
/// noop_with_empty_axes).
struct ReduceSpec {
  Value x;
  SmallVector<int64_t> axes;
  bool keepdims;
};

/// `axesInputFrom`: the opset from which the op takes its axes as an input
/// (13 for ReduceSum, 18 for the others) instead of an attribute.
FailureOr<ReduceSpec> readReduce(NodeBinder &n, int64_t axesInputFrom) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  ReduceSpec r{*x, {}, n.intAttr("keepdims", 1) != 0};
  int64_t rank = n.typeOf(*x).getRank();
  bool axesFromInput = n.opset() >= axesInputFrom;
  if (axesFromInput) {
    if (n.input(1)) {
      auto a = n.constInts(1, "axes");
      if (failed(a))
        return failure();
      r.axes = *a;
    }
  } else if (auto a = n.intsAttr("axes")) {
    r.axes = *a;
  }
  if (r.axes.empty()) {
    if (axesFromInput && n.intAttr("noop_with_empty_axes", 0))
      return r;
    for (int64_t i = 0; i < rank; ++i)
      r.axes.push_back(i);
  }
  if (failed(n.axes(r.axes, rank)))
    return failure();
  llvm::sort(r.axes);
  return r;
}

template <typename OpTy>
FailureOr<Value> reduce(NodeBinder &n, Value x, ArrayRef<int64_t> axes,
                        bool keepdims) {
  if (axes.empty())
    return x;
  return n.create1<OpTy>(x, {n.named("axes", n.b.getDenseI64ArrayAttr(axes)),
                             n.named("keepdims", n.b.getBoolAttr(keepdims))});
}

template <typename OpTy, int64_t axesInputFrom>
FailureOr<SmallVector<Value>> convertReduce(NodeBinder &n) {
  auto r = readReduce(n, axesInputFrom);
  if (failed(r))
    return failure();
  return results(reduce<OpTy>(n, r->x, r->axes, r->keepdims));
}

/// The reductions ONNX defines that are a sum or a maximum between
/// elementwise ops; gradients come from those ops.
enum class Composed { L1, L2, SumSquare, LogSum, LogSumExp, Min };

template <Composed kind>
FailureOr<SmallVector<Value>> convertComposedReduce(NodeBinder &n) {
  auto r = readReduce(n, 18);
  if (failed(r))
    return failure();
  Value x = r->x;
  bool floatOnly = kind == Composed::L2 || kind == Composed::LogSum ||
                   kind == Composed::LogSumExp;
  if (floatOnly && failed(n.requireFloat(x, "data")))
    return failure();
  auto unary = [&](auto tag, Value v) -> FailureOr<Value> {
    return n.create1<decltype(tag)>(v);
  };
  FailureOr<Value> v = x;
  switch (kind) {
  case Composed::L1:
    v = unary(graph::AbsOp(), x);
    break;
  case Composed::L2:
  case Composed::SumSquare:
    v = n.create1<graph::MulOp>({x, x});
    break;
  case Composed::Min:
    v = unary(graph::NegOp(), x);
    break;
  default:
    break;
  }
  if (failed(v))
    return failure();
  if (kind == Composed::LogSumExp) {
    // Shifted by the maximum, so that exp does not overflow; by 0 where the
    // maximum is not finite (a slice all -inf gives -inf, not NaN, as
    // ONNX's reference and PyTorch do).
    auto max = reduce<graph::ReduceMaxOp>(n, x, r->axes, true);
    if (failed(max))
      return failure();
    Type elem = n.typeOf(x).getElementType();
    auto inf = fill(n, {}, elem, std::numeric_limits<double>::infinity());
    auto zero = fill(n, {}, elem, 0.0);
    auto absMax = unary(graph::AbsOp(), *max);
    auto finite = failed(absMax) || failed(inf)
                      ? FailureOr<Value>(failure())
                      : n.create1<graph::LessOp>({*absMax, *inf});
    auto m = failed(finite) || failed(zero)
                 ? FailureOr<Value>(failure())
                 : n.create1<graph::WhereOp>({*finite, *max, *zero});
    if (failed(m))
      return failure();
    auto shifted = n.create1<graph::SubOp>({x, *m});
    auto e = failed(shifted) ? shifted : unary(graph::ExpOp(), *shifted);
    auto sum = failed(e) ? e : reduce<graph::ReduceSumOp>(n, *e, r->axes, true);
    auto log = failed(sum) ? sum : unary(graph::LogOp(), *sum);
    auto y = failed(log) ? log : n.create1<graph::AddOp>({*log, *m});
    if (failed(y))
      return failure();
    if (r->keepdims || r->axes.empty())
      return SmallVector<Value>{*y};
    std::string error;
    std::optional<shape::Shape> dropped =
        shape::reduce(n.typeOf(x).getShape(), r->axes, false, error);
    return SmallVector<Value>{n.reshape(*y, *dropped)};
  }
  v = kind == Composed::Min
          ? reduce<graph::ReduceMaxOp>(n, *v, r->axes, r->keepdims)
          : reduce<graph::ReduceSumOp>(n, *v, r->axes, r->keepdims);
  if (failed(v))
    return failure();
  switch (kind) {
  case Composed::L2:
    return results(unary(graph::SqrtOp(), *v));
  case Composed::LogSum:
    return results(unary(graph::LogOp(), *v));
  case Composed::Min:
    return results(unary(graph::NegOp(), *v));
  default:
    return SmallVector<Value>{*v};
  }
}

FailureOr<SmallVector<Value>> convertArgMax(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x))
    return failure();
  auto axis = n.axis(n.intAttr("axis", 0), n.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return results(n.create1<graph::ArgMaxOp>(
      *x, {n.named("axis", n.b.getI64IntegerAttr(*axis)),
           n.named("keepdims", n.b.getBoolAttr(n.intAttr("keepdims", 1))),
           n.named("select_last_index",
                   n.b.getBoolAttr(n.intAttr("select_last_index", 0)))}));
}

FailureOr<SmallVector<Value>> convertCumSum(NodeBinder &n) {
  auto x = n.required(0, "x");
  if (failed(x))
    return failure();
  auto given = n.constInt(1, "axis");
  if (failed(given))
    return failure();
  auto axis = n.axis(*given, n.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  return results(n.create1<graph::CumSumOp>(
      *x, {n.named("axis", n.b.getI64IntegerAttr(*axis)),
           n.named("exclusive", n.b.getBoolAttr(n.intAttr("exclusive", 0))),
           n.named("reverse", n.b.getBoolAttr(n.intAttr("reverse", 0)))}));
}

FailureOr<SmallVector<Value>> convertTopK(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x))
    return failure();
  auto k = n.constInt(1, "K");
  if (failed(k))
    return failure();
  auto axis = n.axis(n.intAttr("axis", -1), n.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  // `sorted = 0` leaves the order to the implementation: sorted is one.
  auto op = n.create<graph::TopKOp>(
      *x, {n.named("k", n.b.getI64IntegerAttr(*k)),
           n.named("axis", n.b.getI64IntegerAttr(*axis)),
           n.named("largest", n.b.getBoolAttr(n.intAttr("largest", 1)))});
  if (failed(op))
    return failure();
  return SmallVector<Value>{(*op)->getResult(0), (*op)->getResult(1)};
}

template <typename OpTy>
FailureOr<SmallVector<Value>> convertSoftmax(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x) || failed(n.requireFloat(*x, "input")))
    return failure();
  auto type = n.typeOf(*x);
  int64_t rank = type.getRank();
  auto axisOr = n.axis(n.intAttr("axis", n.opset() >= 13 ? -1 : 1), rank);
  if (failed(axisOr))
    return failure();
  int64_t axis = *axisOr;
  if (n.opset() >= 13 || axis == rank - 1)
    return results(
        n.create1<OpTy>(*x, {n.named("axis", n.b.getI64IntegerAttr(axis))}));
  // Before opset 13 the input is coerced to 2-D at `axis` and normalized
  // over all the trailing dimensions together.
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < rank; ++i)
    (i < axis ? outer : inner) *= type.getDimSize(i);
  Value flat = n.reshape(*x, {outer, inner});
  auto y = n.create1<OpTy>(flat, {n.named("axis", n.b.getI64IntegerAttr(1))});
  if (failed(y))
    return failure();
  return SmallVector<Value>{n.reshape(*y, type.getShape())};
}

SmallVector<NamedAttribute> lossAttrs(NodeBinder &n, bool &ok) {
  SmallVector<NamedAttribute> attrs;
  std::string reduction = n.strAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean") {
    n.error() << "reduction must be none, sum or mean, got \"" << reduction
              << "\"";
    ok = false;
  }
  attrs.push_back(n.named("reduction", n.b.getStringAttr(reduction)));
  if (auto ii = n.intAttr("ignore_index"))
    attrs.push_back(n.named("ignore_index", n.b.getI64IntegerAttr(*ii)));
  return attrs;
}

FailureOr<SmallVector<Value>> convertSoftmaxCrossEntropy(NodeBinder &n) {
  auto scores = n.required(0, "scores"), labels = n.required(1, "labels");
  if (failed(scores) || failed(labels) ||
      failed(n.requireFloat(*scores, "scores")))
    return failure();
  bool ok = true;
  auto attrs = lossAttrs(n, ok);
  if (!ok)
    return failure();
  SmallVector<Value> operands{*scores, *labels};
  if (Value w = n.input(2))
    operands.push_back(w);
  auto op = n.create<graph::SoftmaxCrossEntropyOp>(operands, attrs);
  if (failed(op))
    return failure();
  return SmallVector<Value>((*op)->getResults());
}

FailureOr<SmallVector<Value>> convertNll(NodeBinder &n) {
  auto input = n.required(0, "input"), target = n.required(1, "target");
  if (failed(input) || failed(target) ||
      failed(n.requireFloat(*input, "input")))
    return failure();
  bool ok = true;
  auto attrs = lossAttrs(n, ok);
  if (!ok)
    return failure();
  SmallVector<Value> operands{*input, *target};
  if (Value w = n.input(2))
    operands.push_back(w);
  return results(n.create1<graph::NllLossOp>(operands, attrs));
}

} // namespace

void populateReductionHandlers(HandlerTable &t) {
  addHandler(t, "ReduceSum", kMinOpset, kMaxOpset,
             convertReduce<graph::ReduceSumOp, 13>);
  addHandler(t, "ReduceMean", kMinOpset, kMaxOpset,
             convertReduce<graph::ReduceMeanOp, 18>);
  addHandler(t, "ReduceMax", kMinOpset, kMaxOpset,
             convertReduce<graph::ReduceMaxOp, 18>);
  addHandler(t, "ReduceL1", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::L1>);
  addHandler(t, "ReduceL2", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::L2>);
  addHandler(t, "ReduceSumSquare", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::SumSquare>);
  addHandler(t, "ReduceLogSum", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::LogSum>);
  addHandler(t, "ReduceLogSumExp", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::LogSumExp>);
  addHandler(t, "ReduceMin", kMinOpset, kMaxOpset,
             convertComposedReduce<Composed::Min>);
  addHandler(t, "ArgMax", kMinOpset, kMaxOpset, convertArgMax);
  addHandler(t, "CumSum", kMinOpset, kMaxOpset, convertCumSum);
  addHandler(t, "TopK", kMinOpset, kMaxOpset, convertTopK);
  addHandler(t, "Softmax", kMinOpset, kMaxOpset,
             convertSoftmax<graph::SoftmaxOp>);
  addHandler(t, "LogSoftmax", kMinOpset, kMaxOpset,
             convertSoftmax<graph::LogSoftmaxOp>);
  addHandler(t, "SoftmaxCrossEntropyLoss", 12, kMaxOpset,
             convertSoftmaxCrossEntropy);
  addHandler(t, "NegativeLogLikelihoodLoss", 12, kMaxOpset, convertNll);
}

} // namespace ampc::onnx_to_graph
