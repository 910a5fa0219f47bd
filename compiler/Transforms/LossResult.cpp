//===- LossResult.cpp - which result of @forward is the loss --------------===//

#include "compiler/Transforms/LossResult.h"

#include "dialects/Graph/GraphOps.h"

using namespace mlir;

namespace ampc {

bool isFloatScalar(Type type) {
  auto t = cast<RankedTensorType>(type);
  return t.getRank() == 0 && isa<FloatType>(t.getElementType());
}

std::optional<unsigned> defaultLossResult(func::FuncOp forward) {
  auto results = forward.getFunctionType().getResults();
  for (unsigned i = 0; i < results.size(); ++i)
    if (auto name =
            forward.getResultAttrOfType<StringAttr>(i, graph::kNameAttr);
        name && name.getValue() == "loss")
      return i;
  std::optional<unsigned> scalar;
  for (unsigned i = 0; i < results.size(); ++i) {
    if (!isFloatScalar(results[i]))
      continue;
    if (scalar)
      return std::nullopt;
    scalar = i;
  }
  return scalar;
}

} // namespace ampc
