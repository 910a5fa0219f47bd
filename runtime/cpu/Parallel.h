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

#include <pthread.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ampc::rt::cpu {

class ThreadPool {
public:
  // More threads than any machine runs at once: a larger count is a mistake
  // (and would only cost memory and start-up time).
  static constexpr unsigned kMaxThreads = 4096;
  // How a worker is started: pthread_create, or a stand-in in tests.
  using StartFn = int (*)(pthread_t *, const pthread_attr_t *,
                          void *(*)(void *), void *);

  // Starts threads - 1 workers beside the calling thread (0: one thread per
  // hardware thread). Never throws: more than kMaxThreads, or a worker that
  // the system cannot start (its limit on threads or memory), ends the
  // start-up with the workers started so far, and status() says so; the
  // pool still runs, on fewer threads. Session::create refuses such a pool.
  explicit ThreadPool(unsigned threads, StartFn start = pthread_create);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  // ok, or why the pool has fewer threads than it was asked for.
  const Status &status() const { return status_; }
  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }
  // Runs fn(begin, end) over [0, n) in up to size() pieces; returns when all
  // are done. fn must not throw.
  void run(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

private:
  struct Worker {
    ThreadPool *pool;
    unsigned index;
    pthread_t thread;
  };
  static void *workerMain(void *worker);
  void workerLoop(unsigned index);
  std::vector<std::unique_ptr<Worker>> workers_;
  Status status_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0;
  unsigned pieces_ = 0, pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
};

// Whether a pool may be asked for `threads` threads (at most
// ThreadPool::kMaxThreads; 0 is one per hardware thread). Tools check their
// flag with it before they compile anything.
Status checkThreadCount(unsigned threads);

// Calls fn(begin, end) over [0, n): in parallel when a pool is given and n is
// at least 2 * grain.
void parallelFor(const CpuContext &ctx, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_PARALLEL_H
