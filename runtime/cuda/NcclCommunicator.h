//===- NcclCommunicator.h - one rank's NCCL exchanges on a GPU ------------===//
//
// Data parallelism on GPUs sums each bucket of gradients over the ranks
// with NCCL (loaded at run time, CudaApi.h's loadNccl), on device memory,
// on a stream of its own so that the rest of the backward pass runs while
// the ranks exchange. Ordering is by events, which stream capture turns
// into graph edges (NCCL's collectives are captured too), so a step that
// exchanges is still one CUDA graph:
//
//   compute stream: ... bucket's gradients --(queued)-->        ... (wait) -->
//   means exchange stream:                         ncclAllReduce --(summed)--^
//
// startSum records `queued` on the compute stream, has the exchange stream
// wait for it and queues the sum; finish makes the compute stream wait for
// `summed`. Nothing here waits on the host.
//
// The ranks agree on the communicator through its unique id: rank 0 makes
// it (uniqueId) and the launch hands it to the others (a broadcast of its
// bytes); one rank alone needs nobody.
//
// A CUDA graph that captured exchanges holds on to the communicator: NCCL's
// destroy and abort wait until every such graph is destroyed. So the owner
// destroys its graphs before it aborts or destroys the communicator; a wait
// that times out marks the communicator failed and leaves the abort to it.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
#define AMPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H

#include "runtime/Collective.h"
#include "runtime/DType.h"
#include "runtime/cuda/CudaDevice.h"

#include <functional>
#include <memory>

namespace ampc::rt::cuda {

class NcclCommunicator {
public:
  // A fresh communicator id (loads NCCL).
  static Status uniqueId(ncclUniqueId &out);
  // Rank `rank` of `size` on `device`, before it joins a communicator:
  // NCCL loaded, the device current, the exchange stream made. Every rank
  // does this before rank 0's id is handed round, so that what can fail
  // on one rank fails before the others wait for it in join().
  // `timeoutSeconds` bounds every wait for the other ranks: join's, and
  // those for the exchanges (waitFor, and the destructor's).
  static Status prepare(CudaDevice &device, int rank, int size,
                        double timeoutSeconds,
                        std::unique_ptr<NcclCommunicator> &out);
  // prepare over `api` as it is (no library is loaded) and a context that
  // `makeCurrent` makes current on the calling thread: how prepare makes
  // one from the device, and how the tests drive the communicator over a
  // CudaApi of their own (NcclHostTest.cpp).
  static Status prepareWith(const CudaApi &api,
                            std::function<Status()> makeCurrent, int rank,
                            int size, double timeoutSeconds,
                            std::unique_ptr<NcclCommunicator> &out);
  // Joins the communicator `id` (every rank with the same id; it returns
  // when all have, or fails after the timeout). Under mpirun a rank that
  // fails here ends the job, and with it the others' wait.
  Status join(const ncclUniqueId &id);
  // prepare and join at once (one rank alone, the tests).
  static Status create(CudaDevice &device, int rank, int size,
                       const ncclUniqueId &id,
                       std::unique_ptr<NcclCommunicator> &out);
  // Waits for the exchange stream (unless failed: at most the timeout) and
  // closes the communicator, aborting it when it failed (the exchanges
  // still queued then end where they are). The graphs that captured its
  // exchanges must be gone (see above).
  ~NcclCommunicator();

  int rank() const { return rank_; }
  int size() const { return size_; }

  // One bucket's events, made once (when the session prepares its
  // kernels) and used by every step.
  class Bucket {
  public:
    ~Bucket();

  private:
    friend class NcclCommunicator;
    const CudaApi *api_ = nullptr;
    CUevent queued_ = nullptr, summed_ = nullptr;
  };
  Status createBucket(std::unique_ptr<Bucket> &out);

  // Queues the sum over the ranks of `count` values of `type` (F32: the
  // gradients; F64: synchronised batch norm's statistics) at `send` into
  // `recv` (which may be `send`: in place) after the work queued on
  // `compute` so far. Every rank starts the same sums in the same order:
  // they run on the one exchange stream in the order they were queued.
  Status startSum(Bucket &bucket, CUdeviceptr send, CUdeviceptr recv,
                  size_t count, DType type, CUstream compute);
  // Work queued on `compute` from now on sees the bucket's sum.
  Status finish(Bucket &bucket, CUstream compute);
  // The communicator's own error, if an exchange failed (a rank that
  // died, a network error), polled while a step's stream is waited for.
  Status asyncError();
  // Waits for the work queued on `stream` (`what`, for the errors),
  // polling the communicator's own error, for at most the timeout: then
  // the communicator is marked failed and the error says that an exchange
  // did not end (a rank died or hangs).
  Status waitFor(CUstream stream, const char *what);
  // Ends the communicator's exchanges where they are (a rank that does not
  // come): the kernels waiting in them return, and every later exchange
  // fails. The graphs that captured its exchanges must be gone.
  void abort();
  bool failed() const { return failed_; }

private:
  NcclCommunicator(const CudaApi &api, std::function<Status()> makeCurrent,
                   int rank, int size, double timeout)
      : api_(api), makeCurrent_(std::move(makeCurrent)), rank_(rank),
        size_(size), timeout_(boundedSeconds(timeout)) {}
  // `s` unchanged, the communicator marked failed when it is an error (its
  // destructor then aborts instead of waiting).
  Status failing(Status s) {
    failed_ |= !s;
    return s;
  }
  // The error of a CUDA call `call` of an exchange, which fails the
  // communicator unless it is a stream capture's error (isCaptureError).
  Status cuFailing(CUresult r, const char *call);
  static bool isCaptureError(CUresult r);
  // Whether `stream` is being captured (or its capture was invalidated).
  bool capturing(CUstream stream) const;

  const CudaApi &api_;
  std::function<Status()> makeCurrent_; // the device's context, per thread
  int rank_, size_;
  double timeout_;
  ncclComm_t comm_ = nullptr;
  CUstream exchange_ = nullptr;
  bool failed_ = false; // then the destructor aborts, it does not wait
};

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_NCCLCOMMUNICATOR_H
