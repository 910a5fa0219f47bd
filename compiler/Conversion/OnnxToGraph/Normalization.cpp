//===- Normalization.cpp - ONNX Batch/Layer/InstanceNormalization ---------===//
//
// Training or inference form of batch norm is chosen by the opset's rule:
// the training_mode attribute from opset 14, the number of outputs before.
// Instance normalization is a layer norm over the spatial dimensions (a
// scale of ones), then the per-channel scale and bias.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

using namespace mlir;
namespace ampc::onnx_to_graph {
namespace {

FailureOr<SmallVector<Value>> convertBatchNorm(NodeBinder &n) {
  SmallVector<Value> operands;
  const char *names[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (unsigned i = 0; i < 5; ++i) {
    auto v = n.required(i, names[i]);
    if (failed(v) || failed(n.requireFloat(*v, names[i])))
      return failure();
    operands.push_back(*v);
  }
  double epsilon = n.floatAttr("epsilon", 1e-5);
  double momentum = n.floatAttr("momentum", 0.9);
  bool training = n.opset() >= 14 ? n.intAttr("training_mode", 0) != 0
                                  : n.numOutputs() > 1;
  if (!training) {
    if (failed(n.atMostOutputs(1)))
      return failure();
    return results(n.create1<graph::BatchNormInferenceOp>(
        operands, {n.named("epsilon", n.b.getF64FloatAttr(epsilon))}));
  }
  // Before opset 14 the fifth output was a "saved variance" whose meaning
  // ONNX left to the backend; ampc does not produce it.
  if (failed(n.atMostOutputs(4)))
    return failure();
  auto op = n.create<graph::BatchNormTrainingOp>(
      operands, {n.named("epsilon", n.b.getF64FloatAttr(epsilon)),
                 n.named("momentum", n.b.getF64FloatAttr(momentum))});
  if (failed(op))
    return failure();
  return SmallVector<Value>{(*op)->getResult(0), (*op)->getResult(1),
                            (*op)->getResult(2), (*op)->getResult(3)};
}

FailureOr<SmallVector<Value>> convertLayerNorm(NodeBinder &n) {
  auto x = n.required(0, "X"), scale = n.required(1, "Scale");
  if (failed(x) || failed(scale) || failed(n.requireFloat(*x, "X")))
    return failure();
  if (n.intAttr("stash_type", 1) != 1)
    return n.error() << "stash_type must be 1 (float): ampc computes layer "
                        "norm statistics in at least f32",
           failure();
  auto axis = n.axis(n.intAttr("axis", -1), n.typeOf(*x).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> operands{*x, *scale};
  if (Value bias = n.input(2))
    operands.push_back(bias);
  auto op = n.create<graph::LayerNormOp>(
      operands,
      {n.named("axis", n.b.getI64IntegerAttr(*axis)),
       n.named("epsilon", n.b.getF64FloatAttr(n.floatAttr("epsilon", 1e-5)))});
  if (failed(op))
    return failure();
  return SmallVector<Value>((*op)->getResults());
}

FailureOr<SmallVector<Value>> convertInstanceNorm(NodeBinder &n) {
  auto x = n.required(0, "input"), scale = n.required(1, "scale"),
       bias = n.required(2, "B");
  if (failed(x) || failed(scale) || failed(bias) ||
      failed(n.requireFloat(*x, "input")))
    return failure();
  auto t = n.typeOf(*x);
  if (t.getRank() < 3)
    return n.error() << "input " << t
                     << " must have a batch, a channel and a spatial "
                        "dimension",
           failure();
  int64_t channels = t.getDimSize(1);
  for (auto [what, v] :
       {std::pair<const char *, Value>{"scale", *scale}, {"B", *bias}}) {
    auto vt = n.typeOf(v);
    if (vt.getRank() != 1 || vt.getDimSize(0) != channels ||
        vt.getElementType() != t.getElementType())
      return n.error() << what << " " << vt << " must be a vector of the "
                       << channels << " channels of " << t,
             failure();
  }
  SmallVector<int64_t> spatial(t.getShape().drop_front(2));
  Value ones = n.constant(
      DenseElementsAttr::get(RankedTensorType::get(spatial, t.getElementType()),
                             n.b.getFloatAttr(t.getElementType(), 1.0)));
  auto norm = n.create<graph::LayerNormOp>(
      {*x, ones},
      {n.named("axis", n.b.getI64IntegerAttr(2)),
       n.named("epsilon", n.b.getF64FloatAttr(n.floatAttr("epsilon", 1e-5)))});
  if (failed(norm))
    return failure();
  (*norm)->setAttr(graph::kInstanceNormAttr, n.b.getUnitAttr());
  // [C] -> [C, 1, ...] to broadcast over the spatial dimensions.
  SmallVector<int64_t> perChannel{channels};
  perChannel.append(spatial.size(), 1);
  auto scaled = n.create1<graph::MulOp>(
      {(*norm)->getResult(0), n.reshape(*scale, perChannel)});
  if (failed(scaled))
    return failure();
  return results(
      n.create1<graph::AddOp>({*scaled, n.reshape(*bias, perChannel)}));
}

} // namespace

void populateNormalizationHandlers(HandlerTable &t) {
  addHandler(t, "BatchNormalization", 9, kMaxOpset, convertBatchNorm);
  addHandler(t, "LayerNormalization", 17, kMaxOpset, convertLayerNorm);
  addHandler(t, "InstanceNormalization", 11, kMaxOpset, convertInstanceNorm);
}

} // namespace ampc::onnx_to_graph
