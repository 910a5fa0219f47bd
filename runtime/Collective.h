//===- Collective.h - the processes of a data-parallel run ------*- C++ -*-===//
//
// What the kernels that exchange gradients (all_reduce_start/wait) see of
// the other processes: a rank, a world size and an in-place sum that runs
// while the caller goes on. The runtime core knows no transport;
// runtime/mpi implements it over MPI, and a Session is given one through
// SessionOptions.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_COLLECTIVE_H
#define AMPC_RUNTIME_COLLECTIVE_H

#include "runtime/DType.h"
#include "runtime/Status.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>

namespace ampc::rt {

/// A collective wait's limit as the clocks can add it: about 31 years at
/// most (a larger --collective-timeout means "no limit" in practice, and
/// past int64 nanoseconds a deadline would wrap into the past). MPI's and
/// NCCL's waits both take it.
inline double boundedSeconds(double seconds) {
  return std::clamp(seconds, 0.0, 1e9);
}

class Collective {
public:
  virtual ~Collective() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Starts replacing `data[0, count)` on every process by its elementwise
  /// sum over all processes (IEEE f32 additions: an inf or NaN anywhere is
  /// in every sum), and returns at once: the caller goes on with other
  /// work and must neither read nor write the data until finish(data) has
  /// returned. Every process starts the same exchanges in the same order.
  virtual Status startSum(float *data, size_t count) = 0;
  /// As startSum, for `count` f16 or bf16 values (`dtype`, as bit
  /// patterns) exchanged in their own type: each becomes the mean over all
  /// processes, summed in f32 in rank order, times 1/size() rounded to f32,
  /// rounded once to `dtype`; the same on every process.
  virtual Status startMean(uint16_t *data, size_t count, DType dtype) = 0;
  /// Waits for the exchange started on `data`. A process that does not
  /// arrive within the collective's timeout makes it fail, naming the
  /// wait.
  virtual Status finish(const void *data) = 0;
  /// Waits for every sum started and not finished (after an error, before
  /// their buffers go away); their failures are dropped. After a failed
  /// call (a rank died or hangs) the collective fails every later one at
  /// once and makes no more exchanges: the run is over.
  virtual void finishAll() = 0;
  /// Replaces `values[0, count)` by their sums over all processes, in
  /// double, and returns when they are there: a step's figures (the ranks'
  /// losses, synchronised batch norm's statistics), not gradients, so not
  /// counted in allReduceSeconds().
  virtual Status sumOverRanks(double *values, size_t count) = 0;
  /// Replaces `data[0, bytes)` on every process by rank 0's bytes and
  /// returns when they are there (how the ranks' GPUs agree on an NCCL
  /// communicator: rank 0 makes its id). Fails, naming the wait, after the
  /// collective's timeout.
  virtual Status broadcast(void *data, size_t bytes) = 0;
  /// How long a wait for the other processes may take before it fails
  /// (what a GPU's exchanges, which this class does not make, wait for
  /// them too).
  virtual double timeoutSeconds() const = 0;
  /// Returns when every process has called it, or fails after
  /// `timeoutSeconds` (the wait while one process alone does other work,
  /// such as rank 0 evaluating or writing a checkpoint).
  virtual Status waitForAll(double timeoutSeconds) = 0;
  /// Seconds the caller has spent in startSum, startMean and finish: the
  /// exchange and the wait for the other ranks that other work did not
  /// hide, what data parallelism costs a step.
  virtual double allReduceSeconds() const = 0;
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_COLLECTIVE_H
