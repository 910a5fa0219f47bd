//===- GraphRuntimeCoverageTest.cpp - every kernel the compiler may emit --===//
//
// convert-graph-to-rt turns every graph op but constants (data) and
// reshapes (views) into an rt.kernel named by the op, and so also
// amp.check_finite and amp.update_scale. Each of those must be a kernel op
// of runtime/ops (Ops.def, Elementwise.def), or a correct model would be
// refused only when a Session is made; each kernel op must be one of them
// (or "fused"), and the CPU backend runs exactly those. The kernels that may
// run in place (ops::Aliasing) are exactly the ops the compiler fuses
// (graph Fusible) and the updates (OptimizerUpdateOpInterface): the
// compiler plans memory by one rule and the runtime checks the Program by
// the other. (cuda/KernelCoverageTest holds the CUDA backend to the same
// list.)
//
//===----------------------------------------------------------------------===//
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/ops/Check.h"

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

std::set<std::string> runtimeKernelOps() {
  std::set<std::string> out;
  for (const rt::ops::KernelOp &k : rt::ops::kernelOps())
    out.insert(k.name);
  return out;
}

TEST(GraphRuntimeCoverage, EveryKernelOpIsInOpsDefAndBack) {
  Ops ops;
  auto kernelOps = ops.kernelOps();
  std::set<std::string> runtime = runtimeKernelOps();
  for (const auto &[name, op] : kernelOps)
    EXPECT_TRUE(runtime.count(name))
        << op.getStringRef().str() << " becomes rt.kernel \"" << name
        << "\", which runtime/ops (Ops.def, Elementwise.def) does not list";
  // "copy" is a kernel of both backends that no compiler path emits today
  // (a Program may still hold it); any other orphan is a mistake.
  for (const std::string &name : runtime)
    EXPECT_TRUE(name == "fused" || name == "copy" || kernelOps.count(name))
        << "runtime/ops lists a kernel op '" << name
        << "' that no graph or amp op becomes";
}

TEST(GraphRuntimeCoverage, TheCpuBackendRunsExactlyTheKernelOps) {
  std::vector<std::string> names = rt::cpu::kernelNames();
  std::set<std::string> cpu(names.begin(), names.end());
  EXPECT_EQ(cpu.size(), names.size()) << "a CPU kernel is registered twice";
  EXPECT_EQ(cpu, runtimeKernelOps());
}

TEST(GraphRuntimeCoverage, InPlaceKernelsAreTheFusibleOpsAndTheUpdates) {
  Ops ops;
  for (const auto &[name, op] : ops.kernelOps()) {
    bool fusible = op.hasTrait<graph::OpTrait::Fusible>();
    bool update = op.hasInterface<graph::OptimizerUpdateOpInterface>();
    EXPECT_EQ(rt::ops::aliasingOf(name) == rt::ops::Aliasing::Elementwise,
              fusible)
        << name << (fusible ? " is" : " is not")
        << " Fusible in the compiler but the runtime disagrees";
    EXPECT_EQ(rt::ops::aliasingOf(name) == rt::ops::Aliasing::InPlaceUpdate,
              update)
        << name << (update ? " is" : " is not")
        << " an optimizer update in the compiler but the runtime disagrees";
  }
}

} // namespace
