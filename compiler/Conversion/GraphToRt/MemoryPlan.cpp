//===- MemoryPlan.cpp - arena offsets for an rt function ------------------===//
//
// Liveness over the op order: a value's bytes (shared by its views) are live
// from the op that writes them to the last op that reads them or any view
// of them; outputs and parameters live to the end. Offsets come from a
// best-fit free list, allocated before an op's dead inputs are released so
// that a kernel never writes over what it reads, except where a fused
// elementwise kernel (fused or not) is planned in place over a same-typed input
// that dies there (element i is read before it is written).
//
// A parameter's new value (rt.update) goes into the parameter's own bytes
// when the kernel that writes it runs after the parameter's last read, or
// at that read if the kernel is elementwise or an optimizer update (which
// read element i of every input before writing element i of any output,
// the rounded working copy of the new parameter included).
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToRt/MemoryPlan.h"

#include "compiler/Conversion/GraphToRt/Fusion.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <limits>
#include <map>

using namespace mlir;

namespace ampc {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();

class Arena {
public:
  explicit Arena(bool reuse) : reuse_(reuse) {}

  /// The offset of `bytes` new bytes; -1 when the arena would pass int64.
  int64_t allocate(int64_t bytes) {
    int64_t size = roundUp(bytes);
    if (size < 0)
      return -1;
    if (reuse_) {
      auto best = free_.end();
      for (auto it = free_.begin(); it != free_.end(); ++it)
        if (it->second >= size &&
            (best == free_.end() || it->second < best->second))
          best = it;
      if (best != free_.end()) {
        int64_t off = best->first, left = best->second - size;
        free_.erase(best);
        if (left)
          free_[off + size] = left;
        return off;
      }
      // Grow the arena from a free block that ends at the top.
      if (!free_.empty()) {
        auto last = std::prev(free_.end());
        if (last->first + last->second == top_) {
          int64_t off = last->first;
          if (llvm::AddOverflow(off, size, top_))
            return -1;
          free_.erase(last);
          return off;
        }
      }
    }
    int64_t off = top_;
    if (llvm::AddOverflow(top_, size, top_))
      return -1;
    return off;
  }

  void release(int64_t off, int64_t bytes) {
    if (!reuse_)
      return;
    int64_t size = roundUp(bytes);
    auto it = free_.emplace(off, size).first;
    auto next = std::next(it);
    if (next != free_.end() && it->first + it->second == next->first) {
      it->second += next->second;
      free_.erase(next);
    }
    if (it != free_.begin()) {
      auto prev = std::prev(it);
      if (prev->first + prev->second == it->first) {
        prev->second += it->second;
        free_.erase(it);
      }
    }
  }

  int64_t size() const { return top_; }

private:
  /// `bytes` rounded up to the alignment, or -1 when that passes int64.
  static int64_t roundUp(int64_t bytes) {
    int64_t a = rtir::kArenaAlignment;
    if (bytes > std::numeric_limits<int64_t>::max() - (a - 1))
      return -1;
    return std::max<int64_t>(a, (bytes + a - 1) / a * a);
  }
  bool reuse_;
  int64_t top_ = 0;
  std::map<int64_t, int64_t> free_; // offset -> size
};

/// One result computed by elementwise ops only (fused or not).
bool isElementwiseKernel(rtir::KernelOp kernel) {
  return kernel.getNumResults() == 1 &&
         llvm::all_of(kernel.getBody().front().without_terminator(),
                      [](Operation &o) { return isElementwise(&o); });
}

/// Kernels whose outputs may overlay the inputs they read for the last
/// time, element for element: elementwise ones, and optimizer updates
/// (alone, or writing a working copy too).
bool updatesInPlace(rtir::KernelOp kernel) {
  if (isElementwiseKernel(kernel))
    return true;
  Block &body = kernel.getBody().front();
  auto ops = body.without_terminator();
  return (llvm::hasSingleElement(ops) &&
          isa<graph::OptimizerUpdateOpInterface>(*ops.begin())) ||
         graph::isUpdateWithWorkingCopy(body);
}

bool hasStorage(Value v) {
  Operation *def = v.getDefiningOp();
  return def && isa<rtir::InputOp, rtir::ParamOp, rtir::KernelOp>(def);
}

} // namespace

LogicalResult planMemory(func::FuncOp func, bool reuse) {
  Block &block = func.getBody().front();
  // The value that owns the bytes a value lives in (a view's source).
  DenseMap<Value, Value> root;
  auto rootOf = [&](Value v) {
    auto it = root.find(v);
    return it == root.end() ? v : it->second;
  };
  DenseMap<Operation *, int64_t> index;
  DenseMap<Value, int64_t> lastUse;
  DenseMap<Value, int64_t> paramLastRead; // kernels only
  DenseMap<Value, Value> updates;         // new value -> its parameter
  int64_t n = 0;
  for (Operation &op : block) {
    index[&op] = n;
    if (auto view = dyn_cast<rtir::ViewOp>(op))
      root[view.getOutput()] = rootOf(view.getInput());
    if (auto upd = dyn_cast<rtir::UpdateOp>(op)) {
      updates[upd.getValue()] = upd.getParam();
      // A parameter that is another's new value is read at the end.
      Value r = rootOf(upd.getValue());
      if (isa_and_nonnull<rtir::ParamOp>(r.getDefiningOp()))
        paramLastRead[r] = kForever;
    }
    if (isa<rtir::KernelOp>(op))
      for (Value v : op.getOperands())
        if (isa_and_nonnull<rtir::ParamOp>(rootOf(v).getDefiningOp()))
          paramLastRead[rootOf(v)] = n;
    for (Value r : op.getResults())
      if (hasStorage(r))
        lastUse[r] = isa<rtir::ParamOp>(op) ? kForever : n;
    for (Value v : op.getOperands()) {
      Value r = rootOf(v);
      if (!lastUse.count(r))
        continue; // a constant
      lastUse[r] = isa<rtir::OutputOp, rtir::UpdateOp>(op)
                       ? kForever
                       : std::max(lastUse[r], n);
    }
    ++n;
  }

  Arena arena(reuse);
  DenseMap<Value, int64_t> offset;
  auto bytes = [](Value v) {
    return rtir::byteSize(cast<ShapedType>(v.getType()));
  };
  // Every value's size fits int64 (checkValueSizes); their sum may not.
  auto allocate = [&](Value v) -> FailureOr<int64_t> {
    int64_t off = arena.allocate(bytes(v));
    if (off < 0)
      return func.emitError() << "function '" << func.getSymName()
                              << "' needs an arena of more bytes than int64 "
                                 "can count",
             failure();
    return off;
  };
  // An input or a parameter: bytes of its own for its whole life.
  auto place = [&](auto op) -> LogicalResult {
    FailureOr<int64_t> off = allocate(op);
    if (failed(off))
      return failure();
    offset[op] = *off;
    op.setOffset(*off);
    return success();
  };
  Builder b(func.getContext());
  for (Operation &op : block) {
    int64_t idx = index[&op];
    if (auto in = dyn_cast<rtir::InputOp>(op)) {
      if (failed(place(in)))
        return failure();
    } else if (auto param = dyn_cast<rtir::ParamOp>(op)) {
      if (failed(place(param)))
        return failure();
    } else if (auto kernel = dyn_cast<rtir::KernelOp>(op)) {
      // An input (not a view, not a parameter) this kernel reads last, which
      // a result of type `t` may be written over.
      auto overwritable = [&](Value in, Type t) {
        return reuse && rootOf(in) == in && offset.count(in) &&
               lastUse[in] == idx && !isa<rtir::ParamOp>(in.getDefiningOp()) &&
               in.getType() == t;
      };
      Value tied;
      if (isElementwiseKernel(kernel)) {
        auto it = llvm::find_if(kernel.getInputs(), [&](Value in) {
          return overwritable(in, kernel.getResult(0).getType());
        });
        if (it != kernel.getInputs().end())
          tied = *it;
      }
      SmallVector<int64_t> offs;
      for (Value res : kernel.getResults()) {
        Value param = updates.lookup(res);
        auto it = param ? paramLastRead.find(param) : paramLastRead.end();
        int64_t read = it == paramLastRead.end() ? -1 : it->second;
        bool overParam =
            reuse && param && param.getType() == res.getType() &&
            (read < idx || (read == idx && updatesInPlace(kernel) &&
                            llvm::is_contained(kernel.getInputs(), param)));
        if (overParam) {
          offset[res] = offset[param];
        } else if (tied) {
          offset[res] = offset[tied];
        } else {
          FailureOr<int64_t> off = allocate(res);
          if (failed(off))
            return failure();
          offset[res] = *off;
        }
        offs.push_back(offset[res]);
      }
      kernel.setOffsets(offs);
      llvm::SetVector<Value> dying;
      for (Value in : kernel.getInputs()) {
        Value r = rootOf(in);
        if (offset.count(r) && lastUse[r] == idx && r != tied)
          dying.insert(r);
      }
      for (Value r : dying)
        arena.release(offset[r], bytes(r));
      for (Value res : kernel.getResults())
        if (lastUse[res] == idx)
          arena.release(offset[res], bytes(res));
      continue;
    } else {
      continue;
    }
    // An input or parameter nobody reads.
    Value v = op.getResult(0);
    if (lastUse[v] == idx)
      arena.release(offset[v], bytes(v));
  }
  func->setAttr(rtir::kArenaSizeAttr, b.getI64IntegerAttr(arena.size()));
  return success();
}

} // namespace ampc
