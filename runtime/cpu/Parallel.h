//===- Parallel.h - a small thread pool for CPU kernels -------------------===//
//
// Kernels split their outer loops with parallelFor; a range smaller than
// `grain` runs on the calling thread, so small tensors pay nothing.
// OpenBLAS runs its own threads for contractions.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_PARALLEL_H
#define AMPC_RUNTIME_CPU_PARALLEL_H

#include "runtime/cpu/CpuKernels.h"

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace ampc::rt::cpu {

class ThreadPool {
public:
  explicit ThreadPool(unsigned threads); // 0: hardware concurrency
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // Runs fn(begin, end) over [0, n) in up to size() pieces; returns when all
  // are done. fn must not throw.
  void run(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

private:
  void workerLoop(unsigned index);
  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0;
  unsigned pieces_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// Calls fn(begin, end) over [0, n): in parallel when a pool is given and n is
// at least 2 * grain.
void parallelFor(const CpuContext &ctx, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_PARALLEL_H
