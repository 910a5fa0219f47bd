//===- PoolingCanonicalize.cpp - ReLU after max pooling, not before -------===//
//
// CNNs write convolution, ReLU, max pooling (LeNet, VGG, the ResNet stem).
// ReLU is monotone, so max_pool2d(relu(x)) is relu(max_pool2d(x)): the same
// values bit for bit (NaN propagates through both, and every non-positive
// window maximum becomes +0 either way), with the ReLU on the pooled tensor,
// a quarter of the elements for 2x2 windows of stride 2. The gradients
// agree too: where a window's maximum is positive, x and relu(x) have the
// same first maximum, which gets the gradient either way; elsewhere
// relu_grad zeroes it either way. So the backward pass's relu_grad also
// runs on the pooled tensor.
//
// A window of padding only would pool to -inf, which a ReLU after it would
// turn into 0; there is none, as the verifier keeps every pad smaller than
// the kernel (and a ceil-mode window starts inside the input or the begin
// padding). A ReLU that something else reads too stays where it is.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/PatternMatch.h"

using namespace mlir;

namespace ampc::graph {
namespace {

struct ReluAfterMaxPool : OpRewritePattern<MaxPool2dOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(MaxPool2dOp pool,
                                PatternRewriter &rewriter) const override {
    auto relu = pool.getInput().getDefiningOp<ReluOp>();
    if (!relu || !relu->hasOneUse())
      return failure();
    auto pooled =
        MaxPool2dOp::create(rewriter, pool.getLoc(), pool.getType(),
                            ValueRange{relu.getInput()}, pool->getAttrs());
    // The ReLU keeps its own location (its ONNX node), so AMP's per-node
    // options and error messages still name it.
    rewriter.replaceOp(
        pool, ReluOp::create(rewriter, relu.getLoc(), pool.getType(), pooled));
    return success();
  }
};

} // namespace

void MaxPool2dOp::getCanonicalizationPatterns(RewritePatternSet &patterns,
                                              MLIRContext *context) {
  patterns.add<ReluAfterMaxPool>(context);
}

} // namespace ampc::graph
