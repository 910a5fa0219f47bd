//===- ListKernelNames.cpp - ampc-cuda-kernel-names -----------------------===//
//
// Prints every kernel name the host can ask for (kernels/KernelNames.def),
// one "<module> <name>" per line, grouped by module: what the ctest
// cuda-kernel-symbols looks for in each module's fatbin. Needs no GPU.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/KernelNames.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

int main() {
  std::vector<ampc::rt::cuda::KernelNameEntry> names =
      ampc::rt::cuda::allKernelNames();
  std::stable_sort(names.begin(), names.end(),
                   [](const auto &a, const auto &b) {
                     return std::strcmp(a.module, b.module) < 0;
                   });
  for (const auto &e : names)
    std::printf("%s %s\n", e.module, e.name.c_str());
  return 0;
}
