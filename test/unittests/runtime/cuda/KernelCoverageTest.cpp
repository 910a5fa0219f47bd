//===- KernelCoverageTest.cpp - the CUDA backend runs every kernel op -----===//
//
// Needs no GPU: the tables are plain data. A Program that passes
// ops::checkKernel (and so runs on the CPU, GraphRuntimeCoverageTest) must
// not fail on CUDA for want of a kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/ops/Check.h"

#include "gtest/gtest.h"

#include <algorithm>

namespace {

TEST(CudaKernelCoverage, EveryKernelOpHasACudaKernel) {
  const std::vector<ampc::rt::ops::KernelOp> &ops = ampc::rt::ops::kernelOps();
  std::vector<std::string> cuda = ampc::rt::cuda::kernelNames();
  ASSERT_FALSE(ops.empty());
  for (const ampc::rt::ops::KernelOp &op : ops)
    EXPECT_NE(ampc::rt::cuda::findKernel(op.name), nullptr)
        << "kernel op '" << op.name << "' has no CUDA kernel";
  for (const std::string &op : cuda)
    EXPECT_NE(ampc::rt::ops::findKernelOp(op), nullptr)
        << "CUDA kernel '" << op << "' is not a kernel op of runtime/ops";
  // Registered once each: a duplicate name would make one of them dead.
  std::vector<std::string> sorted = cuda;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

} // namespace
