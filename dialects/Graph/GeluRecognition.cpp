//===- GeluRecognition.cpp - GELU written out becomes graph.gelu ----------===//
//
// PyTorch exports nn.GELU (before opset 20) as the ops of its formula:
//   erf form:  x * (erf(x / sqrt(2)) + 1) * 0.5
//   tanh form: x * (tanh((x + 0.044715 x^3) * sqrt(2 / pi)) + 1) * 0.5
// (the products in any order, x / sqrt(2) also as x * (1 / sqrt(2)), x^3 as
// x * x * x or x ^ 3). As one graph.gelu the op gets GELU's AMP category and
// gradient, fuses as one elementwise op, and can become a GEMM epilogue
// (GELU_BIAS) after a Linear. The patterns are canonicalizations of the erf
// and tanh at their centre; they run before amp-auto-cast decides.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/RecognitionMatchers.h"

#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;

namespace ampc::graph {
namespace {

using namespace recognition;

/// x * `a` * 0.5 in any grouping, from `a` = add(activation, 1) on: the
/// final mul, whose result the GELU of `x` replaces; null when the chain is
/// not that or a value of it has other users.
Operation *timesHalfX(Value a, Value x) {
  Operation *m1 = onlyUser(a);
  Value p = partnerOf<MulOp>(m1, a);
  if (!p || !m1->getResult(0).hasOneUse())
    return nullptr;
  Operation *m2 = onlyUser(m1->getResult(0));
  // (x * a) * 0.5
  if (p == x && otherThanSplat<MulOp>(m2, 0.5) == m1->getResult(0))
    return m2;
  // x * (a * 0.5)
  if (isSplat(p, 0.5) && partnerOf<MulOp>(m2, m1->getResult(0)) == x)
    return m2;
  // (x * 0.5) * a
  if (otherThanSplat<MulOp>(p.getDefiningOp(), 0.5) == x && p.hasOneUse())
    return m1;
  return nullptr;
}

/// Replaces `last` by graph.gelu(x) of `approximate`.
LogicalResult replaceByGelu(Operation *last, Value x, StringRef approximate,
                            ArrayRef<Operation *> chain,
                            PatternRewriter &rewriter) {
  if (!last || last->getResult(0).getType() != x.getType())
    return failure();
  SmallVector<Location> locs;
  for (Operation *op : chain)
    locs.push_back(op->getLoc());
  locs.push_back(last->getLoc());
  rewriter.setInsertionPoint(last);
  auto gelu = GeluOp::create(rewriter, rewriter.getFusedLoc(locs), x,
                             rewriter.getStringAttr(approximate));
  rewriter.replaceOp(last, gelu.getResult());
  return success();
}

struct ErfGelu : OpRewritePattern<ErfOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ErfOp erf,
                                PatternRewriter &rewriter) const override {
    // x / sqrt(2), or x * (1 / sqrt(2)).
    Operation *scale = erf.getInput().getDefiningOp();
    Value x;
    if (auto div = dyn_cast_or_null<DivOp>(scale);
        div && isSplat(div.getRhs(), M_SQRT2, kRounded))
      x = div.getLhs();
    else
      x = otherThanSplat<MulOp>(scale, M_SQRT1_2, kRounded);
    if (!x || !erf.getInput().hasOneUse() || !erf->hasOneUse())
      return failure();
    Operation *add = onlyUser(erf.getResult());
    if (otherThanSplat<AddOp>(add, 1.0) != erf.getResult())
      return failure();
    return replaceByGelu(timesHalfX(add->getResult(0), x), x, "none",
                         {scale, erf, add}, rewriter);
  }
};

/// x * x * x (either grouping) or x ^ 3: x; null otherwise.
Value cubed(Value v) {
  Operation *op = v.getDefiningOp();
  if (auto pow = dyn_cast_or_null<PowOp>(op))
    return isSplat(pow.getRhs(), 3.0) ? pow.getLhs() : Value();
  auto m = dyn_cast_or_null<MulOp>(op);
  if (!m)
    return {};
  for (unsigned i = 0; i < 2; ++i) {
    Value x = m->getOperand(i);
    auto sq = m->getOperand(1 - i).getDefiningOp<MulOp>();
    if (sq && sq.getLhs() == x && sq.getRhs() == x)
      return x;
  }
  return {};
}

struct TanhGelu : OpRewritePattern<TanhOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(TanhOp tanh,
                                PatternRewriter &rewriter) const override {
    // (x + 0.044715 x^3) * sqrt(2 / pi)
    Operation *scale = tanh.getInput().getDefiningOp();
    Value inner = otherThanSplat<MulOp>(scale, std::sqrt(2 / M_PI), kRounded);
    auto sum = inner ? inner.getDefiningOp<AddOp>() : AddOp();
    if (!sum || !tanh->hasOneUse())
      return failure();
    Value x;
    for (unsigned i = 0; i < 2 && !x; ++i) {
      Value cube = otherThanSplat<MulOp>(sum->getOperand(1 - i).getDefiningOp(),
                                         0.044715, kRounded);
      if (cube && cubed(cube) == sum->getOperand(i))
        x = sum->getOperand(i);
    }
    if (!x)
      return failure();
    Operation *add = onlyUser(tanh.getResult());
    if (otherThanSplat<AddOp>(add, 1.0) != tanh.getResult())
      return failure();
    return replaceByGelu(timesHalfX(add->getResult(0), x), x, "tanh",
                         {scale, tanh, add}, rewriter);
  }
};

} // namespace

void ErfOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<ErfGelu>(context);
}

void TanhOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<TanhGelu>(context);
}

} // namespace ampc::graph
