//===- StepState.cpp - state arguments and results of @train_step ---------===//

#include "compiler/Transforms/StepState.h"

#include "dialects/Graph/GraphOps.h"

using namespace mlir;

namespace ampc {

BlockArgument addStateArgument(func::FuncOp step, Type type, StringRef name,
                               Attribute init, Location loc) {
  MLIRContext *ctx = step.getContext();
  unsigned idx = step.getNumArguments();
  NamedAttrList attrs;
  attrs.set(graph::kNameAttr, StringAttr::get(ctx, name));
  attrs.set(graph::kInitAttr, init);
  attrs.set(graph::kStateAttr, UnitAttr::get(ctx));
  (void)step.insertArgument(idx, type, attrs.getDictionary(ctx), loc);
  return step.getArgument(idx);
}

void appendResults(func::FuncOp step, ArrayRef<StepResult> extra) {
  MLIRContext *ctx = step.getContext();
  auto ret = cast<func::ReturnOp>(step.getBody().front().getTerminator());
  SmallVector<Value> results(ret.getOperands());
  SmallVector<DictionaryAttr> attrs;
  for (unsigned i = 0; i < results.size(); ++i)
    attrs.push_back(step.getResultAttrDict(i));
  for (const StepResult &r : extra) {
    results.push_back(r.value);
    NamedAttrList a;
    if (r.updates) {
      Attribute name = step.getArgAttr(*r.updates, graph::kNameAttr);
      a.set(graph::kNameAttr,
            name ? name
                 : StringAttr::get(ctx,
                                   "argument " + std::to_string(*r.updates)));
      a.set(graph::kUpdatesAttr,
            IntegerAttr::get(IntegerType::get(ctx, 64), *r.updates));
    } else {
      a.set(graph::kNameAttr, StringAttr::get(ctx, r.name));
    }
    attrs.push_back(a.getDictionary(ctx));
  }
  ret->setOperands(results);
  step.setType(FunctionType::get(ctx, step.getArgumentTypes(),
                                 ValueRange(results).getTypes()));
  step.setAllResultAttrs(attrs);
}

} // namespace ampc
