//===- GraphCanonicalize.cpp - canonicalization patterns of graph ops -----===//
//
// graph.add of a graph.matmul and a bias vector becomes a graph.gemm with the
// bias as its C operand, and a gemm reads a 2-D transpose through trans_a or
// trans_b. PyTorch exports nn.Linear on inputs of rank 3 and
// more (a transformer's projections and MLPs), and some exporters every
// Linear, as MatMul + Add; as a gemm the bias, and the ReLU or GELU after
// it, become the GEMM's epilogue (GemmEpilogues.cpp, cuBLASLt's
// RELU_BIAS/GELU_BIAS), its gradient the weight gradient's BGRADB, and a
// low-precision product is rounded once instead of before and after the
// addition. A matmul of rank above 2 against a 2-D weight is one tall GEMM
// between two reshapes, which lower to views.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace ampc::graph {
namespace {

struct MatMulPlusBiasIsGemm : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (unsigned i = 0; i < 2; ++i)
      if (auto mm = add->getOperand(i).getDefiningOp<MatMulOp>())
        if (succeeded(rewrite(add, mm, add->getOperand(1 - i), rewriter)))
          return success();
    return failure();
  }

private:
  static LogicalResult rewrite(AddOp add, MatMulOp mm, Value bias,
                               PatternRewriter &rewriter) {
    // Only this add reads the product, or it would be computed twice.
    if (!mm->hasOneUse())
      return failure();
    auto a = dyn_cast<RankedTensorType>(mm.getLhs().getType());
    auto w = dyn_cast<RankedTensorType>(mm.getRhs().getType());
    auto out = dyn_cast<RankedTensorType>(mm.getType());
    auto b = dyn_cast<RankedTensorType>(bias.getType());
    if (!a || !w || !out || !b || !a.hasStaticShape() || !w.hasStaticShape() ||
        !b.hasStaticShape() || a.getRank() < 2 || w.getRank() != 2 ||
        !isa<FloatType>(out.getElementType()) ||
        b.getElementType() != out.getElementType() || add.getType() != out)
      return failure();
    // The bias is a vector along the output's last dimension (any leading
    // dimensions 1): C of a gemm, broadcast over the rows.
    int64_t n = w.getDimSize(1);
    ArrayRef<int64_t> bs = b.getShape();
    if (bs.empty() || bs.back() != n ||
        llvm::any_of(bs.drop_back(), [](int64_t d) { return d != 1; }))
      return failure();

    Location loc = rewriter.getFusedLoc({mm.getLoc(), add.getLoc()});
    Type elem = out.getElementType();
    int64_t k = a.getShape().back();
    if (k == 0)
      return failure(); // an empty sum: nothing to gain, and rows unknown
    int64_t rows = a.getNumElements() / k;
    Value lhs = mm.getLhs(), c = bias;
    if (a.getRank() != 2)
      lhs = ReshapeOp::create(rewriter, loc,
                              RankedTensorType::get({rows, k}, elem), lhs);
    if (b.getRank() != 1)
      c = ReshapeOp::create(rewriter, loc, RankedTensorType::get({n}, elem), c);
    auto gemm = GemmOp::create(
        rewriter, loc, RankedTensorType::get({rows, n}, elem), lhs, mm.getRhs(),
        c, rewriter.getF64FloatAttr(1.0), rewriter.getF64FloatAttr(1.0),
        rewriter.getBoolAttr(false), rewriter.getBoolAttr(false));
    // What other passes recorded on the product (AMP's accumulation type).
    for (NamedAttribute attr : mm->getDiscardableAttrs())
      gemm->setAttr(attr.getName(), attr.getValue());
    Value result = gemm.getOutput();
    if (out.getRank() != 2)
      result = ReshapeOp::create(rewriter, loc, out, result);
    rewriter.replaceOp(add, result);
    return success();
  }
};

/// gemm(transpose(a), b) is gemm(a, b) with trans_a flipped, and so for b:
/// PyTorch exports nn.Linear as MatMul with a Transpose of the weight,
/// which would otherwise be a kernel and a copy of every weight per step
/// (and its gradient another).
struct GemmReadsTransposes : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(GemmOp gemm,
                                PatternRewriter &rewriter) const override {
    auto swapped = [](Value v) -> Value {
      auto t = v.getDefiningOp<TransposeOp>();
      if (!t || t.getPerm().size() != 2 || t.getPerm()[0] != 1 ||
          t.getPerm()[1] != 0)
        return Value();
      return t.getInput();
    };
    Value a = swapped(gemm.getA()), b = swapped(gemm.getB());
    if (!a && !b)
      return failure();
    rewriter.modifyOpInPlace(gemm, [&] {
      if (a) {
        gemm.getAMutable().assign(a);
        gemm.setTransA(!gemm.getTransA());
      }
      if (b) {
        gemm.getBMutable().assign(b);
        gemm.setTransB(!gemm.getTransB());
      }
    });
    return success();
  }
};

} // namespace

void GemmOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                         MLIRContext *context) {
  patterns.add<GemmReadsTransposes>(context);
}

void AddOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                        MLIRContext *context) {
  patterns.add<MatMulPlusBiasIsGemm>(context);
}

} // namespace ampc::graph
