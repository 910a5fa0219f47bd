//===- CudaKernels.cpp - the CUDA backend's kernel table ------------------===//
#include "runtime/cuda/CudaKernels.h"

#include <algorithm>
#include <string_view>

namespace ampc::rt::cuda {
namespace {

const std::vector<KernelEntry> &table() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    // One line per family file; keep in the order of CudaKernels.h.
    addCudnnKernels(v);
    addMovementKernels(v);
    addReductionKernels(v);
    addElementwiseKernels(v);
    addGemmKernels(v);
    addOptimizerKernels(v);
    addNormalizationKernels(v);
    addLossKernels(v);
    std::sort(v.begin(), v.end(),
              [](const KernelEntry &a, const KernelEntry &b) {
                return std::string_view(a.name) < std::string_view(b.name);
              });
    return v;
  }();
  return entries;
}

} // namespace

const KernelEntry *findKernel(const std::string &op) {
  const auto &t = table();
  auto it = std::lower_bound(t.begin(), t.end(), op,
                             [](const KernelEntry &e, const std::string &n) {
                               return std::string_view(e.name) < n;
                             });
  if (it == t.end() || op != it->name)
    return nullptr;
  return &*it;
}

std::vector<std::string> kernelNames() {
  std::vector<std::string> names;
  for (const KernelEntry &e : table())
    names.push_back(e.name);
  return names;
}

} // namespace ampc::rt::cuda
