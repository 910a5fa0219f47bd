//===- Reduction.cpp - CPU kernels (being written) -------------------------------===//
#include "runtime/cpu/Registry.h"

namespace ampc::rt::cpu {
void addReductionKernels(std::vector<KernelEntry> &) {}
} // namespace ampc::rt::cpu
