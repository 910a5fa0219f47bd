//===- SoftmaxRecognition.cpp - Softmax written out, as one op ------------===//
//
// Exporters that have no Softmax for an axis (and code that writes it by
// hand) give exp(x) / sum(exp(x)), or with the maximum subtracted first,
// exp(x - max(x)) / sum(exp(x - max(x))), the reductions over one axis
// keeping it. As one graph.softmax it is one kernel that subtracts the
// maximum itself (the first form overflows from x = 89 on in f32, 12 in
// f16), gets Softmax's AMP category (computed in f32) and its gradient.
// The pattern is a canonicalization of the exp; it runs before
// amp-auto-cast.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace ampc::graph {
namespace {

/// The one axis a keepdims reduction `op` reduces, or -1.
template <typename Op> int64_t oneKeptAxis(Op op) {
  if (!op || !op.getKeepdims() || op.getAxes().size() != 1)
    return -1;
  return op.getAxes()[0];
}

struct WrittenOutSoftmax : OpRewritePattern<ExpOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(ExpOp exp,
                                PatternRewriter &rewriter) const override {
    // exp's users: the sum over one axis, and the division by it.
    Value e = exp.getResult();
    ReduceSumOp sum;
    DivOp div;
    for (Operation *u : e.getUsers()) {
      if (auto s = dyn_cast<ReduceSumOp>(u); s && !sum)
        sum = s;
      else if (auto d = dyn_cast<DivOp>(u); d && !div)
        div = d;
      else
        return failure();
    }
    int64_t axis = oneKeptAxis(sum);
    if (axis < 0 || !div || div.getLhs() != e || div.getRhs() != sum ||
        !sum->hasOneUse() || div.getType() != exp.getType())
      return failure();
    // x, or x - max(x) over the same axis (which softmax does itself).
    Value x = exp.getInput();
    SmallVector<Location> locs = {exp.getLoc(), sum.getLoc(), div.getLoc()};
    if (auto sub = x.getDefiningOp<SubOp>())
      if (auto max = sub.getRhs().getDefiningOp<ReduceMaxOp>();
          max && max.getInput() == sub.getLhs() && oneKeptAxis(max) == axis &&
          sub->hasOneUse() && max->hasOneUse()) {
        locs.append({sub.getLoc(), max.getLoc()});
        x = sub.getLhs();
      }
    if (x.getType() != exp.getType())
      return failure();
    rewriter.setInsertionPoint(div);
    auto softmax = SoftmaxOp::create(rewriter, rewriter.getFusedLoc(locs), x,
                                     rewriter.getI64IntegerAttr(axis));
    rewriter.replaceOp(div, softmax.getResult());
    return success();
  }
};

} // namespace

void ExpOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<WrittenOutSoftmax>(context);
}

} // namespace ampc::graph
