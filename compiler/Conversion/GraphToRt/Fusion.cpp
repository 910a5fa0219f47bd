//===- Fusion.cpp - grouping elementwise chains into kernels --------------===//
//
// Groups grow backwards from a root through producers whose every user is
// already in the group, so no intermediate value has to be stored. All
// members have the root's shape: a fused kernel walks one index space, and
// only its inputs broadcast.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToRt/Fusion.h"

#include "dialects/Graph/GraphOps.h"

#include "llvm/ADT/DenseMap.h"

using namespace mlir;

namespace ampc {

bool isElementwise(Operation *op) {
  return op->hasTrait<graph::OpTrait::Fusible>();
}

static ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

SmallVector<SmallVector<Operation *>> planFusion(Block &block, bool fuse) {
  SmallVector<SmallVector<Operation *>> groups;
  DenseMap<Operation *, unsigned> groupOf;
  DenseMap<Operation *, unsigned> order;
  unsigned n = 0;
  for (Operation &op : block)
    order[&op] = n++;

  for (Operation &rootRef : llvm::reverse(block)) {
    Operation *root = &rootRef;
    if (!isElementwise(root) || groupOf.count(root))
      continue;
    unsigned g = groups.size();
    groups.emplace_back();
    SmallVector<Operation *> &members = groups.back();
    members.push_back(root);
    groupOf[root] = g;
    if (!fuse)
      continue;
    ArrayRef<int64_t> shape = shapeOf(root->getResult(0));
    SmallVector<Operation *> worklist{root};
    while (!worklist.empty()) {
      Operation *cur = worklist.pop_back_val();
      for (Value operand : cur->getOperands()) {
        Operation *p = operand.getDefiningOp();
        if (!p || p->getBlock() != &block || !isElementwise(p) ||
            groupOf.count(p) || shapeOf(p->getResult(0)) != shape)
          continue;
        bool allUsersInGroup = llvm::all_of(p->getUsers(), [&](Operation *u) {
          auto it = groupOf.find(u);
          return it != groupOf.end() && it->second == g;
        });
        if (!allUsersInGroup)
          continue;
        groupOf[p] = g;
        members.push_back(p);
        worklist.push_back(p);
      }
    }
    llvm::sort(members,
               [&](Operation *a, Operation *b) { return order[a] < order[b]; });
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

} // namespace ampc
