//===- Contraction.cpp - CPU kernels (being written) -------------------------------===//
#include "runtime/cpu/Registry.h"

namespace ampc::rt::cpu {
void addContractionKernels(std::vector<KernelEntry> &) {}
} // namespace ampc::rt::cpu
