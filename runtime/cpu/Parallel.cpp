//===- Parallel.cpp - thread pool -----------------------------------------===//
#include "runtime/cpu/Parallel.h"

#include <algorithm>
#include <csignal>
#include <cstring>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <thread>

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

ThreadPool::ThreadPool(unsigned threads, StartFn start) {
  status_ = checkThreadCount(threads);
  if (!status_)
    return;
  if (threads == 0)
    threads = std::clamp(std::thread::hardware_concurrency(), 1u, kMaxThreads);
  // pthread_create reports failure as a value; std::thread would throw
  // std::system_error, which without a handler aborts the process.
  for (unsigned i = 1; i < threads; ++i) {
    auto w = std::make_unique<Worker>(Worker{this, i, pthread_t()});
    if (int err =
            start(&w->thread, nullptr, &ThreadPool::workerMain, w.get())) {
      status_ = Status::error(
          "cannot start thread " + std::to_string(i + 1) + " of the " +
          std::to_string(threads) +
          " threads asked for: " + std::strerror(err) +
          " (the system's limit on threads or memory; ask for fewer)");
      return;
    }
    workers_.push_back(std::move(w));
  }
}

void *ThreadPool::workerMain(void *worker) {
  // SIGINT and SIGTERM go to the thread that started the pool, so that a
  // program's handler runs there and a second signal after it finds the
  // default action rather than a worker still in the handler.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  auto *w = static_cast<Worker *>(worker);
  w->pool->workerLoop(w->index);
  return nullptr;
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  for (const std::unique_ptr<Worker> &w : workers_)
    pthread_join(w->thread, nullptr);
}

static void piece(int64_t n, unsigned pieces, unsigned i, int64_t &b,
                  int64_t &e) {
  b = n * i / pieces;
  e = n * (i + 1) / pieces;
}

void ThreadPool::run(int64_t n,
                     const std::function<void(int64_t, int64_t)> &fn) {
  unsigned pieces =
      static_cast<unsigned>(std::min<int64_t>(n, static_cast<int64_t>(size())));
  if (pieces <= 1) {
    if (n > 0)
      fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    fn_ = &fn;
    n_ = n;
    pieces_ = pieces;
    pending_ = pieces - 1;
    ++generation_;
  }
  wake_.notify_all();
  int64_t b, e;
  piece(n, pieces, 0, b, e);
  fn(b, e);
  std::unique_lock<std::mutex> lock(mu_);
  done_.wait(lock, [this] { return pending_ == 0; });
  fn_ = nullptr;
}

void ThreadPool::workerLoop(unsigned index) {
  uint64_t seen = 0;
  for (;;) {
    const std::function<void(int64_t, int64_t)> *fn;
    int64_t n;
    unsigned pieces;
    {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
      fn = fn_;
      n = n_;
      pieces = pieces_;
    }
    if (index < pieces) {
      int64_t b, e;
      piece(n, pieces, index, b, e);
      (*fn)(b, e);
      std::lock_guard<std::mutex> lock(mu_);
      if (--pending_ == 0)
        done_.notify_all();
    }
  }
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
