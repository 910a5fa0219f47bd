//===- HostMemory.cpp - how much memory the CPU device has ----------------===//
//
// sysconf gives the physical memory; /proc/self/cgroup names this process's
// cgroup, whose memory.max (v2) or memory.limit_in_bytes (v1) may be lower
// (inside a container the cgroup file system's root is the container's own
// cgroup, so the root files are read as well); getrlimit gives RLIMIT_AS.
//
//===----------------------------------------------------------------------===//
#include "runtime/HostMemory.h"

#include <fstream>
#include <sstream>
#include <sys/resource.h>
#include <unistd.h>

namespace ampc::rt {
namespace {

// The number a cgroup limit file holds; 0 for "max", a missing file or
// anything else.
uint64_t readLimit(const std::string &path) {
  std::ifstream in(path);
  std::string text;
  if (!in || !(in >> text) || text.empty() ||
      text.find_first_not_of("0123456789") != std::string::npos ||
      text.size() > 19)
    return 0;
  return std::stoull(text);
}

// This process's cgroup path for the v1 memory controller (`v1`) or the v2
// unified hierarchy, "" if none.
std::string cgroupPath(bool v1) {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line)) {
    // "hierarchy-id:controllers:path"
    size_t a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos)
      continue;
    std::string controllers = line.substr(a + 1, b - a - 1);
    bool match =
        v1 ? ("," + controllers + ",").find(",memory,") != std::string::npos
           : line.compare(0, 3, "0::") == 0;
    if (match)
      return line.substr(b + 1);
  }
  return "";
}

void lower(MemoryLimit &m, uint64_t bytes, const char *source) {
  if (bytes && (!m.bytes || bytes < m.bytes)) {
    m.bytes = bytes;
    m.source = source;
  }
}

} // namespace

MemoryLimit hostMemory() {
  MemoryLimit m;
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    lower(m, static_cast<uint64_t>(pages) * static_cast<uint64_t>(page),
          "of physical memory");
  const std::string v2 = cgroupPath(false), v1 = cgroupPath(true);
  for (const std::string &dir :
       {"/sys/fs/cgroup" + v2, std::string("/sys/fs/cgroup")})
    lower(m, readLimit(dir + "/memory.max"), "under its cgroup's memory.max");
  for (const std::string &dir :
       {"/sys/fs/cgroup/memory" + v1, std::string("/sys/fs/cgroup/memory")})
    lower(m, readLimit(dir + "/memory.limit_in_bytes"),
          "under its cgroup's memory.limit_in_bytes");
  struct rlimit r;
  if (getrlimit(RLIMIT_AS, &r) == 0 && r.rlim_cur != RLIM_INFINITY)
    lower(m, static_cast<uint64_t>(r.rlim_cur), "under RLIMIT_AS (ulimit -v)");
  return m;
}

} // namespace ampc::rt
