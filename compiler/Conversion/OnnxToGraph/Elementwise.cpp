//===- Elementwise.cpp - ONNX elementwise ops -> graph --------------------===//
//
// Unary and binary arithmetic, activations, comparisons and logical ops,
// Where, Cast, Identity, Dropout.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

template <typename OpTy>
Handler unaryFloat() {
  return [](NodeBinder &n) -> FailureOr<SmallVector<Value>> {
    auto x = n.required(0, "X");
    if (failed(x) || failed(n.requireFloat(*x, "input X")))
      return failure();
    return results(n.create1<OpTy>(*x));
  };
}

template <typename OpTy>
Handler unaryNumeric() {
  return [](NodeBinder &n) -> FailureOr<SmallVector<Value>> {
    auto x = n.required(0, "X");
    if (failed(x))
      return failure();
    return results(n.create1<OpTy>(*x));
  };
}

template <typename OpTy>
Handler binary() {
  return [](NodeBinder &n) -> FailureOr<SmallVector<Value>> {
    auto a = n.required(0, "A"), b = n.required(1, "B");
    if (failed(a) || failed(b))
      return failure();
    return results(n.create1<OpTy>({*a, *b}));
  };
}

/// And, Or, Xor (two inputs) and Not (one): bool tensors only.
template <typename OpTy, unsigned Arity> Handler logical() {
  return [](NodeBinder &n) -> FailureOr<SmallVector<Value>> {
    SmallVector<Value> in;
    for (unsigned i = 0; i < Arity; ++i) {
      auto v = n.required(i, Arity == 1 ? "X" : i ? "B" : "A");
      if (failed(v))
        return failure();
      if (!n.typeOf(*v).getElementType().isInteger(1))
        return n.error() << "input #" << i << " has type " << v->getType()
                         << "; the op takes bool tensors",
               failure();
      in.push_back(*v);
    }
    return results(n.create1<OpTy>(in));
  };
}

FailureOr<SmallVector<Value>> convertPow(NodeBinder &n) {
  auto x = n.required(0, "X"), y = n.required(1, "Y");
  if (failed(x) || failed(y))
    return failure();
  Type elem = n.typeOf(*x).getElementType();
  if (elem.isInteger()) {
    // An integer base: computed in f64, which is exact for every result an
    // i32 holds and for i64 results below 2^53, then truncated as ONNX's
    // reference (numpy) does.
    Type f64 = n.b.getF64Type();
    FailureOr<Value> p =
        n.create1<graph::PowOp>({n.castTo(*x, f64), n.castTo(*y, f64)});
    if (failed(p))
      return failure();
    return SmallVector<Value>{n.castTo(*p, elem)};
  }
  if (failed(n.requireFloat(*x, "base X")))
    return failure();
  // ONNX lets the exponent have its own type; the graph op computes in the
  // base's type.
  Value exponent = n.castTo(*y, elem);
  return results(n.create1<graph::PowOp>({*x, exponent}));
}

FailureOr<SmallVector<Value>> convertLeakyRelu(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  return results(n.create1<graph::LeakyReluOp>(
      *x, {n.named("alpha", n.b.getF64FloatAttr(n.floatAttr("alpha", 0.01)))}));
}

FailureOr<SmallVector<Value>> convertHardSigmoid(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  return results(n.create1<graph::HardSigmoidOp>(
      *x, {n.named("alpha", n.b.getF64FloatAttr(n.floatAttr("alpha", 0.2))),
           n.named("beta", n.b.getF64FloatAttr(n.floatAttr("beta", 0.5)))}));
}

FailureOr<SmallVector<Value>> convertGelu(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "input X")))
    return failure();
  // ONNX's cases are the graph op's.
  std::string approx =
      n.strAttr("approximate",
                graph::stringifyGeluApproximate(graph::GeluApproximate::None));
  if (auto error =
          graph::notACase<graph::GeluApproximate>("approximate", approx))
    return n.error() << *error, failure();
  return results(n.create1<graph::GeluOp>(
      *x, {n.named("approximate", n.b.getStringAttr(approx))}));
}

FailureOr<SmallVector<Value>> convertClip(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  SmallVector<NamedAttribute> attrs;
  const char *names[] = {"min", "max"};
  for (int i = 0; i < 2; ++i) {
    if (!n.input(1 + i))
      continue;
    FailureOr<double> v = n.constScalar(1 + i, names[i]);
    if (failed(v))
      return failure();
    attrs.push_back(n.named(names[i], n.b.getF64FloatAttr(*v)));
  }
  return results(n.create1<graph::ClipOp>(*x, attrs));
}

FailureOr<SmallVector<Value>> convertWhere(NodeBinder &n) {
  auto c = n.required(0, "condition"), x = n.required(1, "X"),
       y = n.required(2, "Y");
  if (failed(c) || failed(x) || failed(y))
    return failure();
  return results(n.create1<graph::WhereOp>({*c, *x, *y}));
}

FailureOr<SmallVector<Value>> convertCast(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  std::optional<int64_t> to = n.intAttr("to");
  if (!to)
    return n.error() << "missing attribute 'to'", failure();
  Type elem = onnx::elementTypeOf(*to, n.b.getContext());
  if (!elem)
    return n.error() << "cast to ONNX dtype " << *to
                     << " is not supported (supported: "
                     << onnx::kSupportedDtypes << ")",
           failure();
  if (n.typeOf(*x).getElementType() == elem)
    return SmallVector<Value>{*x};
  auto op = n.createTyped<graph::CastOp>(n.typeOf(*x).clone(elem), *x);
  if (failed(op))
    return failure();
  return SmallVector<Value>{n.foldResult(*op)};
}

/// CastLike (15+): a cast to the element type of input 1.
FailureOr<SmallVector<Value>> convertCastLike(NodeBinder &n) {
  auto x = n.required(0, "input"), like = n.required(1, "target_type");
  if (failed(x) || failed(like))
    return failure();
  return SmallVector<Value>{n.castTo(*x, n.typeOf(*like).getElementType())};
}

/// Mish (18+): x tanh(softplus(x)), written with those ops.
FailureOr<SmallVector<Value>> convertMish(NodeBinder &n) {
  auto x = n.required(0, "X");
  if (failed(x) || failed(n.requireFloat(*x, "X")))
    return failure();
  auto sp = n.create1<graph::SoftplusOp>(*x);
  auto t = failed(sp) ? sp : n.create1<graph::TanhOp>(*sp);
  if (failed(t))
    return failure();
  return results(n.create1<graph::MulOp>({*x, *t}));
}

FailureOr<SmallVector<Value>> convertIdentity(NodeBinder &n) {
  auto x = n.required(0, "input");
  if (failed(x))
    return failure();
  return SmallVector<Value>{*x};
}

FailureOr<SmallVector<Value>> convertDropout(NodeBinder &n) {
  auto x = n.required(0, "data");
  if (failed(x) || failed(n.requireFloat(*x, "data")))
    return failure();
  double ratio = 0.5;
  bool training = n.defaultTrainingMode();
  if (n.opset() < 12) {
    ratio = n.floatAttr("ratio", 0.5);
  } else {
    if (n.input(1)) {
      FailureOr<double> v = n.constScalar(1, "ratio");
      if (failed(v))
        return failure();
      ratio = *v;
    }
    training = false;
    if (n.input(2)) {
      FailureOr<double> v = n.constScalar(2, "training_mode");
      if (failed(v))
        return failure();
      training = *v != 0;
    }
  }
  if (!(ratio >= 0 && ratio < 1))
    return n.error() << "ratio must be in [0, 1), got " << ratio, failure();
  bool maskUsed = n.numOutputs() > 1 && !n.node.getResult(1).use_empty();
  if (!training && !maskUsed)
    return SmallVector<Value>{*x};
  auto op = n.create<graph::DropoutOp>(
      *x, {n.named("ratio", n.b.getF64FloatAttr(ratio)),
           n.named("training", n.b.getBoolAttr(training)),
           n.named("seed", n.b.getI64IntegerAttr(n.intAttr("seed", 0)))});
  if (failed(op))
    return failure();
  return SmallVector<Value>{(*op)->getResult(0), (*op)->getResult(1)};
}

} // namespace

void populateElementwiseHandlers(HandlerTable &t) {
  addHandler(t, "Relu", kMinOpset, kMaxOpset, unaryFloat<graph::ReluOp>());
  addHandler(t, "Tanh", kMinOpset, kMaxOpset, unaryFloat<graph::TanhOp>());
  addHandler(t, "Sigmoid", kMinOpset, kMaxOpset,
             unaryFloat<graph::SigmoidOp>());
  addHandler(t, "Erf", kMinOpset, kMaxOpset, unaryFloat<graph::ErfOp>());
  addHandler(t, "Exp", kMinOpset, kMaxOpset, unaryFloat<graph::ExpOp>());
  addHandler(t, "Log", kMinOpset, kMaxOpset, unaryFloat<graph::LogOp>());
  addHandler(t, "Sqrt", kMinOpset, kMaxOpset, unaryFloat<graph::SqrtOp>());
  addHandler(t, "Reciprocal", kMinOpset, kMaxOpset,
             unaryFloat<graph::ReciprocalOp>());
  addHandler(t, "Neg", kMinOpset, kMaxOpset, unaryNumeric<graph::NegOp>());
  addHandler(t, "Abs", kMinOpset, kMaxOpset, unaryNumeric<graph::AbsOp>());
  addHandler(t, "LeakyRelu", kMinOpset, kMaxOpset, convertLeakyRelu);
  addHandler(t, "HardSigmoid", kMinOpset, kMaxOpset, convertHardSigmoid);
  // HardSwish entered the default domain at opset 14; PyTorch exports
  // nn.Hardswish to older opsets as HardSigmoid and Mul.
  addHandler(t, "HardSwish", 14, kMaxOpset, unaryFloat<graph::HardSwishOp>());
  // Gelu entered the default domain at opset 20; exporters targeting older
  // opsets emit it in com.microsoft.
  addHandler(t, "Gelu", 20, 20, convertGelu);
  addHandler(t, "com.microsoft::Gelu", 1, 1, convertGelu);
  addHandler(t, "Clip", kMinOpset, kMaxOpset, convertClip);
  addHandler(t, "Add", kMinOpset, kMaxOpset, binary<graph::AddOp>());
  addHandler(t, "Sub", kMinOpset, kMaxOpset, binary<graph::SubOp>());
  addHandler(t, "Mul", kMinOpset, kMaxOpset, binary<graph::MulOp>());
  addHandler(t, "Div", kMinOpset, kMaxOpset, binary<graph::DivOp>());
  addHandler(t, "Pow", kMinOpset, kMaxOpset, convertPow);
  addHandler(t, "Sin", kMinOpset, kMaxOpset, unaryFloat<graph::SinOp>());
  addHandler(t, "Cos", kMinOpset, kMaxOpset, unaryFloat<graph::CosOp>());
  addHandler(t, "Softplus", kMinOpset, kMaxOpset,
             unaryFloat<graph::SoftplusOp>());
  addHandler(t, "Equal", kMinOpset, kMaxOpset, binary<graph::EqualOp>());
  addHandler(t, "Less", kMinOpset, kMaxOpset, binary<graph::LessOp>());
  addHandler(t, "Greater", kMinOpset, kMaxOpset, binary<graph::GreaterOp>());
  addHandler(t, "LessOrEqual", 12, kMaxOpset, binary<graph::LessEqualOp>());
  addHandler(t, "GreaterOrEqual", 12, kMaxOpset,
             binary<graph::GreaterEqualOp>());
  addHandler(t, "Not", kMinOpset, kMaxOpset, logical<graph::LogicalNotOp, 1>());
  addHandler(t, "And", kMinOpset, kMaxOpset, logical<graph::LogicalAndOp, 2>());
  addHandler(t, "Or", kMinOpset, kMaxOpset, logical<graph::LogicalOrOp, 2>());
  addHandler(t, "Xor", kMinOpset, kMaxOpset, logical<graph::LogicalXorOp, 2>());
  addHandler(t, "Where", kMinOpset, kMaxOpset, convertWhere);
  addHandler(t, "Cast", kMinOpset, kMaxOpset, convertCast);
  addHandler(t, "CastLike", 15, kMaxOpset, convertCastLike);
  addHandler(t, "Mish", 18, kMaxOpset, convertMish);
  addHandler(t, "Identity", kMinOpset, kMaxOpset, convertIdentity);
  addHandler(t, "Dropout", kMinOpset, kMaxOpset, convertDropout);
}

} // namespace ampc::onnx_to_graph
