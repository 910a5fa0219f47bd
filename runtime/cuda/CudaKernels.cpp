//===- CudaKernels.cpp - the CUDA backend's kernel table ------------------===//
#include "runtime/cuda/CudaKernels.h"

#include "runtime/KernelTable.h"

namespace ampc::rt::cuda {
namespace {

const std::vector<KernelEntry> &table() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    // One line per family file; keep in the order of CudaKernels.h.
    addCudnnKernels(v);
    addMovementKernels(v);
    addReductionKernels(v);
    addScanKernels(v);
    addElementwiseKernels(v);
    addGemmKernels(v);
    addOptimizerKernels(v);
    addNormalizationKernels(v);
    addLossKernels(v);
    addCollectiveKernels(v);
    sortByName(v);
    return v;
  }();
  return entries;
}

} // namespace

const KernelEntry *findKernel(const std::string &op) {
  return findByName(table(), op);
}

std::vector<std::string> kernelNames() { return namesOf(table()); }

} // namespace ampc::rt::cuda
