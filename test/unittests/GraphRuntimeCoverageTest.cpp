//===- GraphRuntimeCoverageTest.cpp - every kernel the compiler may emit --===//
//
// convert-graph-to-rt turns every graph op but constants (data) and
// reshapes (views) into an rt.kernel named by the op, and so also
// amp.check_finite and amp.update_scale. Each of those must have a CPU
// kernel, or a correct model would be refused only when a Session is made;
// each CPU kernel must be one of them (or "fused"). The kernels the CPU
// backend may run in place are exactly the ops the compiler fuses (graph
// Fusible) and the updates (OptimizerUpdateOpInterface): the compiler plans
// memory by one rule and the runtime checks the Program by the other.
// (KernelCoverageTest ties the CUDA backend's names to the CPU's.)
//
//===----------------------------------------------------------------------===//
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "runtime/cpu/CpuKernels.h"

#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

using namespace ampc;

namespace {

struct Ops {
  Ops() { ctx.loadDialect<graph::GraphDialect, amp::AmpDialect>(); }
  mlir::MLIRContext ctx;
  /// Every op convert-graph-to-rt may turn into a kernel, by kernel name.
  std::map<std::string, mlir::RegisteredOperationName> kernelOps() {
    std::map<std::string, mlir::RegisteredOperationName> out;
    for (mlir::RegisteredOperationName name : ctx.getRegisteredOperations()) {
      llvm::StringRef full = name.getStringRef();
      bool graphKernel = name.getDialectNamespace() == "graph" &&
                         full != graph::ConstantOp::getOperationName() &&
                         full != graph::ReshapeOp::getOperationName();
      bool ampKernel = full == amp::CheckFiniteOp::getOperationName() ||
                       full == amp::UpdateScaleOp::getOperationName();
      if (graphKernel || ampKernel)
        out.emplace(name.stripDialect().str(), name);
    }
    return out;
  }
};

TEST(GraphRuntimeCoverage, EveryKernelOpHasACpuKernelAndBack) {
  Ops ops;
  auto kernelOps = ops.kernelOps();
  std::vector<std::string> names = rt::cpu::kernelNames();
  std::set<std::string> cpu(names.begin(), names.end());
  for (const auto &[name, op] : kernelOps)
    EXPECT_TRUE(cpu.count(name))
        << op.getStringRef().str() << " becomes rt.kernel \"" << name
        << "\", which the CPU backend does not have";
  // "copy" is a kernel of both backends that no compiler path emits today
  // (a Program may still hold it); any other orphan is a mistake.
  for (const std::string &name : cpu)
    EXPECT_TRUE(name == "fused" || name == "copy" || kernelOps.count(name))
        << "the CPU backend has a kernel '" << name
        << "' that no graph or amp op becomes";
}

TEST(GraphRuntimeCoverage, InPlaceKernelsAreTheFusibleOpsAndTheUpdates) {
  Ops ops;
  for (const auto &[name, op] : ops.kernelOps()) {
    bool fusible = op.hasTrait<graph::OpTrait::Fusible>();
    bool update = op.hasInterface<graph::OptimizerUpdateOpInterface>();
    EXPECT_EQ(rt::cpu::isElementwiseKernel(name), fusible)
        << name << (fusible ? " is" : " is not")
        << " Fusible in the compiler but the runtime disagrees";
    EXPECT_EQ(rt::cpu::isInPlaceUpdateKernel(name), update)
        << name << (update ? " is" : " is not")
        << " an optimizer update in the compiler but the runtime disagrees";
  }
}

} // namespace
