//===- KernelCoverageTest.cpp - every CPU op has a CUDA kernel ------------===//
//
// Needs no GPU: the tables are plain data. A Program that runs on the CPU
// must not fail on CUDA for want of a kernel.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cuda/CudaKernels.h"

#include "gtest/gtest.h"

#include <algorithm>

namespace {

TEST(CudaKernelCoverage, EveryCpuOpHasACudaKernel) {
  std::vector<std::string> cpu = ampc::rt::cpu::kernelNames();
  std::vector<std::string> cuda = ampc::rt::cuda::kernelNames();
  ASSERT_FALSE(cpu.empty());
  for (const std::string &op : cpu)
    EXPECT_NE(ampc::rt::cuda::findKernel(op), nullptr)
        << "op '" << op << "' runs on the CPU but has no CUDA kernel";
  for (const std::string &op : cuda)
    EXPECT_NE(std::find(cpu.begin(), cpu.end(), op), cpu.end())
        << "CUDA kernel '" << op << "' has no CPU counterpart to test against";
  // Registered once each: a duplicate name would make one of them dead.
  std::vector<std::string> sorted = cuda;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(std::adjacent_find(sorted.begin(), sorted.end()), sorted.end());
}

} // namespace
