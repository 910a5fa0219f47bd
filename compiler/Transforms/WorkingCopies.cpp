//===- WorkingCopies.cpp - working copies written by the update -----------===//
//
// Runs after the backward graph and the updates exist, so the gradient of
// a working copy has already flowed through its cast to the f32 master.
// Casting the new master right after the update rounds the same f32 value
// that next step's cast at the top would, so the numbers do not change;
// what changes is that the cast leaves the critical path of the forward
// and can be fused into the update kernel.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/WorkingCopies.h"

#include "compiler/Transforms/StepState.h"

#include "compiler/Transforms/ConvertElements.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace ampc {

LogicalResult makeWorkingCopiesState(func::FuncOp step) {
  Block &block = step.getBody().front();
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  llvm::DenseMap<unsigned, unsigned> resultOf; // argument -> its new value
  for (unsigned r = 0; r < ret.getNumOperands(); ++r)
    if (auto tied =
            step.getResultAttrOfType<IntegerAttr>(r, graph::kUpdatesAttr))
      resultOf[tied.getInt()] = r;

  SmallVector<amp::CastOp> marked;
  for (auto c : block.getOps<amp::CastOp>()) {
    auto p = dyn_cast<BlockArgument>(c.getInput());
    if (c->hasAttr(amp::kWorkingCopyAttr) && p && p.getOwner() == &block &&
        resultOf.count(p.getArgNumber()))
      marked.push_back(c);
  }
  if (marked.empty())
    return success();

  SmallVector<StepResult> copies;
  for (amp::CastOp c : marked) {
    unsigned p = cast<BlockArgument>(c.getInput()).getArgNumber();
    auto pname = step.getArgAttrOfType<StringAttr>(p, graph::kNameAttr);
    std::string name =
        (pname ? pname.getValue().str() : "argument " + std::to_string(p)) +
        kWorkingCopySuffix.str();
    auto type = cast<RankedTensorType>(c.getType());
    auto init = step.getArgAttrOfType<ElementsAttr>(p, graph::kInitAttr);
    FailureOr<ElementsAttr> rounded = failure();
    if (init)
      rounded =
          convertElements(init, cast<FloatType>(type.getElementType()), name);
    if (failed(rounded))
      return c.emitOpError("graph-build-training: cannot round the initial "
                           "value of '")
             << name << "' to " << type;

    BlockArgument working =
        addStateArgument(step, type, name, *rounded, c.getLoc());
    c.getOutput().replaceAllUsesWith(working);

    // Right after the update. Every read of the old copy (the forward ops
    // after the cast, and their gradients) comes before the gradient of the
    // cast, which the update reads, so the new copy can take its bytes.
    Value newParam = ret.getOperand(resultOf[p]);
    if (Operation *upd = newParam.getDefiningOp())
      c->moveAfter(upd);
    else
      c->moveBefore(ret);
    c.getInputMutable().assign(newParam);

    copies.push_back({c.getOutput(), working.getArgNumber(), ""});
  }
  appendResults(step, copies);
  return success();
}

} // namespace ampc
