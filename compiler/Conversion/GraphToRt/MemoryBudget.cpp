//===- MemoryBudget.cpp - sizes convert-graph-to-rt refuses ---------------===//
//
// A value larger than the budget is reported on its own, with the ONNX
// node that computes it, before any planning: no arena could hold it. An
// arena larger than the budget is reported with the function's largest
// values, the first places to look for memory to save.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToRt/MemoryBudget.h"

#include "compiler/Conversion/TensorSize.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "llvm/ADT/STLExtras.h"

using namespace mlir;

namespace ampc {
namespace {

/// The ONNX node names a location carries (a fused kernel's: each).
void nodeNames(Location loc, SmallVectorImpl<std::string> &names) {
  if (auto name = dyn_cast<NameLoc>(loc))
    names.push_back(name.getName().str());
  else if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location l : fused.getLocations())
      nodeNames(l, names);
}

/// "graph input 'x'", "parameter 'fc1.weight'", "node 'fc1' (graph.matmul)
/// result 0" or, for a fused kernel, "node 'fc1' (rt.kernel "fused" of
/// 'fc1', 'relu1') result 0".
std::string describe(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto func = cast<func::FuncOp>(arg.getOwner()->getParentOp());
    unsigned i = arg.getArgNumber();
    auto name = func.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
    std::string n = name ? name.str() : "#" + std::to_string(i);
    return (func.getArgAttr(i, graph::kInitAttr) ? "parameter '"
                                                 : "graph input '") +
           n + "'";
  }
  Operation *op = v.getDefiningOp();
  if (auto in = dyn_cast<rtir::InputOp>(op))
    return "graph input '" + in.getName().str() + "'";
  if (auto param = dyn_cast<rtir::ParamOp>(op))
    return "parameter '" + param.getName().str() + "'";
  SmallVector<std::string> names;
  nodeNames(op->getLoc(), names);
  std::string kind = op->getName().getStringRef().str();
  if (auto kernel = dyn_cast<rtir::KernelOp>(op))
    kind = "kernel " + kernel.getKind().str();
  std::string s = names.empty() ? "" : "node '" + names.back() + "' ";
  if (names.size() > 1) {
    kind += " of";
    for (auto [i, n] : llvm::enumerate(names))
      kind += (i ? ", '" : " '") + n + "'";
  }
  return s + "(" + kind + ") result " +
         std::to_string(cast<OpResult>(v).getResultNumber());
}

/// "the memory budget of 16 GiB (17179869184 bytes, --memory-budget)".
std::string budgetText(uint64_t budget) {
  std::string s = "the memory budget of " + rt::formatBytes(budget) + " (";
  if (budget >= 1024)
    s += std::to_string(budget) + " bytes, ";
  return s + "--memory-budget)";
}

LogicalResult checkValue(Value v, Location loc, uint64_t budget) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || !type.hasStaticShape())
    return success();
  if (std::string overflow = sizeOverflow(type); !overflow.empty())
    return emitError(loc) << describe(v) << " of type " << type << " "
                          << overflow;
  int64_t bytes = *checkedByteSize(type);
  if (!budget || static_cast<uint64_t>(bytes) <= budget)
    return success();
  return emitError(loc) << describe(v) << " of type " << type << " has "
                        << *checkedNumElements(type) << " elements, "
                        << rt::describeBytes(bytes) << ", more than "
                        << budgetText(budget);
}

} // namespace

LogicalResult checkValueSizes(func::FuncOp func, uint64_t budget) {
  if (func.isExternal())
    return success();
  for (BlockArgument arg : func.getArguments())
    if (failed(checkValue(arg, func.getLoc(), budget)))
      return failure();
  WalkResult walk = func.walk([&](Operation *op) {
    for (Value r : op->getResults())
      if (failed(checkValue(r, op->getLoc(), budget)))
        return WalkResult::interrupt();
    return WalkResult::advance();
  });
  return failure(walk.wasInterrupted());
}

LogicalResult checkArena(func::FuncOp func, uint64_t budget) {
  auto size = func->getAttrOfType<IntegerAttr>(rtir::kArenaSizeAttr);
  if (!budget || !size || static_cast<uint64_t>(size.getInt()) <= budget)
    return success();
  // The values that own arena bytes, largest first.
  SmallVector<std::pair<int64_t, Value>> stored;
  for (Operation &op : func.getBody().front())
    if (isa<rtir::InputOp, rtir::ParamOp, rtir::KernelOp>(op))
      for (Value r : op.getResults())
        stored.push_back({rtir::byteSize(cast<ShapedType>(r.getType())), r});
  llvm::stable_sort(
      stored, [](const auto &a, const auto &b) { return a.first > b.first; });
  auto diag = func.emitError()
              << "function '" << func.getSymName() << "' needs an arena of "
              << rt::describeBytes(size.getInt()) << ", more than "
              << budgetText(budget) << "; its largest values: ";
  for (auto [i, s] : llvm::enumerate(llvm::ArrayRef(stored).take_front(3)))
    diag << (i ? ", " : "") << describe(s.second) << " ("
         << rt::formatBytes(s.first) << ")";
  return diag;
}

} // namespace ampc
