//===- Training.cpp - ONNX ai.onnx.preview.training optimizers -> graph ---===//
//
// Momentum, Adam and Adagrad (opset 1 of the preview training domain) are
// variadic: R, T, then the n optimized tensors X_1..X_n, their gradients
// G_1..G_n and each state in turn; outputs are the new X's, then each new
// state. Each becomes one graph update op per tensor, since the graph ops
// (and the memory planner, which writes them in place) work per tensor.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

/// A float attribute: `dflt` when absent (an error when there is none),
/// an error when it is not a number.
FailureOr<double> floatAttribute(NodeBinder &n, StringRef name,
                                 std::optional<double> dflt) {
  Attribute a = n.attr(name);
  if (!a) {
    if (dflt)
      return *dflt;
    return n.error() << "missing required attribute '" << name << "'",
           failure();
  }
  if (!isa<FloatAttr, IntegerAttr>(a))
    return n.error() << "attribute '" << name << "' must be a float, got " << a,
           failure();
  return n.floatAttr(name, 0);
}

/// The pieces every optimizer node shares: the learning rate, the step,
/// and `groups` lists (X, G, then each state) of `count` tensors each.
struct Operands {
  Value lr, step;
  int64_t count = 0;
  SmallVector<SmallVector<Value>> groups;
};

/// `names` spells each group for messages ("X", "G", "V", ...).
FailureOr<Operands> bindOperands(NodeBinder &n, ArrayRef<StringRef> names) {
  int64_t groups = names.size();
  int64_t tensors = static_cast<int64_t>(n.numInputs()) - 2;
  std::string spelled;
  for (StringRef g : names)
    spelled += (spelled.empty() ? "" : ", ") + g.str() + "_i";
  if (tensors < groups || tensors % groups != 0)
    return n.error() << "expects R, T and " << groups
                     << " inputs per optimized tensor (" << spelled << "), got "
                     << n.numInputs() << " inputs",
           failure();
  Operands ops;
  ops.count = tensors / groups;
  if (n.numOutputs() != static_cast<unsigned>(ops.count * (groups - 1)))
    return n.error() << "optimizes " << ops.count << " tensor(s), so it has "
                     << ops.count * (groups - 1) << " outputs (the new "
                     << "values of all but the gradients), got "
                     << n.numOutputs(),
           failure();
  for (unsigned i = 0; i < n.numInputs(); ++i)
    if (!n.input(i))
      return n.error() << "input #" << i << " is missing", failure();

  ops.lr = n.input(0);
  auto lrType = n.typeOf(ops.lr);
  if (lrType.getRank() != 0 ||
      !(lrType.getElementType().isF32() || lrType.getElementType().isF64()))
    return n.error() << "R (the learning rate) must be a scalar f32 or f64 "
                        "tensor, got "
                     << lrType,
           failure();
  ops.step = n.input(1);
  auto stepType = n.typeOf(ops.step);
  if (stepType.getRank() != 0 || !stepType.getElementType().isInteger(64))
    return n.error() << "T (the update count) must be a scalar i64 tensor, "
                        "got "
                     << stepType,
           failure();
  for (int64_t g = 0; g < groups; ++g) {
    ops.groups.emplace_back();
    for (int64_t i = 0; i < ops.count; ++i) {
      Value v = n.input(2 + g * ops.count + i);
      std::string what = names[g].str() + "_" + std::to_string(i + 1);
      if (failed(n.requireFloat(v, what)))
        return failure();
      ops.groups.back().push_back(v);
    }
  }
  return ops;
}

/// One update op per tensor i, on (lr, step, X_i, G_i, states_i...); the
/// node's outputs are every op's result k, in turn for each k.
template <typename OpTy>
FailureOr<SmallVector<Value>> perTensor(NodeBinder &n, const Operands &ops,
                                        ArrayRef<NamedAttribute> attrs) {
  int64_t states = static_cast<int64_t>(ops.groups.size()) - 1;
  SmallVector<Value> outs(ops.count * states);
  for (int64_t i = 0; i < ops.count; ++i) {
    SmallVector<Value> operands{ops.lr, ops.step};
    for (const auto &group : ops.groups)
      operands.push_back(group[i]);
    Type t = ops.groups[0][i].getType();
    SmallVector<Type> types(states, t);
    auto op = n.createTyped<OpTy>(types, operands, attrs);
    if (failed(op))
      return failure();
    for (int64_t k = 0; k < states; ++k)
      outs[k * ops.count + i] = (*op)->getResult(k);
  }
  return outs;
}

FailureOr<SmallVector<Value>> convertMomentum(NodeBinder &n) {
  auto ops = bindOperands(n, {"X", "G", "V"});
  if (failed(ops))
    return failure();
  // Momentum has no attribute defaults in its schema.
  auto alpha = floatAttribute(n, "alpha", std::nullopt);
  auto beta = floatAttribute(n, "beta", std::nullopt);
  auto nc = floatAttribute(n, "norm_coefficient", std::nullopt);
  if (failed(alpha) || failed(beta) || failed(nc))
    return failure();
  auto mode = dyn_cast_or_null<StringAttr>(n.attr("mode"));
  if (!mode)
    return n.error() << "missing required string attribute 'mode' ("
                     << graph::quotedCases<graph::MomentumMode>() << ")",
           failure();
  // ONNX's cases are the graph op's.
  if (auto error =
          graph::notACase<graph::MomentumMode>("mode", mode.getValue()))
    return n.error() << *error, failure();
  Builder &b = n.b;
  return perTensor<graph::MomentumUpdateOp>(
      n, *ops,
      {n.named("alpha", b.getF64FloatAttr(*alpha)),
       n.named("beta", b.getF64FloatAttr(*beta)),
       n.named("norm_coefficient", b.getF64FloatAttr(*nc)),
       n.named("mode", mode)});
}

FailureOr<SmallVector<Value>> convertAdam(NodeBinder &n) {
  auto ops = bindOperands(n, {"X", "G", "V", "H"});
  if (failed(ops))
    return failure();
  // ONNX's defaults, which differ from the graph op's PyTorch ones.
  auto alpha = floatAttribute(n, "alpha", 0.9);
  auto beta = floatAttribute(n, "beta", 0.999);
  auto epsilon = floatAttribute(n, "epsilon", 1e-6);
  auto nc = floatAttribute(n, "norm_coefficient", 0.0);
  auto ncPost = floatAttribute(n, "norm_coefficient_post", 0.0);
  if (failed(alpha) || failed(beta) || failed(epsilon) || failed(nc) ||
      failed(ncPost))
    return failure();
  Builder &b = n.b;
  return perTensor<graph::AdamUpdateOp>(
      n, *ops,
      {n.named("alpha", b.getF64FloatAttr(*alpha)),
       n.named("beta", b.getF64FloatAttr(*beta)),
       n.named("epsilon", b.getF64FloatAttr(*epsilon)),
       n.named("norm_coefficient", b.getF64FloatAttr(*nc)),
       n.named("norm_coefficient_post", b.getF64FloatAttr(*ncPost)),
       n.named("mode", b.getStringAttr(
                           graph::stringifyAdamMode(graph::AdamMode::Onnx)))});
}

FailureOr<SmallVector<Value>> convertAdagrad(NodeBinder &n) {
  auto ops = bindOperands(n, {"X", "G", "H"});
  if (failed(ops))
    return failure();
  auto decay = floatAttribute(n, "decay_factor", 0.0);
  auto epsilon = floatAttribute(n, "epsilon", 1e-6);
  auto nc = floatAttribute(n, "norm_coefficient", 0.0);
  if (failed(decay) || failed(epsilon) || failed(nc))
    return failure();
  Builder &b = n.b;
  return perTensor<graph::AdagradUpdateOp>(
      n, *ops,
      {n.named("decay_factor", b.getF64FloatAttr(*decay)),
       n.named("epsilon", b.getF64FloatAttr(*epsilon)),
       n.named("norm_coefficient", b.getF64FloatAttr(*nc))});
}

} // namespace

void populateTrainingHandlers(HandlerTable &t) {
  addHandler(t, "ai.onnx.preview.training::Momentum", 1, 1, convertMomentum);
  addHandler(t, "ai.onnx.preview.training::Adam", 1, 1, convertAdam);
  addHandler(t, "ai.onnx.preview.training::Adagrad", 1, 1, convertAdagrad);
}

} // namespace ampc::onnx_to_graph
