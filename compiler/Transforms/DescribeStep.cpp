//===- DescribeStep.cpp - the amp-describe-step pass ----------------------===//
//
// States on @train_step, as graph.step_info, the facts a host loop needs
// and lowering erases: what the loss ops read as labels, which parameters
// are weights and working copies, the overflow check and its static scale.
// See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/Passes.h"

#include <map>
#include <set>
#include <string>

namespace ampc {
#define GEN_PASS_DEF_AMPDESCRIBESTEPPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

std::string argName(func::FuncOp f, Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  if (!arg || arg.getOwner()->getParentOp() != f)
    return "";
  auto n = f.getArgAttrOfType<StringAttr>(arg.getArgNumber(), graph::kNameAttr);
  return n ? n.getValue().str() : "";
}

/// name -> i64, as a dictionary.
DictionaryAttr intsByName(Builder &b, const std::map<std::string, int64_t> &m) {
  SmallVector<NamedAttribute> entries;
  for (const auto &[name, v] : m)
    entries.push_back(b.getNamedAttr(name, b.getI64IntegerAttr(v)));
  return b.getDictionaryAttr(entries);
}

DictionaryAttr describe(func::FuncOp f) {
  Builder b(f.getContext());
  namespace key = graph::step_info;
  std::string loss;
  if (auto l = f->getAttrOfType<StringAttr>(graph::kLossAttr))
    loss = l.getValue().str();
  int64_t accumulate = 1;
  if (auto n = f->getAttrOfType<IntegerAttr>(graph::kAccumulateStepsAttr))
    accumulate = n.getInt();
  int64_t worldSize = 1;
  if (auto n = f->getAttrOfType<IntegerAttr>(graph::kWorldSizeAttr))
    worldSize = n.getInt();
  bool checksOverflow = false;
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    if (auto n = f.getResultAttrOfType<StringAttr>(i, graph::kNameAttr))
      checksOverflow |= n.getValue() == kFoundInfName;
  // A static scale is the constant the check and the updates divide by.
  double staticScale = 1;
  f.walk([&](amp::CheckFiniteOp check) {
    if (auto c = check.getScale().getDefiningOp<graph::ConstantOp>())
      if (auto v = dyn_cast<DenseElementsAttr>(c.getValue()))
        staticScale = v.getSplatValue<APFloat>().convertToDouble();
  });
  // Labels feed a loss directly; their range is the scores' class axis.
  std::map<std::string, int64_t> classes, ignoreIndex;
  f.walk([&](Operation *op) {
    Value labels, scores;
    IntegerAttr ignore;
    if (auto sce = dyn_cast<graph::SoftmaxCrossEntropyOp>(op)) {
      labels = sce.getLabels();
      scores = sce.getScores();
      ignore = sce.getIgnoreIndexAttr();
    } else if (auto both = dyn_cast<graph::SoftmaxCrossEntropyWithGradOp>(op)) {
      labels = both.getLabels();
      scores = both.getScores();
      ignore = both.getIgnoreIndexAttr();
    } else if (auto nll = dyn_cast<graph::NllLossOp>(op)) {
      labels = nll.getTarget();
      scores = nll.getInput();
      ignore = nll.getIgnoreIndexAttr();
    } else {
      return;
    }
    std::string name = argName(f, labels);
    if (name.empty())
      return;
    classes[name] = cast<ShapedType>(scores.getType()).getDimSize(1);
    if (ignore)
      ignoreIndex[name] = ignore.getInt();
  });
  std::set<std::string> weights;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, graph::kInitAttr) &&
        !f.getArgAttr(i, graph::kStateAttr))
      if (auto n = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr))
        weights.insert(n.getValue().str());
  // The O2 working copy of weight w is the state `w.working`.
  SmallVector<NamedAttribute> workingCopies;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    if (f.getArgAttr(i, graph::kStateAttr))
      if (auto n = f.getArgAttrOfType<StringAttr>(i, graph::kNameAttr)) {
        StringRef name = n.getValue();
        if (name.consume_back(kWorkingCopySuffix) && weights.count(name.str()))
          workingCopies.push_back(b.getNamedAttr(name, n));
      }
  SmallVector<Attribute> weightNames;
  for (const std::string &w : weights)
    weightNames.push_back(b.getStringAttr(w));
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr(key::kLoss, b.getStringAttr(loss)),
      b.getNamedAttr(key::kChecksOverflow, b.getBoolAttr(checksOverflow)),
      b.getNamedAttr(key::kStaticScale, b.getF64FloatAttr(staticScale)),
      b.getNamedAttr(key::kClasses, intsByName(b, classes)),
      b.getNamedAttr(key::kIgnoreIndex, intsByName(b, ignoreIndex)),
      b.getNamedAttr(key::kWeights, b.getArrayAttr(weightNames)),
      b.getNamedAttr(key::kWorkingCopies, b.getDictionaryAttr(workingCopies)),
      b.getNamedAttr(key::kAccumulate, b.getI64IntegerAttr(accumulate)),
  };
  if (worldSize > 1)
    entries.push_back(
        b.getNamedAttr(key::kWorldSize, b.getI64IntegerAttr(worldSize)));
  return b.getDictionaryAttr(entries);
}

struct AmpDescribeStepPass
    : impl::AmpDescribeStepPassBase<AmpDescribeStepPass> {
  void runOnOperation() override {
    auto f = getOperation().lookupSymbol<func::FuncOp>("train_step");
    if (!f || f.isExternal())
      return;
    f->setAttr(graph::kStepInfoAttr, describe(f));
  }
};

} // namespace
} // namespace ampc
