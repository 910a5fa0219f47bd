//===- HostMemory.h - how much memory the CPU device has ------------------===//
//
// The memory a process on this machine can hold: the physical memory, or
// less where a cgroup (v1 or v2) or RLIMIT_AS caps it. It is the CPU
// device's memory for the Session's fit check and amp-run's default memory
// budget. It is not MemAvailable: page cache comes and goes, so a run that
// fits the machine is never refused for what other processes cache.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_HOSTMEMORY_H
#define AMPC_RUNTIME_HOSTMEMORY_H

#include <cstdint>
#include <string>

namespace ampc::rt {

struct MemoryLimit {
  uint64_t bytes = 0; // 0: unknown
  // How it is limited, said after the size: "of physical memory", "under
  // its cgroup's memory.max", "under RLIMIT_AS (ulimit -v)".
  std::string source;
};

// The lowest of the physical memory, the cgroup's limit and RLIMIT_AS.
MemoryLimit hostMemory();

} // namespace ampc::rt

#endif // AMPC_RUNTIME_HOSTMEMORY_H
