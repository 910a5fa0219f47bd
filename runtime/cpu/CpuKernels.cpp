//===- CpuKernels.cpp - dispatch of CPU kernels by op name ----------------===//
//
// Looks a call's op up in the table the kernel families build, and puts the
// op's name in front of every error its kernel reports.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Registry.h"

#include "runtime/KernelTable.h"

namespace ampc::rt::cpu {
namespace {

const std::vector<KernelEntry> &table() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    addElementwiseKernels(v);
    addMovementKernels(v);
    addContractionKernels(v);
    addNormalizationKernels(v);
    addReductionKernels(v);
    addScanKernels(v);
    addConvolutionGradKernels(v);
    addPoolingGradKernels(v);
    addMovementGradKernels(v);
    addNormalizationGradKernels(v);
    addLossGradKernels(v);
    addOptimizerKernels(v);
    addLossScalingKernels(v);
    addCollectiveKernels(v);
    sortByName(v);
    return v;
  }();
  return entries;
}

const KernelEntry *find(const std::string &op) {
  return findByName(table(), op);
}

} // namespace

Status prepareKernel(OpCall &call) {
  const KernelEntry *e = find(call.op);
  if (!e || !e->prepare)
    return Status::ok();
  return e->prepare(call, call.prepared).withContext("op '" + call.op + "'");
}

Status runKernel(const OpCall &call, CpuContext &ctx) {
  const KernelEntry *e = find(call.op);
  if (!e)
    return Status::error("the CPU backend has no kernel for op '" + call.op +
                         "'");
  if (Status s = e->run(call, ctx); !s)
    return s.withContext("op '" + call.op + "'");
  return Status::ok();
}

std::vector<std::string> kernelNames() { return namesOf(table()); }

} // namespace ampc::rt::cpu
