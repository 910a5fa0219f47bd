//===- Normalization.cpp - ONNX BatchNormalization, LayerNormalization ----===//
//
// Training or inference form of batch norm is chosen by the opset's rule:
// the training_mode attribute from opset 14, the number of outputs before.
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

} // namespace

void populateNormalizationHandlers(HandlerTable &t) {
  addHandler(t, "BatchNormalization", 9, 17, convertBatchNorm);
  addHandler(t, "LayerNormalization", 17, 17, convertLayerNorm);
}

} // namespace ampc::onnx_to_graph
