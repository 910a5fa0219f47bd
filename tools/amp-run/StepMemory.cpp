//===- StepMemory.cpp - what the planned arena of a step holds ------------===//
//
// Forward and backward are told apart by data flow in the lowered step, not
// by kernel kinds or names (which drift as kernels are fused or renamed):
// - the loss is the rt.output that @train_step's `graph.loss` names; the
//   forward kernels are the kernels it depends on;
// - the parameter gradients are what an optimizer update (known by
//   an OptimizerUpdateOpInterface in the kernel's body) reads as its gradient,
//   followed back through kernels that only copy it (casts, and the
//   unscaling of a separate unscale pass where there is one);
// - the backward kernels are the kernels the gradients depend on that are
//   not forward. The loss-scale seed starts them without depending on the
//   loss, so no kernel is both.
// Byte ranges come from the planned offsets: values planned in place over
// one another are counted once where they are live together.
//
//===----------------------------------------------------------------------===//
#include "tools/amp-run/StepMemory.h"

#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

#include <algorithm>

using namespace mlir;

namespace ampc::tools {
namespace {

int64_t bytesOf(Value v) {
  return rtir::byteSize(cast<ShapedType>(v.getType()));
}

int64_t elementsOf(Value v) {
  return cast<ShapedType>(v.getType()).getNumElements();
}

/// The value whose bytes `v` names: views share their input's bytes.
Value rootOf(Value v) {
  while (auto view = v.getDefiningOp<rtir::ViewOp>())
    v = view.getInput();
  return v;
}

/// The operand of `op` that `result` is a copy of, or null:
/// - a multi-tensor op (operand i and result i share a type for all its
///   results but perhaps a last flag, as a separate unscale pass has): the
///   operand at the result's position;
/// - otherwise the one operand of the result's element count (a cast, a
///   product with a scalar, ...). An op with two such operands (an add, a
///   gemm of square matrices) computes a new value.
Value copiedOperand(Operation *op, OpResult result) {
  unsigned n = op->getNumResults(), same = 0;
  while (same < n && same < op->getNumOperands() &&
         op->getOperand(same).getType() == op->getResult(same).getType())
    ++same;
  if (n > 1 && same + 1 >= n)
    return result.getResultNumber() < same
               ? op->getOperand(result.getResultNumber())
               : Value();
  Value only;
  for (Value operand : op->getOperands()) {
    if (!isa<ShapedType>(operand.getType()) ||
        elementsOf(operand) != elementsOf(result))
      continue;
    if (only)
      return {};
    only = operand;
  }
  return only;
}

/// The kernel input that `v`, a value of `k`'s body, is a copy of, through
/// the body's ops (copiedOperand), or null.
Value copiedInput(rtir::KernelOp k, Value v) {
  while (v && !isa<BlockArgument>(v))
    v = copiedOperand(v.getDefiningOp(), cast<OpResult>(v));
  return v ? k.getInputs()[cast<BlockArgument>(v).getArgNumber()] : Value();
}

/// True for a kernel that only casts a parameter: a working copy made in the
/// step (O1, and inference at O1/O2).
bool castsParam(rtir::KernelOp k) {
  auto ops = k.getBody().front().without_terminator();
  if (k.getInputs().size() != 1 || std::distance(ops.begin(), ops.end()) != 1 ||
      !isa<graph::CastOp, amp::CastOp>(*ops.begin()))
    return false;
  return rootOf(k.getInputs()[0]).getDefiningOp<rtir::ParamOp>() != nullptr;
}

/// The union of the byte ranges [offset, offset + size).
int64_t unionBytes(std::vector<std::pair<int64_t, int64_t>> ranges) {
  std::sort(ranges.begin(), ranges.end());
  int64_t total = 0, end = INT64_MIN;
  for (auto [lo, hi] : ranges) {
    lo = std::max(lo, end);
    if (hi > lo)
      total += hi - lo;
    end = std::max(end, hi);
  }
  return total;
}

class StepMemory {
public:
  explicit StepMemory(func::FuncOp f) : f(f) {}

  ArenaBytes measure(int64_t arena);

private:
  void indexOps();
  void findWorkingCopyState(ArenaBytes &bytes);
  void findForward();
  void findGradients();
  bool inWorkingCopy(Value gradient) const;
  void findBackward();
  void measureGradients(ArenaBytes &bytes) const;
  void measureSavedForBackward(ArenaBytes &bytes) const;

  func::FuncOp f;
  /// The position of every top-level op; for each value's bytes (views
  /// resolved), the position of the last op reading them; the arena offset
  /// of every kernel result.
  DenseMap<Operation *, int64_t> position;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, int64_t> offset;
  DenseSet<Operation *> forward, backward;
  llvm::SetVector<Value> gradients;
  /// [begin, end) of every working copy kept as state.
  std::vector<std::pair<int64_t, int64_t>> workingCopyRanges;
};

void StepMemory::indexOps() {
  int64_t i = 0;
  for (Operation &op : f.getBody().front()) {
    position[&op] = i;
    if (auto k = dyn_cast<rtir::KernelOp>(op))
      for (auto [r, off] : llvm::zip(k.getResults(), k.getOffsets()))
        offset[r] = off;
    if (!isa<rtir::ViewOp>(op))
      for (Value operand : op.getOperands()) {
        int64_t &last = lastUse[rootOf(operand)];
        last = std::max(last, i);
      }
    ++i;
  }
}

/// O2's working copy of a weight is the state an update kernel writes with
/// the cast of the new parameter (graph::isUpdateWithWorkingCopy).
void StepMemory::findWorkingCopyState(ArenaBytes &bytes) {
  f.walk([&](rtir::UpdateOp u) {
    auto k = u.getValue().getDefiningOp<rtir::KernelOp>();
    if (!k || !graph::isUpdateWithWorkingCopy(k.getBody().front()))
      return;
    Operation *yield = k.getBody().front().getTerminator();
    Value written =
        yield->getOperand(cast<OpResult>(u.getValue()).getResultNumber());
    if (!written.getDefiningOp<graph::CastOp>())
      return;
    bytes.workingCopyState += bytesOf(u.getParam());
    if (auto p = u.getParam().getDefiningOp<rtir::ParamOp>()) {
      int64_t at = static_cast<int64_t>(p.getOffset());
      workingCopyRanges.push_back({at, at + bytesOf(u.getParam())});
    }
  });
}

void StepMemory::findForward() {
  auto lossName = f->getAttrOfType<StringAttr>(graph::kLossAttr);
  if (!lossName)
    return;
  SmallVector<Value> work;
  f.walk([&](rtir::OutputOp o) {
    if (o.getName() == lossName.getValue())
      work.push_back(o.getValue());
  });
  while (!work.empty()) {
    auto k = rootOf(work.pop_back_val()).getDefiningOp<rtir::KernelOp>();
    if (k && forward.insert(k).second)
      llvm::append_range(work, k.getInputs());
  }
}

void StepMemory::findGradients() {
  SmallVector<Value> work;
  f.walk([&](rtir::KernelOp k) {
    for (Operation &op : k.getBody().front().without_terminator())
      if (auto update = dyn_cast<graph::OptimizerUpdateOpInterface>(op))
        if (Value in = copiedInput(k, update.getGrad()))
          work.push_back(in);
  });
  // A gradient that a kernel wrote as a copy of another (a cast, an
  // unscaled copy) makes that other a gradient too.
  while (!work.empty()) {
    Value v = rootOf(work.pop_back_val());
    auto k = v.getDefiningOp<rtir::KernelOp>();
    if (!k || !gradients.insert(v))
      continue;
    auto yield = k.getBody().front().getTerminator();
    if (Value in = copiedInput(
            k, yield->getOperand(cast<OpResult>(v).getResultNumber())))
      work.push_back(in);
  }
}

void StepMemory::findBackward() {
  SmallVector<Operation *> work;
  for (Value g : gradients)
    work.push_back(g.getDefiningOp());
  while (!work.empty()) {
    Operation *k = work.pop_back_val();
    if (forward.contains(k) || !backward.insert(k).second)
      continue;
    for (Value in : cast<rtir::KernelOp>(k).getInputs())
      if (auto def = rootOf(in).getDefiningOp<rtir::KernelOp>())
        work.push_back(def);
  }
}

/// Whether the plan put `gradient` in a working copy's bytes (lent by
/// MemoryPlan.cpp: a lent gradient lies exactly in one; no other does).
bool StepMemory::inWorkingCopy(Value gradient) const {
  int64_t b = offset.lookup(gradient), e = b + bytesOf(gradient);
  return llvm::any_of(workingCopyRanges, [&](auto range) {
    return range.first <= b && e <= range.second;
  });
}

/// The most gradient bytes live at one kernel, and how many of those lie
/// in working copies' bytes.
void StepMemory::measureGradients(ArenaBytes &bytes) const {
  DenseSet<Value> lentSet; // each gradient asked once
  for (Value g : gradients)
    if (inWorkingCopy(g))
      lentSet.insert(g);
  for (Value at : gradients) {
    // The live set changes only where a gradient is written: its peak is
    // at one of those kernels.
    int64_t t = position.lookup(at.getDefiningOp());
    std::vector<std::pair<int64_t, int64_t>> live, lent;
    for (Value g : gradients)
      if (position.lookup(g.getDefiningOp()) <= t && t <= lastUse.lookup(g)) {
        std::pair<int64_t, int64_t> range{offset.lookup(g),
                                          offset.lookup(g) + bytesOf(g)};
        live.push_back(range);
        if (lentSet.contains(g))
          lent.push_back(range);
      }
    int64_t total = unionBytes(std::move(live));
    if (total > bytes.gradients) {
      bytes.gradients = total;
      bytes.gradientsInWorkingCopies = unionBytes(std::move(lent));
    }
  }
}

void StepMemory::measureSavedForBackward(ArenaBytes &bytes) const {
  llvm::SetVector<Value> saved;
  for (Operation *k : backward)
    for (Value in : cast<rtir::KernelOp>(k).getInputs()) {
      Value v = rootOf(in);
      auto def = v.getDefiningOp<rtir::KernelOp>();
      // An input the backward pass reads (the f32 step's first weight
      // gradient reads the batch) is kept for it as much as the f16 copy
      // an AMP step reads there instead.
      if ((def && forward.contains(def) && !castsParam(def)) ||
          v.getDefiningOp<rtir::InputOp>())
        saved.insert(v);
    }
  for (Value v : saved) {
    bytes.savedForBackward += bytesOf(v);
    if (cast<ShapedType>(v.getType()).getElementType().isF32())
      bytes.savedForBackwardF32 += bytesOf(v);
  }
}

ArenaBytes StepMemory::measure(int64_t arena) {
  ArenaBytes bytes;
  bytes.arena = arena;
  indexOps();
  findWorkingCopyState(bytes);
  f.walk([&](Operation *op) {
    if (isa<rtir::ParamOp>(op))
      bytes.params += bytesOf(op->getResult(0));
    else if (isa<rtir::InputOp>(op))
      bytes.inputs += bytesOf(op->getResult(0));
    else if (auto k = dyn_cast<rtir::KernelOp>(op); k && castsParam(k))
      bytes.workingCopyCasts += bytesOf(k->getResult(0));
  });
  bytes.params -= bytes.workingCopyState;
  findForward();
  findGradients();
  findBackward();
  measureGradients(bytes);
  measureSavedForBackward(bytes);
  return bytes;
}

} // namespace

FailureOr<ArenaBytes> measureArena(ModuleOp lowered, StringRef name) {
  auto f = lowered.lookupSymbol<func::FuncOp>(name);
  if (!f)
    return failure();
  auto size = f->getAttrOfType<IntegerAttr>(rtir::kArenaSizeAttr);
  if (!size)
    return failure();
  return StepMemory(f).measure(size.getInt());
}

} // namespace ampc::tools
