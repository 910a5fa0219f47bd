//===- GraphOpFactsTest.cpp - what graph ops declare about themselves -----===//
//
// The traits and interfaces of GraphTraits.td and OptimizerUpdateOpInterface
// replace class lists in the passes; these tests check that what the ops
// declare is consistent (a fusible op has one result, an update is part of
// the optimizer, the state an update reads is the state it writes) and that
// the interface finds the operands of every update, guards or not.
//
//===----------------------------------------------------------------------===//
#include "dialects/Graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace ampc;

namespace {

struct Loaded {
  Loaded() { ctx.loadDialect<graph::GraphDialect, mlir::func::FuncDialect>(); }
  mlir::MLIRContext ctx;
};

TEST(GraphOpFacts, FusibleOpsArePureWithOneResult) {
  Loaded l;
  int fusible = 0;
  for (mlir::RegisteredOperationName name : l.ctx.getRegisteredOperations()) {
    if (!name.hasTrait<graph::OpTrait::Fusible>())
      continue;
    ++fusible;
    EXPECT_TRUE(name.hasTrait<mlir::OpTrait::OneResult>())
        << name.getStringRef().str() << " is Fusible but has not one result";
    // Pure: a fused kernel may compute it anywhere in its loop.
    EXPECT_TRUE(name.hasTrait<mlir::OpTrait::AlwaysSpeculatableImplTrait>())
        << name.getStringRef().str() << " is Fusible but not Pure";
    EXPECT_FALSE(name.hasTrait<graph::OpTrait::Accumulating>())
        << name.getStringRef().str()
        << " is Fusible and Accumulating: an elementwise op sums nothing";
  }
  EXPECT_GT(fusible, 0);
}

TEST(GraphOpFacts, OptimizerFactsAgree) {
  Loaded l;
  int updates = 0;
  for (mlir::RegisteredOperationName name : l.ctx.getRegisteredOperations()) {
    bool update = name.hasInterface<graph::OptimizerUpdateOpInterface>();
    updates += update;
    if (update) {
      EXPECT_TRUE(name.hasTrait<graph::OpTrait::Optimizer>())
          << name.getStringRef().str();
    }
    EXPECT_FALSE(name.hasTrait<graph::OpTrait::Optimizer>() &&
                 name.hasTrait<graph::OpTrait::Backward>())
        << name.getStringRef().str() << " is both Optimizer and Backward";
  }
  EXPECT_EQ(updates, 4); // sgd, momentum, adam, adagrad
}

/// Every update with and without guards: its state operands are what its
/// results after the first replace, and the guards read back as written.
TEST(GraphOpFacts, UpdateInterfaceFindsGradStateAndGuards) {
  Loaded l;
  const char *src = R"mlir(
func.func @f(%lr: tensor<f32>, %t: tensor<i64>, %p: tensor<4xf32>,
             %g: tensor<4xf16>, %a: tensor<4xf32>, %b: tensor<4xf32>,
             %k: tensor<i1>, %s: tensor<f32>) {
  %0 = graph.sgd_update %lr, %p, %g : (tensor<f32>, tensor<4xf32>, tensor<4xf16>) -> tensor<4xf32>
  %1:2 = graph.momentum_update %lr, %t, %p, %g, %a skip %k loss_scale %s {alpha = 0.9 : f64, beta = 1.0 : f64} : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<i1>, tensor<f32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2:3 = graph.adam_update %lr, %t, %p, %g, %a, %b skip %k : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf32>, tensor<i1>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>)
  %3:2 = graph.adagrad_update %lr, %t, %p, %g, %b : (tensor<f32>, tensor<i64>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}
)mlir";
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(src, &l.ctx);
  ASSERT_TRUE(module);
  auto f = *module->getOps<mlir::func::FuncOp>().begin();
  auto arg = [&](unsigned i) { return f.getArgument(i); };
  std::vector<graph::OptimizerUpdateOpInterface> updates;
  f.walk([&](graph::OptimizerUpdateOpInterface u) { updates.push_back(u); });
  ASSERT_EQ(updates.size(), 4u);
  std::vector<std::vector<mlir::Value>> state = {
      {}, {arg(4)}, {arg(4), arg(5)}, {arg(5)}};
  std::vector<std::pair<bool, bool>> guards = {
      {false, false}, {true, true}, {true, false}, {false, false}};
  for (size_t i = 0; i < updates.size(); ++i) {
    graph::OptimizerUpdateOpInterface u = updates[i];
    SCOPED_TRACE(u->getName().getStringRef().str());
    EXPECT_EQ(u.getParam(), arg(2));
    EXPECT_EQ(u.getGrad(), arg(3));
    std::vector<mlir::Value> got(u.getStateOperands().begin(),
                                 u.getStateOperands().end());
    EXPECT_EQ(got, state[i]);
    EXPECT_EQ(u->getNumResults(), 1 + got.size());
    EXPECT_EQ(u.getSkip() == arg(6), guards[i].first);
    EXPECT_EQ(!u.getSkip(), !guards[i].first);
    EXPECT_EQ(u.getLossScale() == arg(7), guards[i].second);
    EXPECT_EQ(!u.getLossScale(), !guards[i].second);
  }
  // Setting the guards keeps the state operands where they are.
  graph::OptimizerUpdateOpInterface adam = updates[2];
  adam.setGuards(arg(6), arg(7));
  EXPECT_EQ(adam.getLossScale(), arg(7));
  EXPECT_EQ(adam.getStateOperands().size(), 2u);
  adam.setGuards({});
  EXPECT_FALSE(adam.getSkip());
  EXPECT_EQ(adam.getStateOperands().size(), 2u);
  EXPECT_TRUE(mlir::succeeded(mlir::verify(*module)));
}

TEST(GraphOpFacts, EnumCasesReadAsUsersWriteThem) {
  EXPECT_EQ(graph::quotedCases<graph::LrScheduleKind>(),
            "\"constant\", \"step\" or \"cosine\"");
  EXPECT_EQ(graph::notACase<graph::GeluApproximate>("approximate", "fast"),
            "approximate must be \"none\" or \"tanh\", got \"fast\"");
  EXPECT_FALSE(graph::notACase<graph::AdamMode>("mode", "pytorch"));
}

} // namespace
