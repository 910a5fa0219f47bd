//===- KernelTable.h - a backend's kernels, looked up by op name ----------===//
//
// Each backend (cpu/CpuKernels.cpp, cuda/CudaKernels.cpp) builds a vector of
// entries with a `const char *name` once, sorted here, and looks calls up
// by binary search.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_KERNELTABLE_H
#define AMPC_RUNTIME_KERNELTABLE_H

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace ampc::rt {

template <typename Entry> void sortByName(std::vector<Entry> &table) {
  std::sort(table.begin(), table.end(), [](const Entry &a, const Entry &b) {
    return std::string_view(a.name) < std::string_view(b.name);
  });
}

// Null when no entry has that name.
template <typename Entry>
const Entry *findByName(const std::vector<Entry> &table,
                        const std::string &name) {
  auto it = std::lower_bound(table.begin(), table.end(), name,
                             [](const Entry &e, const std::string &n) {
                               return std::string_view(e.name) < n;
                             });
  if (it == table.end() || name != it->name)
    return nullptr;
  return &*it;
}

template <typename Entry>
std::vector<std::string> namesOf(const std::vector<Entry> &table) {
  std::vector<std::string> names;
  for (const Entry &e : table)
    names.push_back(e.name);
  return names;
}

} // namespace ampc::rt

#endif // AMPC_RUNTIME_KERNELTABLE_H
