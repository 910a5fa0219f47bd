//===- GemmEpilogues.cpp - post-ops fused into gemm kernels ---------------===//
//
// Which op may follow a GEMM inside its kernel, and in which role, is read
// from runtime/GemmEpilogue.h's table, the one the backends execute; this
// file only finds the patterns in the IR:
//
//   forward   y = act(gemm(a, b[, bias]))  G used once: "relu", "gelu"
//                                          G also read elsewhere (gelu's
//                                          gradient): "gelu_aux", G a 2nd
//                                          result
//   backward  dx = act_grad(gemm(dy, w), v)                 "drelu", "dgelu"
//   bias grad dw = gemm(dy, x){trans_a}, db = reduce_sum(dy){axes = [0]}
//                                                           "bgrad"
//
// The bias gradient rides on the dW GEMM, which reads the stored dY, and
// not on the dX GEMM's DRELU_BGRAD form, which would sum the f32 gradient
// before it is rounded: the dW form sums exactly the values the unfused
// reduce_sum sums, on the CPU and on cuBLASLt (BGRADB) alike.
//
//===----------------------------------------------------------------------===//

#include "compiler/Conversion/GraphToRt/GemmEpilogues.h"

#include "dialects/Graph/GraphOps.h"
#include "dialects/Rt/RtOps.h"
#include "runtime/GemmEpilogue.h"

using namespace mlir;

namespace ampc {
namespace {

using rt::EpilogueInfo;
using rt::EpilogueRole;

/// The epilogue that fuses `op` in `role`, for graph ops only.
const EpilogueInfo *epilogueFor(Operation *op, EpilogueRole role) {
  if (!op->getDialect() || !isa<graph::GraphDialect>(op->getDialect()))
    return nullptr;
  return rt::findEpilogue(op->getName().stripDialect(), role);
}

/// c absent, or a vector along the output's last dim ([N] or [1, N])
/// added with beta 1: the bias cuBLASLt's epilogues add.
bool biasFits(graph::GemmOp g) {
  Value c = g.getC();
  if (!c)
    return true;
  auto ct = cast<ShapedType>(c.getType());
  auto out = cast<ShapedType>(g.getType());
  return g.getBeta().convertToDouble() == 1.0 &&
         ct.getNumElements() == out.getDimSize(1) &&
         (ct.getRank() == 1 || (ct.getRank() == 2 && ct.getDimSize(0) == 1));
}

bool isFloat(Value v) {
  return isa<FloatType>(cast<ShapedType>(v.getType()).getElementType());
}

/// Is `v` available at `at` (both in `block`)?
bool definedBefore(Value v, Operation *at) {
  Operation *def = v.getDefiningOp();
  return !def || def->getBlock() != at->getBlock() || def->isBeforeInBlock(at);
}

struct Fusion {
  graph::GemmOp gemm;
  Operation *post = nullptr;
  const EpilogueInfo *epilogue = nullptr;
};

/// The activation, or the activation gradient, this gemm's result feeds.
std::optional<Fusion> matchResultUser(graph::GemmOp g) {
  Value r = g.getOutput();
  if (!isFloat(r) || r.use_empty())
    return std::nullopt;
  if (r.hasOneUse()) {
    Operation *u = *r.getUsers().begin();
    if (biasFits(g) && u->getNumOperands() == 1)
      if (const EpilogueInfo *e = epilogueFor(u, EpilogueRole::Activation))
        return Fusion{g, u, e};
    // The forward value the gradient reads must be one whole [M, N] tensor.
    if (!g.getC() && u->getNumOperands() == 2 && u->getOperand(0) == r &&
        u->getOperand(1) != r && u->getOperand(1).getType() == r.getType())
      if (const EpilogueInfo *e = epilogueFor(u, EpilogueRole::Gradient))
        return Fusion{g, u, e};
    return std::nullopt;
  }
  // Read by one activation and by others (the activation's gradient): the
  // kernel writes G too, where the activation has such a form.
  if (!biasFits(g))
    return std::nullopt;
  Operation *act = nullptr;
  const EpilogueInfo *e = nullptr;
  for (Operation *u : r.getUsers()) {
    const EpilogueInfo *ue = u->getNumOperands() == 1
                                 ? epilogueFor(u, EpilogueRole::ActivationAux)
                                 : nullptr;
    if (!ue)
      continue;
    if (act && act != u)
      return std::nullopt; // two activations of one GEMM: keep both apart
    act = u;
    e = ue;
  }
  if (!act)
    return std::nullopt;
  return Fusion{g, act, e};
}

/// A reduce_sum over axis 0 of the dW GEMM's dY (gemm's `a` under trans_a):
/// the bias gradient of the layer.
std::optional<Fusion> matchBiasGradient(graph::GemmOp g) {
  Value dy = g.getA();
  auto t = cast<ShapedType>(dy.getType());
  if (g.getC() || !g.getTransA() || t.getRank() != 2 || !isFloat(dy))
    return std::nullopt;
  for (Operation *u : dy.getUsers()) {
    const EpilogueInfo *e = epilogueFor(u, EpilogueRole::BiasGradient);
    auto axes = u->getAttrOfType<DenseI64ArrayAttr>("axes");
    if (!e || u->getBlock() != g->getBlock() || !axes ||
        axes.asArrayRef() != ArrayRef<int64_t>{0})
      continue;
    // The kernel stands where the earlier of the two stood: what it reads
    // must exist there.
    if (u->isBeforeInBlock(g) && !definedBefore(g.getB(), u))
      continue;
    return Fusion{g, u, e};
  }
  return std::nullopt;
}

void buildKernel(OpBuilder &b, const Fusion &f) {
  graph::GemmOp g = f.gemm;
  Operation *post = f.post;
  const EpilogueInfo &e = *f.epilogue;
  SmallVector<Value> inputs(g->getOperands());
  unsigned n = inputs.size();
  if (e.hasExtraInput())
    inputs.push_back(post->getOperand(1));
  Value gOut = g.getOutput(), pOut = post->getResult(0);
  // The kernel's results in the table's order; `from` are the values they
  // replace.
  SmallVector<Value> from;
  switch (e.role) {
  case EpilogueRole::Activation:
  case EpilogueRole::Gradient:
    from = {pOut};
    break;
  case EpilogueRole::ActivationAux:
    from = {pOut, gOut};
    break;
  case EpilogueRole::BiasGradient:
    from = {gOut, pOut};
    break;
  }
  // At the gemm, where graph-build-training placed it: the optimizer
  // update after it may then overwrite the weights the gemm read (G's other
  // readers, too, may come before the activation). Unless what the kernel
  // reads is defined only later: a gradient's forward value defined after
  // the gemm, or a bias gradient's reduce_sum placed before it (whose
  // inputs matchBiasGradient checked).
  Operation *at = g;
  if ((e.role == EpilogueRole::Gradient &&
       !definedBefore(post->getOperand(1), g)) ||
      (e.role == EpilogueRole::BiasGradient && post->isBeforeInBlock(g)))
    at = post;
  b.setInsertionPoint(at);
  SmallVector<Type> types;
  for (Value v : from)
    types.push_back(v.getType());
  auto kernel = rtir::KernelOp::create(
      b, FusedLoc::get(b.getContext(), {g->getLoc(), post->getLoc()}), types,
      inputs, b.getStringAttr("gemm"), b.getDenseI64ArrayAttr({}),
      b.getStringAttr(e.name));
  Block *body = new Block();
  kernel.getBody().push_back(body);
  SmallVector<Value> args;
  for (Value in : inputs)
    args.push_back(body->addArgument(in.getType(), in.getLoc()));
  OpBuilder inner = OpBuilder::atBlockEnd(body);
  // Operands are set by position: gemm(x, x) reads two inputs, as the
  // Program's gemm takes them.
  Operation *gc = inner.clone(*g);
  gc->setOperands(ArrayRef<Value>(args).take_front(n));
  Operation *pc = inner.clone(*post);
  switch (e.role) {
  case EpilogueRole::Activation:
  case EpilogueRole::ActivationAux:
    pc->setOperands(gc->getResult(0));
    break;
  case EpilogueRole::Gradient:
    pc->setOperands({gc->getResult(0), args[n]});
    break;
  case EpilogueRole::BiasGradient:
    pc->setOperands(args[0]);
    break;
  }
  SmallVector<Value> yielded;
  for (Value v : from)
    yielded.push_back(v == gOut ? gc->getResult(0) : pc->getResult(0));
  rtir::YieldOp::create(inner, g->getLoc(), yielded);
  for (auto [v, r] : llvm::zip(from, kernel->getResults()))
    v.replaceAllUsesWith(r);
  post->erase();
  g->erase();
}

} // namespace

void fuseGemmEpilogues(Block &block, OpBuilder &b) {
  SmallVector<graph::GemmOp> gemms(block.getOps<graph::GemmOp>());
  for (graph::GemmOp g : gemms) {
    std::optional<Fusion> f = matchResultUser(g);
    if (!f)
      f = matchBiasGradient(g);
    if (f)
      buildKernel(b, *f);
  }
}

} // namespace ampc
