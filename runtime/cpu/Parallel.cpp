//===- Parallel.cpp - the OpenMP team of the CPU kernels ------------------===//
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/GompTeam.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <signal.h>
#include <string>
#include <thread>
#include <vector>

namespace ampc::rt::cpu {

Status checkThreadCount(unsigned threads) {
  if (threads <= ThreadPool::kMaxThreads)
    return Status::ok();
  return Status::error(std::to_string(threads) +
                       " threads asked for, more than the " +
                       std::to_string(ThreadPool::kMaxThreads) +
                       " a CPU thread pool starts (0 starts one per hardware "
                       "thread)");
}

namespace {

// The probe's threads wait until every one is started, so that they exist
// at once, as the team's will.
struct Probe {
  std::atomic<bool> release{false};
};

void *probeMain(void *probe) {
  auto *p = static_cast<Probe *>(probe);
  while (!p->release.load(std::memory_order_acquire))
    std::this_thread::yield();
  return nullptr;
}

// How many of `want` threads beside the caller the system starts.
unsigned probeThreads(unsigned want, ThreadPool::StartFn start,
                      unsigned threads, Status &status) {
  Probe probe;
  std::vector<pthread_t> started;
  started.reserve(want);
  for (unsigned i = 0; i < want; ++i) {
    pthread_t t;
    if (int err = start(&t, nullptr, &probeMain, &probe)) {
      status = Status::error(
          "cannot start thread " + std::to_string(i + 2) + " of the " +
          std::to_string(threads) +
          " threads asked for: " + std::strerror(err) +
          " (the system's limit on threads or memory; ask for fewer)");
      break;
    }
    started.push_back(t);
  }
  probe.release.store(true, std::memory_order_release);
  for (pthread_t t : started)
    pthread_join(t, nullptr);
  return static_cast<unsigned>(started.size());
}

} // namespace

ThreadPool::ThreadPool(unsigned threads, StartFn start) {
  status_ = checkThreadCount(threads);
  if (!status_)
    return;
  if (threads == 0)
    threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  size_ = 1 + probeThreads(threads - 1, start, threads, status_);
  if (size_ == 1)
    return;
  // libgomp starts a team's threads the first time a region of that size
  // runs, with the signal mask of the thread that asks: blocked here, so
  // SIGINT and SIGTERM keep going to this thread, and a second signal after
  // the handler finds the default action rather than a worker still in it.
  sigset_t stop, old;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, &old);
  GOMP_parallel([](void *) {}, nullptr, static_cast<unsigned>(size_), 0);
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

void ThreadPool::run(int64_t n,
                     const std::function<void(int64_t, int64_t)> &fn) {
  int pieces = static_cast<int>(std::min<int64_t>(n, size_));
  if (pieces <= 1) {
    if (n > 0)
      fn(0, n);
    return;
  }
  struct Work {
    int64_t n;
    const std::function<void(int64_t, int64_t)> *fn;
  } work{n, &fn};
  GOMP_parallel(
      [](void *data) {
        // Nested in another team, or given fewer threads, each thread
        // takes its share of what the team has.
        const Work &w = *static_cast<const Work *>(data);
        int64_t team = omp_get_num_threads(), i = omp_get_thread_num();
        int64_t b = w.n * i / team, e = w.n * (i + 1) / team;
        if (b < e)
          (*w.fn)(b, e);
      },
      &work, static_cast<unsigned>(pieces), 0);
}

void parallelFor(const CpuContext &ctx, int64_t n, int64_t grain,
                 const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  if (!ctx.pool || ctx.pool->size() == 1 ||
      n < 2 * std::max<int64_t>(grain, 1)) {
    fn(0, n);
    return;
  }
  ctx.pool->run(n, fn);
}

} // namespace ampc::rt::cpu
