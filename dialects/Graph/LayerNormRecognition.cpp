//===- LayerNormRecognition.cpp - LayerNorm written out, as one op --------===//
//
// PyTorch exports nn.LayerNorm before opset 17 as the ops of its formula:
//   m = mean(x), d = x - m, v = mean(d ^ 2), y = d / sqrt(v + eps),
//   then y * weight + bias (without them for elementwise_affine=False),
// the means over the trailing normalized dimensions. As one
// graph.layer_norm the statistics are computed in f32 whatever the
// precision around them (at O2 the written-out form ran them in f16), and
// the op gets LayerNorm's AMP category and gradient. The pattern is a
// canonicalization of the sqrt at its centre; it runs before amp-auto-cast.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/RecognitionMatchers.h"

#include "mlir/IR/PatternMatch.h"

#include <cmath>

using namespace mlir;

namespace ampc::graph {
namespace {

using namespace recognition;

/// The first normalized dimension when `mean` reduces, keeping them, the
/// trailing dimensions [axis, rank) of its input; -1 otherwise.
int64_t trailingAxis(ReduceMeanOp mean) {
  if (!mean || !mean.getKeepdims())
    return -1;
  auto t = cast<RankedTensorType>(mean.getInput().getType());
  ArrayRef<int64_t> axes = mean.getAxes();
  int64_t rank = t.getRank(), first = rank - static_cast<int64_t>(axes.size());
  for (auto [k, a] : llvm::enumerate(axes))
    if (a != first + static_cast<int64_t>(k))
      return -1;
  return axes.empty() ? -1 : first;
}

/// (d ^ 2) or (d * d): d; null otherwise.
Value squared(Value v) {
  Operation *op = v.getDefiningOp();
  if (auto pow = dyn_cast_or_null<PowOp>(op))
    return isSplat(pow.getRhs(), 2.0) ? pow.getLhs() : Value();
  auto m = dyn_cast_or_null<MulOp>(op);
  return m && m.getLhs() == m.getRhs() ? m.getLhs() : Value();
}

/// `op` is a mul or add of `v` and a tensor of exactly `shape` (the
/// normalized dimensions): that tensor; null otherwise.
template <typename Op>
Value affineOperand(Operation *op, Value v, ArrayRef<int64_t> shape) {
  Value other = partnerOf<Op>(op, v);
  if (other && op->getResult(0).getType() != v.getType())
    return {};
  auto t = other ? dyn_cast<RankedTensorType>(other.getType()) : nullptr;
  return t && t.getShape() == shape ? other : Value();
}

struct WrittenOutLayerNorm : OpRewritePattern<SqrtOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(SqrtOp sqrt,
                                PatternRewriter &rewriter) const override {
    // sqrt(mean(d ^ 2) + eps), read once, by d / it.
    auto plusEps = sqrt.getInput().getDefiningOp<AddOp>();
    if (!plusEps || !sqrt->hasOneUse())
      return failure();
    Value var;
    double eps = 0;
    for (unsigned i = 0; i < 2 && !var; ++i)
      if (std::optional<APFloat> e = splatOf(plusEps->getOperand(i));
          e && !e->isNegative() && e->isFinite()) {
        var = plusEps->getOperand(1 - i);
        eps = e->convertToDouble();
      }
    auto varMean = var ? var.getDefiningOp<ReduceMeanOp>() : ReduceMeanOp();
    Value d = varMean ? squared(varMean.getInput()) : Value();
    auto sub = d ? d.getDefiningOp<SubOp>() : SubOp();
    auto mean =
        sub ? sub.getRhs().getDefiningOp<ReduceMeanOp>() : ReduceMeanOp();
    auto div = dyn_cast_or_null<DivOp>(onlyUser(sqrt.getResult()));
    if (!mean || mean.getInput() != sub.getLhs() || !div || div.getLhs() != d ||
        div.getRhs() != sqrt.getResult())
      return failure();
    Value x = sub.getLhs();
    auto type = dyn_cast<RankedTensorType>(x.getType());
    int64_t axis = trailingAxis(mean);
    if (!type || !isa<FloatType>(type.getElementType()) || axis < 0 ||
        trailingAxis(varMean) != axis || mean.getAxes() != varMean.getAxes() ||
        d.getType() != x.getType() || div.getType() != x.getType())
      return failure();
    // d is read by its square and the division only, the square and the
    // means once each: nothing of the chain outlives it.
    if (!mean->hasOneUse() || !varMean->hasOneUse() || !plusEps->hasOneUse() ||
        !varMean.getInput().hasOneUse() ||
        llvm::any_of(d.getUsers(), [&](Operation *u) {
          return u != div && u != varMean.getInput().getDefiningOp();
        }))
      return failure();

    // y * weight + bias, y * weight, or y alone.
    ArrayRef<int64_t> normalized = type.getShape().drop_front(axis);
    SmallVector<Operation *> chain = {mean, sub, varMean, plusEps, sqrt, div};
    Operation *last = div;
    Value weight, bias;
    if (Operation *u = onlyUser(div.getResult()))
      if ((weight = affineOperand<MulOp>(u, div.getResult(), normalized))) {
        last = u;
        if (Operation *w = onlyUser(u->getResult(0)))
          if ((bias = affineOperand<AddOp>(w, u->getResult(0), normalized)))
            last = w;
      }
    chain.push_back(last);
    rewriter.setInsertionPoint(last);
    if (!weight) {
      // graph.layer_norm's scale is an operand: ones.
      auto t = RankedTensorType::get(normalized, type.getElementType());
      weight = ConstantOp::create(
          rewriter, sqrt.getLoc(),
          DenseElementsAttr::get(
              t, rewriter.getFloatAttr(type.getElementType(), 1.0)));
    }
    SmallVector<Value> operands = {x, weight};
    if (bias)
      operands.push_back(bias);
    SmallVector<Location> locs;
    for (Operation *op : chain)
      locs.push_back(op->getLoc());
    auto ln = LayerNormOp::create(
        rewriter, rewriter.getFusedLoc(locs), operands,
        {rewriter.getNamedAttr("axis", rewriter.getI64IntegerAttr(axis)),
         rewriter.getNamedAttr("epsilon", rewriter.getF64FloatAttr(eps))});
    rewriter.replaceOp(last, ln.getOutput());
    return success();
  }
};

} // namespace

void SqrtOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<WrittenOutLayerNorm>(context);
}

} // namespace ampc::graph
