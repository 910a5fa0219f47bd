//===- GraphToRt.cpp - the convert-graph-to-rt pass -----------------------===//
//
// Turns a function of graph ops into kernel launches over a planned arena:
// amp.cast becomes graph.cast, amp.guard_update graph.where, arguments become
// rt.input / rt.param, each non-elementwise op one rt.kernel, each fusion group
// one "fused" rt.kernel, reshapes views, and results rt.output. Fusion.cpp
// picks the groups, GemmEpilogues.cpp the post-ops fused into GEMMs, and
// MemoryPlan.cpp the offsets.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/Passes.h"

#include "compiler/Conversion/GraphToRt/Fusion.h"
#include "compiler/Conversion/GraphToRt/GemmEpilogues.h"
#include "compiler/Conversion/GraphToRt/MemoryBudget.h"
#include "compiler/Conversion/GraphToRt/MemoryPlan.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/IR/IRMapping.h"

namespace ampc {
#define GEN_PASS_DEF_CONVERTGRAPHTORTPASS
#include "compiler/Conversion/Passes.h.inc"
} // namespace ampc

using namespace mlir;

namespace ampc {
namespace {

/// Builds one kernel at `ops.back()` that computes `ops` (in order) from
/// the values they use that are defined outside them. Only the last op's
/// results leave the kernel.
rtir::KernelOp buildKernel(OpBuilder &b, StringRef kind,
                           ArrayRef<Operation *> ops) {
  Operation *root = ops.back();
  llvm::SmallPtrSet<Operation *, 8> inside(ops.begin(), ops.end());
  // A single op keeps its operand list as is (mul(x, x) reads x twice: the
  // kernel's inputs are the op's operands in order); a fused group reads
  // each outside value once.
  SmallVector<Value> inputs;
  llvm::SmallPtrSet<Value, 8> seen;
  for (Operation *op : ops)
    for (Value v : op->getOperands())
      if (!inside.count(v.getDefiningOp()) &&
          (ops.size() == 1 || seen.insert(v).second))
        inputs.push_back(v);
  b.setInsertionPoint(root);
  auto kernel =
      rtir::KernelOp::create(b, root->getLoc(), root->getResultTypes(), inputs,
                             b.getStringAttr(kind), b.getDenseI64ArrayAttr({}));
  Block *body = new Block();
  kernel.getBody().push_back(body);
  IRMapping map;
  SmallVector<Value> args;
  for (Value in : inputs) {
    args.push_back(body->addArgument(in.getType(), in.getLoc()));
    map.map(in, args.back());
  }
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  for (Operation *op : ops) {
    Operation *copy = inner.clone(*op, map);
    if (ops.size() == 1)
      copy->setOperands(args);
  }
  SmallVector<Value> yielded;
  for (Value r : root->getResults())
    yielded.push_back(map.lookup(r));
  rtir::YieldOp::create(inner, root->getLoc(), yielded);
  root->replaceAllUsesWith(kernel->getResults());
  for (Operation *op : llvm::reverse(ops))
    op->erase();
  return kernel;
}

/// Fused ops keep every location; a kernel of several ops is located at all
/// of the ONNX nodes it computes.
Location fusedLoc(ArrayRef<Operation *> ops) {
  SmallVector<Location> locs;
  for (Operation *op : ops)
    locs.push_back(op->getLoc());
  return FusedLoc::get(ops.front()->getContext(), locs);
}

/// The working copy of a parameter cast from its new value (placed right
/// after the update by graph-build-training) becomes one more output of the
/// update kernel: the optimizer rounds the new value in the loop that
/// computes it, so the new master is not read a second time.
void fuseWorkingCopies(Block &block, OpBuilder &b) {
  for (auto c : llvm::make_early_inc_range(block.getOps<amp::CastOp>())) {
    auto res = dyn_cast<OpResult>(c.getInput());
    if (!c->hasAttr(amp::kWorkingCopyAttr) || !res ||
        res.getResultNumber() != 0 ||
        !isa<graph::OptimizerUpdateOpInterface>(res.getOwner()))
      continue;
    Operation *upd = res.getOwner();
    SmallVector<Type> types(upd->getResultTypes());
    types.push_back(c.getType());
    b.setInsertionPoint(upd);
    auto kernel =
        rtir::KernelOp::create(b, upd->getLoc(), types, upd->getOperands(),
                               b.getStringAttr(upd->getName().stripDialect()),
                               b.getDenseI64ArrayAttr({}));
    Block *body = new Block();
    kernel.getBody().push_back(body);
    SmallVector<Value> args;
    for (Value in : upd->getOperands())
      args.push_back(body->addArgument(in.getType(), in.getLoc()));
    OpBuilder inner = OpBuilder::atBlockEnd(body);
    // The body op takes the inputs in order, even one value read twice.
    Operation *copy = inner.clone(*upd);
    copy->setOperands(args);
    SmallVector<Value> yielded(copy->getResults());
    yielded.push_back(graph::CastOp::create(inner, c.getLoc(), c.getType(),
                                            copy->getResult(0)));
    rtir::YieldOp::create(inner, upd->getLoc(), yielded);
    c.replaceAllUsesWith(kernel->getResults().back());
    upd->replaceAllUsesWith(kernel->getResults().drop_back());
    c.erase();
    upd->erase();
  }
}

/// An amp.cast computes what a float-to-float graph.cast does (round to
/// nearest even); it is told apart only so the AMP passes may move and
/// fold it. From here on it is that graph.cast, so it fuses and runs as the
/// runtime's "cast" like any other.
void castsToGraph(Block &block, OpBuilder &b) {
  for (auto c : llvm::make_early_inc_range(block.getOps<amp::CastOp>())) {
    b.setInsertionPoint(c);
    auto g = graph::CastOp::create(b, c.getLoc(), c.getType(), c.getInput());
    c.replaceAllUsesWith(g.getOutput());
    c.erase();
  }
}

/// A guarded value is a select of the old one: elementwise, so it fuses
/// with what computes the new value and is planned in place over it. The
/// optimizer updates, the bulk of the state, are skipped by their own
/// `skip` operand instead.
void guardsToWhere(Block &block, OpBuilder &b) {
  for (auto g :
       llvm::make_early_inc_range(block.getOps<amp::GuardUpdateOp>())) {
    b.setInsertionPoint(g);
    for (auto [fresh, old, r] :
         llvm::zip(g.getUpdated(), g.getOld(), g.getResults()))
      r.replaceAllUsesWith(graph::WhereOp::create(b, g.getLoc(), r.getType(),
                                                  g.getFoundInf(), old, fresh)
                               .getOutput());
    g.erase();
  }
}

LogicalResult lowerFunction(func::FuncOp func, bool fuse, bool reuse,
                            uint64_t memoryBudget) {
  if (func.isExternal())
    return success();
  // Before lowering: sizes are taken of every value from here on.
  if (failed(checkValueSizes(func, memoryBudget)))
    return failure();
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("has ") << func.getBody().getBlocks().size()
                                    << " blocks; convert-graph-to-rt needs one";
  Block &block = func.getBody().front();
  OpBuilder b(func.getContext());
  if (fuse)
    fuseWorkingCopies(block, b);
  castsToGraph(block, b);
  guardsToWhere(block, b);
  if (fuse)
    fuseGemmEpilogues(block, b);

  // Arguments: graph inputs and parameters.
  b.setInsertionPointToStart(&block);
  SmallVector<Value> args;
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    BlockArgument arg = block.getArgument(i);
    auto name = func.getArgAttrOfType<StringAttr>(i, graph::kNameAttr);
    std::string nameStr =
        name ? name.getValue().str() : "arg" + std::to_string(i);
    Value v;
    if (auto init = func.getArgAttrOfType<ElementsAttr>(i, graph::kInitAttr))
      v = rtir::ParamOp::create(b, arg.getLoc(), arg.getType(), nameStr, 0,
                                init);
    else
      v = rtir::InputOp::create(b, arg.getLoc(), arg.getType(), nameStr, 0);
    arg.replaceAllUsesWith(v);
    args.push_back(v);
  }

  // Fusion groups first (they only look at elementwise ops), then one
  // kernel per remaining compute op.
  for (SmallVector<Operation *> &group : planFusion(block, fuse)) {
    StringRef kind = group.size() == 1 ? group.front()->getName().stripDialect()
                                       : StringRef("fused");
    Location loc =
        group.size() == 1 ? group.front()->getLoc() : fusedLoc(group);
    rtir::KernelOp k = buildKernel(b, kind, group);
    k->setLoc(loc);
  }
  SmallVector<Operation *> rest;
  for (Operation &op : block)
    if ((op.getDialect() && isa<graph::GraphDialect>(op.getDialect()) &&
         !isa<graph::ConstantOp>(op)) ||
        isa<amp::CheckFiniteOp, amp::UpdateScaleOp>(op))
      rest.push_back(&op);
  for (Operation *op : rest) {
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op)) {
      b.setInsertionPoint(op);
      auto view = rtir::ViewOp::create(b, op->getLoc(), reshape.getType(),
                                       reshape.getInput());
      reshape.replaceAllUsesWith(view.getOutput());
      reshape.erase();
      continue;
    }
    buildKernel(b, op->getName().stripDialect(), {op});
  }

  // Results.
  auto ret = cast<func::ReturnOp>(block.getTerminator());
  b.setInsertionPoint(ret);
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    if (auto tied =
            func.getResultAttrOfType<IntegerAttr>(i, graph::kUpdatesAttr)) {
      int64_t a = tied.getInt();
      if (a < 0 || a >= static_cast<int64_t>(args.size()) ||
          !args[a].getDefiningOp<rtir::ParamOp>())
        return func.emitOpError("result ")
               << i << " updates argument " << a
               << ", which is not a parameter (an argument with graph.init)";
      rtir::UpdateOp::create(b, ret.getLoc(), args[a], v);
      continue;
    }
    auto name = func.getResultAttrOfType<StringAttr>(i, graph::kNameAttr);
    rtir::OutputOp::create(
        b, ret.getLoc(),
        name ? name.getValue().str() : "output" + std::to_string(i), v);
  }
  func::ReturnOp::create(b, ret.getLoc());
  ret.erase();
  llvm::BitVector all(func.getNumArguments(), true);
  if (failed(func.eraseArguments(all)))
    return failure();
  func.setType(FunctionType::get(func.getContext(), {}, {}));
  func.setAllResultAttrs(ArrayRef<DictionaryAttr>{});

  for (Operation &op : block)
    if (!isa<rtir::InputOp, rtir::ParamOp, rtir::KernelOp, rtir::ViewOp,
             rtir::OutputOp, rtir::UpdateOp, graph::ConstantOp, func::ReturnOp>(
            op))
      return op.emitOpError("cannot be lowered to the rt dialect");

  if (failed(planMemory(func, reuse)))
    return failure();
  return checkArena(func, memoryBudget);
}

struct ConvertGraphToRtPass
    : impl::ConvertGraphToRtPassBase<ConvertGraphToRtPass> {
  using Base::Base;
  void runOnOperation() override {
    for (auto func : getOperation().getOps<func::FuncOp>())
      if (failed(lowerFunction(func, fuse, reuseMemory, memoryBudget)))
        return signalPassFailure();
  }
};

} // namespace
} // namespace ampc
