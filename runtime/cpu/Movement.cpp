//===- Movement.cpp - CPU kernels (being written) -------------------------------===//
#include "runtime/cpu/Registry.h"

namespace ampc::rt::cpu {
void addMovementKernels(std::vector<KernelEntry> &) {}
} // namespace ampc::rt::cpu
