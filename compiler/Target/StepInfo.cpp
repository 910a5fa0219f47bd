//===- StepInfo.cpp - graph.step_info as the runtime's StepInfo -----------===//

#include "compiler/Target/StepInfo.h"

#include "dialects/Graph/GraphOps.h"

using namespace mlir;

namespace ampc {

std::optional<rt::StepInfo> readStepInfo(func::FuncOp f) {
  auto d = f->getAttrOfType<DictionaryAttr>(graph::kStepInfoAttr);
  if (!d)
    return std::nullopt;
  namespace key = graph::step_info;
  rt::StepInfo info;
  info.function = f.getSymName().str();
  info.loss = d.getAs<StringAttr>(key::kLoss).getValue().str();
  info.checksOverflow = d.getAs<BoolAttr>(key::kChecksOverflow).getValue();
  info.staticScale =
      d.getAs<FloatAttr>(key::kStaticScale).getValue().convertToDouble();
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kClasses))
    info.classes[e.getName().str()] = cast<IntegerAttr>(e.getValue()).getInt();
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kIgnoreIndex))
    info.ignoreIndex[e.getName().str()] =
        cast<IntegerAttr>(e.getValue()).getInt();
  for (Attribute w : d.getAs<ArrayAttr>(key::kWeights))
    info.weights.insert(cast<StringAttr>(w).getValue().str());
  for (NamedAttribute e : d.getAs<DictionaryAttr>(key::kWorkingCopies))
    info.workingCopies[e.getName().str()] =
        cast<StringAttr>(e.getValue()).getValue().str();
  info.accumulate = d.getAs<IntegerAttr>(key::kAccumulate).getInt();
  return info;
}

} // namespace ampc
