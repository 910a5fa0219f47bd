//===- AmpListsTest.cpp - the AMP op table against the graph dialect ------===//
//
// The table must name real graph ops, and every forward graph op must have
// a category: a new op without one would silently stay f32 at every level.
//
//===----------------------------------------------------------------------===//
#include "compiler/Transforms/AmpLists.h"
#include "dialects/Graph/GraphOps.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OperationSupport.h"

#include <gtest/gtest.h>

using namespace ampc;

namespace {

TEST(AmpLists, NamesRegisteredGraphOps) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  AmpLists lists = AmpLists::defaults();
  ASSERT_FALSE(lists.ops().empty());
  for (const std::string &op : lists.ops())
    EXPECT_TRUE(mlir::RegisteredOperationName::lookup("graph." + op, &ctx))
        << "the AMP table lists '" << op << "', which is not a graph op";
}

TEST(AmpLists, EveryForwardOpHasACategory) {
  mlir::MLIRContext ctx;
  ctx.loadDialect<graph::GraphDialect>();
  AmpLists lists = AmpLists::defaults();
  int forwardOps = 0;
  for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "graph")
      continue;
    llvm::StringRef op = name.stripDialect();
    // Backward and optimizer ops are built by graph-build-training after
    // amp-auto-cast; a model's casts and constants keep their types.
    if (name.hasTrait<graph::OpTrait::Backward>() ||
        name.hasTrait<graph::OpTrait::Optimizer>() ||
        name.getStringRef() == graph::CastOp::getOperationName() ||
        name.getStringRef() == graph::ConstantOp::getOperationName())
      continue;
    ++forwardOps;
    EXPECT_TRUE(lists.lookup(op).has_value())
        << "graph." << op.str() << " has no AMP category";
  }
  EXPECT_EQ(forwardOps, static_cast<int>(lists.ops().size()));
}

TEST(AmpLists, EditsMoveAndRemove) {
  AmpLists lists = AmpLists::defaults();
  std::string error;
  ASSERT_TRUE(mlir::succeeded(
      lists.edit("deny", AmpCategory::Deny, {"gemm", "relu"}, error)));
  EXPECT_EQ(lists.lookup("gemm"), AmpCategory::Deny);
  EXPECT_EQ(lists.lookup("relu"), AmpCategory::Deny);
  ASSERT_TRUE(mlir::succeeded(
      lists.edit("allow", AmpCategory::Allow, {"-matmul"}, error)));
  EXPECT_EQ(lists.lookup("matmul"), AmpCategory::Unlisted);
  EXPECT_TRUE(mlir::failed(
      lists.edit("allow", AmpCategory::Allow, {"-softmax"}, error)));
  EXPECT_NE(error.find("'softmax', which is on the deny list"),
            std::string::npos)
      << error;
  EXPECT_TRUE(
      mlir::failed(lists.edit("infer", AmpCategory::Infer, {"gemmm"}, error)));
  EXPECT_NE(error.find("names 'gemmm', which is not a graph op"),
            std::string::npos)
      << error;
}

} // namespace
