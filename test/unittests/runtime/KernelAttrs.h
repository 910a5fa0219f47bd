//===- KernelAttrs.h - attributes of hand-built kernel calls ----*- C++ -*-===//
//
// The runtime keeps no attribute defaults (a Program holds every one), so a
// test that builds a call by hand gives them all; these give an op's
// attributes as the compiler writes them. Shared by the CPU and CUDA
// kernel tests.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_KERNELATTRS_H
#define AMPC_TEST_RUNTIME_KERNELATTRS_H

#include "runtime/Tensor.h"

namespace ampc::rt::test {

inline Attrs gemmAttrs(double alpha = 1, double beta = 1, bool transA = false,
                       bool transB = false) {
  Attrs a;
  a.setFloat("alpha", alpha);
  a.setFloat("beta", beta);
  a.setInt("trans_a", transA);
  a.setInt("trans_b", transB);
  return a;
}

} // namespace ampc::rt::test

#endif // AMPC_TEST_RUNTIME_KERNELATTRS_H
