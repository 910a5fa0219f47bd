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
// Between its last read and its new value such a parameter's bytes hold
// nothing, and they lend them: a value of the parameter's type that is
// written after that read and read last by the kernel writing the new
// value, element for element, lives there. This is an O2 working copy and
// its gradient: the weight's low-precision gradient is written over the
// working copy the backward pass no longer reads, and the update writes the
// new working copy over the gradient, so the gradients cost no bytes of
// their own. (A skipped update writes the working copy from the master,
// which is what it held.)
//
// The walk above fixes which values share bytes and when each piece of
// bytes is live; the offsets it hands out as it goes (best fit) fragment
// the arena when a large piece follows many small ones. The same pieces
// are therefore also placed offline, largest first, each at the lowest
// offset free over its whole life, and the smaller of the two arenas wins.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToRt/MemoryPlan.h"

#include "compiler/Conversion/GraphToRt/Fusion.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <limits>
#include <map>
#include <vector>

using namespace mlir;

namespace ampc {
namespace {

constexpr int64_t kForever = std::numeric_limits<int64_t>::max();
/// Above this many pieces placeBySize (quadratic) is not tried: about 0.3 s.
constexpr size_t kMaxOfflinePieces = 16384;

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

  /// `bytes` rounded up to the alignment, or -1 when that passes int64.
  static int64_t roundUp(int64_t bytes) {
    int64_t a = rtir::kArenaAlignment;
    if (bytes > std::numeric_limits<int64_t>::max() - (a - 1))
      return -1;
    return std::max<int64_t>(a, (bytes + a - 1) / a * a);
  }

private:
  bool reuse_;
  int64_t top_ = 0;
  std::map<int64_t, int64_t> free_; // offset -> size
};

/// A piece of the arena: its rounded size, the ops it is live over
/// (inclusive), and its offset.
struct Piece {
  int64_t size, first, last, offset = 0;
};

/// Places `pieces` largest first (ties: the earlier first), each at the
/// lowest offset where it overlaps no piece already placed that is live at
/// the same time; returns the arena size, or -1 when it would pass int64.
int64_t placeBySize(std::vector<Piece> &pieces) {
  std::vector<size_t> order(pieces.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (pieces[a].size != pieces[b].size)
      return pieces[a].size > pieces[b].size;
    return pieces[a].first < pieces[b].first;
  });
  std::vector<size_t> placed; // by offset
  int64_t top = 0;
  for (size_t i : order) {
    Piece &b = pieces[i];
    int64_t at = 0;
    for (size_t j : placed) {
      const Piece &o = pieces[j];
      if (o.last < b.first || b.last < o.first)
        continue; // never live together
      if (o.offset >= at && o.offset - at >= b.size)
        break; // the gap before o fits
      at = std::max(at, o.offset + o.size);
    }
    b.offset = at;
    int64_t end;
    if (llvm::AddOverflow(at, b.size, end))
      return -1;
    top = std::max(top, end);
    placed.insert(llvm::upper_bound(placed, i,
                                    [&](size_t x, size_t y) {
                                      return pieces[x].offset <
                                             pieces[y].offset;
                                    }),
                  i);
  }
  return top;
}

graph::BodyAliasing aliasingOf(rtir::KernelOp kernel) {
  return graph::aliasingOfBody(kernel.getBody().front(),
                               kernel.getNumResults());
}

/// One result computed by elementwise ops only (fused or not).
bool isElementwiseKernel(rtir::KernelOp kernel) {
  return aliasingOf(kernel) == graph::BodyAliasing::Elementwise;
}

/// Kernels whose outputs may overlay the inputs they read for the last
/// time, element for element: elementwise ones, and optimizer updates
/// (alone, or writing a working copy too).
bool updatesInPlace(rtir::KernelOp kernel) {
  return aliasingOf(kernel) != graph::BodyAliasing::None;
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
  llvm::DenseSet<Value> paramOutputs;     // parameters an rt.output returns
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
    if (isa<rtir::OutputOp>(op))
      for (Value v : op.getOperands())
        if (isa_and_nonnull<rtir::ParamOp>(rootOf(v).getDefiningOp()))
          paramOutputs.insert(rootOf(v));
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

  // The values that live in a parameter's bytes (the header): value ->
  // that parameter. In block order, so the plan is deterministic.
  DenseMap<Value, Value> lender;
  if (reuse) {
    for (auto upd : block.getOps<rtir::UpdateOp>()) {
      Value param = upd.getParam(), newValue = upd.getValue();
      auto writer = newValue.getDefiningOp<rtir::KernelOp>();
      if (!writer || newValue.getType() != param.getType() ||
          paramOutputs.contains(param) || !updatesInPlace(writer))
        continue;
      auto read = paramLastRead.find(param);
      int64_t lastRead = read == paramLastRead.end() ? -1 : read->second;
      for (Value in : writer.getInputs()) {
        auto def = in.getDefiningOp<rtir::KernelOp>();
        if (def && in.getType() == param.getType() && !lender.count(in) &&
            index[def] > lastRead && lastUse[in] == index[writer]) {
          lender[in] = param;
          break;
        }
      }
    }
  }

  Arena arena(reuse);
  // Every value with bytes, and the piece they are in (values planned over
  // one another share one); a piece's offset is the walk's until the end.
  DenseMap<Value, unsigned> pieceOf;
  std::vector<Piece> pieces;
  auto bytes = [](Value v) {
    return rtir::byteSize(cast<ShapedType>(v.getType()));
  };
  // Every value's size fits int64 (checkValueSizes); their sum may not.
  auto allocate = [&](Value v, int64_t at) -> LogicalResult {
    int64_t off = arena.allocate(bytes(v));
    if (off < 0)
      return func.emitError() << "function '" << func.getSymName()
                              << "' needs an arena of more bytes than int64 "
                                 "can count",
             failure();
    pieceOf[v] = pieces.size();
    pieces.push_back({Arena::roundUp(bytes(v)), at, kForever, off});
    return success();
  };
  auto share = [&](Value v, Value owner) { pieceOf[v] = pieceOf[owner]; };
  auto release = [&](Value v, int64_t at) {
    Piece &p = pieces[pieceOf[v]];
    arena.release(p.offset, p.size);
    p.last = at;
  };
  for (Operation &op : block) {
    int64_t idx = index[&op];
    if (isa<rtir::InputOp, rtir::ParamOp>(op)) {
      // An input or a parameter: bytes of its own for its whole life.
      Value v = op.getResult(0);
      if (failed(allocate(v, idx)))
        return failure();
      // Released only where a kernel reads it last: a parameter persists,
      // and the session copies every input into the arena before the run,
      // so an input nobody reads keeps its bytes too (were they shared, the
      // copy would overwrite another input or a parameter).
    } else if (auto kernel = dyn_cast<rtir::KernelOp>(op)) {
      // An input (not a view, not a parameter) this kernel reads last, which
      // a result of type `t` may be written over.
      auto overwritable = [&](Value in, Type t) {
        return reuse && rootOf(in) == in && pieceOf.count(in) &&
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
      for (Value res : kernel.getResults()) {
        if (Value owner = lender.lookup(res)) {
          share(res, owner); // released with the parameter: never
          tied = Value();    // the input it would have taken dies normally
          continue;
        }
        Value param = updates.lookup(res);
        auto it = param ? paramLastRead.find(param) : paramLastRead.end();
        int64_t read = it == paramLastRead.end() ? -1 : it->second;
        bool overParam =
            reuse && param && param.getType() == res.getType() &&
            (read < idx || (read == idx && updatesInPlace(kernel) &&
                            llvm::is_contained(kernel.getInputs(), param)));
        if (overParam)
          share(res, param);
        else if (tied)
          share(res, tied);
        else if (failed(allocate(res, idx)))
          return failure();
      }
      llvm::SetVector<Value> dying;
      for (Value in : kernel.getInputs()) {
        Value r = rootOf(in);
        if (pieceOf.count(r) && lastUse[r] == idx && r != tied &&
            !lender.count(r))
          dying.insert(r);
      }
      for (Value r : dying)
        release(r, idx);
      for (Value res : kernel.getResults())
        if (lastUse[res] == idx)
          release(res, idx);
    }
  }

  // The same pieces placed offline; the smaller arena wins. Offline
  // placement compares each piece with those placed before it, so a
  // function of very many values keeps the walk's offsets.
  int64_t size = arena.size();
  if (reuse && pieces.size() <= kMaxOfflinePieces) {
    std::vector<Piece> bySize = pieces;
    int64_t sizeBySize = placeBySize(bySize);
    if (sizeBySize >= 0 && sizeBySize < size) {
      pieces = std::move(bySize);
      size = sizeBySize;
    }
  }
  auto offsetOf = [&](Value v) { return pieces[pieceOf.lookup(v)].offset; };
  for (Operation &op : block) {
    if (auto in = dyn_cast<rtir::InputOp>(op))
      in.setOffset(offsetOf(in));
    else if (auto param = dyn_cast<rtir::ParamOp>(op))
      param.setOffset(offsetOf(param));
    else if (auto kernel = dyn_cast<rtir::KernelOp>(op))
      kernel.setOffsets(llvm::map_to_vector(kernel.getResults(), offsetOf));
  }
  Builder b(func.getContext());
  func->setAttr(rtir::kArenaSizeAttr, b.getI64IntegerAttr(size));
  return success();
}

} // namespace ampc
