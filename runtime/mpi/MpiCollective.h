//===- MpiCollective.h - the processes of an mpirun launch ------*- C++ -*-===//
//
// rt::Collective over MPI (Debian's OpenMPI): a tool started under
// `mpirun -n N` is one of N ranks. One thread of this process makes every
// MPI call, the collectives in the order they are asked for, so that a
// sum runs while the step goes on (MPI progresses a non-blocking
// all-reduce only inside MPI calls). Sums are non-blocking all-reduces
// polled against a deadline, so that a rank that died or hangs makes the
// others fail within the timeout instead of waiting forever. Before each
// collective every other rank tells rank 0 it has arrived (one small
// message), so that rank 0's timeout can name the ranks that did not.
// Built into libampc-mpi.so (Plugin.cpp), which the tools load.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_MPI_MPICOLLECTIVE_H
#define AMPC_RUNTIME_MPI_MPICOLLECTIVE_H

#include "runtime/Collective.h"

#include <atomic>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ampc::rt::mpi {

class MpiCollective : public Collective {
public:
  /// Initialises MPI (once per process) with the world of the launch.
  /// `timeoutSeconds`: how long a collective waits for the other ranks, and
  /// MPI_Init for them to start (after which this process ends, its error
  /// printed as `tool`'s).
  static Status create(double timeoutSeconds, const std::string &tool,
                       std::unique_ptr<MpiCollective> &out);
  ~MpiCollective() override; // leave()

  /// Finalises MPI, once every rank calls it (a process that ends, such as
  /// a Python program at its exit): every later collective fails at once.
  /// Virtual, as abortAll.
  virtual void leave();

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status startSum(float *data, size_t count) override;
  Status startMean(uint16_t *data, size_t count, DType dtype) override;
  Status finish(const void *data) override;
  void finishAll() override;
  Status waitForAll(double timeoutSeconds) override;
  double allReduceSeconds() const override { return allReduceSeconds_; }
  Status sumOverRanks(double *values, size_t count) override;
  Status broadcast(void *data, size_t bytes) override;
  double timeoutSeconds() const override { return timeout_; }
  /// Ends every rank of the launch with `code` (after an error one rank
  /// alone saw: the others would wait for it until their timeout). Virtual,
  /// as every member a tool calls: the tools reach this class through
  /// libampc-mpi.so (Plugin.cpp) and link none of its code.
  [[noreturn]] virtual void abortAll(int code);

private:
  explicit MpiCollective(double timeout);
  /// Who has arrived at which collective round (MpiCollective.cpp).
  struct Arrivals;
  /// The thread that makes every MPI call (MpiCollective.cpp).
  class Caller;

  int rank_ = 0, size_ = 1;
  double timeout_;
  double allReduceSeconds_ = 0;
  std::unique_ptr<Arrivals> arrivals_; // used on caller_'s thread only
  struct Slicing;
  std::unique_ptr<Slicing> slicing_; // startMean's (caller_'s thread only)
  std::unique_ptr<Caller> caller_;
  /// Queues `exchange` (one round, on `data`) for finish(data), counting
  /// the time.
  Status start(const void *data, size_t count,
               std::function<Status()> exchange);
  /// Queues `job` (one collective round) on caller_'s thread.
  std::future<Status> round(std::function<Status()> job);
  bool broken_ = false; // a round failed (caller_'s thread only)
  // leave() finalised MPI (written on caller_'s thread; abortAll reads it
  // on its own).
  std::atomic<bool> left_ = false;
  /// The exchanges started and not yet finished, in the order they
  /// started, by their data.
  std::vector<std::pair<const void *, std::future<Status>>> started_;
};

} // namespace ampc::rt::mpi

#endif // AMPC_RUNTIME_MPI_MPICOLLECTIVE_H
