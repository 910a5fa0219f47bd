//===- Parallel.h - a small thread pool for CPU kernels -------------------===//
//
// Kernels split their outer loops with parallelFor; a range smaller than
// `grain` runs on the calling thread, so small tensors pay nothing.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_PARALLEL_H
#define AMPC_RUNTIME_CPU_PARALLEL_H

#include "runtime/cpu/CpuKernels.h"

#include <pthread.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace ampc::rt::cpu {

// The team of threads the CPU kernels run on: OpenMP's, which oneDNN's
// primitives also run on (Dnnl.h), so that the kernels' own loops and the
// contractions share one set of threads instead of two pools competing for
// the same cores (one spinning while the other works). OpenBLAS runs on the
// calling thread only (Blas.h).
class ThreadPool {
public:
  // More threads than any machine runs at once: a larger count is a mistake
  // (and would only cost memory and start-up time).
  static constexpr unsigned kMaxThreads = 4096;
  // How a thread is started: pthread_create, or a stand-in in tests.
  using StartFn = int (*)(pthread_t *, const pthread_attr_t *,
                          void *(*)(void *), void *);

  // A team of `threads` threads, the calling thread included (0: one per
  // hardware thread). Never throws or aborts: libgomp ends the process when
  // it cannot start a thread, so the pool first starts threads - 1 threads
  // of its own through `start` and lets them end; more than kMaxThreads, or
  // a thread the system cannot start (its limit on threads or memory),
  // gives a smaller team, and status() says so. Session::create refuses
  // such a pool. The team's threads are started here, with SIGINT and
  // SIGTERM blocked, so a program's handler runs on the thread that made
  // the pool.
  explicit ThreadPool(unsigned threads, StartFn start = pthread_create);
  ~ThreadPool() = default;
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  // ok, or why the pool has fewer threads than it was asked for.
  const Status &status() const { return status_; }
  unsigned size() const { return size_; }
  // Runs fn(begin, end) over [0, n) in up to size() pieces; returns when all
  // are done. fn must not throw. Called from inside another run (nested),
  // the whole range runs on the calling thread.
  void run(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

private:
  Status status_;
  unsigned size_ = 1;
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
