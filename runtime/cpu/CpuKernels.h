//===- CpuKernels.h - the CPU backend's kernels ---------------------------===//
//
// One entry per graph op (by its name without the dialect prefix: "gemm",
// "conv2d", ...) plus "fused": a chain of elementwise graph ops run as one
// pass over memory. A call is checked without data (ops::checkKernel, at
// Program load time) and then run any number of times.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_CPUKERNELS_H
#define AMPC_RUNTIME_CPU_CPUKERNELS_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"
#include "runtime/ops/OpCall.h"

#include <string>
#include <vector>

namespace ampc::rt {
class Collective;
}

namespace ampc::rt::cpu {

class ThreadPool;

using ops::OpCall;
using ops::PreparedKernel;

struct CpuContext {
  ThreadPool *pool = nullptr; // may be null: run on the calling thread
  // The ranks of a data-parallel run (SessionOptions::collective); null in
  // a single process.
  Collective *collective = nullptr;
};

// Builds, for a call that passed ops::checkKernel, what its kernel would
// otherwise build on every run (nothing for most kernels).
Status prepareKernel(OpCall &call);

// Runs a call that passed ops::checkKernel. Outputs overlay inputs only as
// the op's ops::Aliasing allows.
Status runKernel(const OpCall &call, CpuContext &ctx);

// The op names this backend implements (for docs and for tests).
std::vector<std::string> kernelNames();

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_CPUKERNELS_H
