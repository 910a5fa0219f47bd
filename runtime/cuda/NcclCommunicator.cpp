//===- NcclCommunicator.cpp - one rank's NCCL exchanges on a GPU ----------===//
#include "runtime/cuda/NcclCommunicator.h"

#include "runtime/ops/AttrReaders.h"

#include <chrono>
#include <cstdlib>
#include <future>
#include <memory>
#include <string>
#include <thread>

namespace ampc::rt::cuda {

Status NcclCommunicator::uniqueId(ncclUniqueId &out) {
  const CudaApi *api = nullptr;
  AMPC_RETURN_IF_ERROR(loadNccl(api));
  AMPC_NCCL_CHECK(*api, ncclGetUniqueId(&out));
  return Status::ok();
}

Status NcclCommunicator::prepare(CudaDevice &device, int rank, int size,
                                 double timeoutSeconds,
                                 std::unique_ptr<NcclCommunicator> &out) {
  const CudaApi *api = nullptr;
  AMPC_RETURN_IF_ERROR(loadNccl(api));
  // Connections are made in join, not lazily in a step's first exchange
  // (NCCL 2.22's default), where no timeout of ours would see them. Set on
  // every rank before rank 0's uniqueId starts NCCL, which then applies
  // nccl.conf without overwriting: the ranks must agree on it, or their
  // joins would not match. (Unless the user set it: theirs, everywhere.)
  setenv("NCCL_RUNTIME_CONNECT", "0", /*overwrite=*/0);
  // NCCL runs on the device's primary context, current on the thread that
  // calls it.
  return prepareWith(
      *api, [&device] { return device.makeCurrent(); }, rank, size,
      timeoutSeconds, out);
}

Status NcclCommunicator::prepareWith(const CudaApi &api,
                                     std::function<Status()> makeCurrent,
                                     int rank, int size, double timeoutSeconds,
                                     std::unique_ptr<NcclCommunicator> &out) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status::error("NCCL rank " + std::to_string(rank) + " of " +
                         std::to_string(size) + " is out of range");
  AMPC_RETURN_IF_ERROR(makeCurrent());
  std::unique_ptr<NcclCommunicator> c(new NcclCommunicator(
      api, std::move(makeCurrent), rank, size, timeoutSeconds));
  AMPC_CU_CHECK(api, cuStreamCreate(&c->exchange_, CU_STREAM_NON_BLOCKING));
  out = std::move(c);
  return Status::ok();
}

Status NcclCommunicator::join(const ncclUniqueId &id) {
  // ncclCommInitRank returns when every rank has joined, and has no
  // timeout: a rank that hangs before it (or a network that never
  // connects) would hang this one. So it runs on a thread of its own,
  // waited for at most the timeout; after that the thread is left where it
  // is (its state is shared, not this object's) and the error ends the
  // rank, whose launch then ends the others.
  struct Joining {
    ncclComm_t comm = nullptr;
    ncclResult_t result = ncclSuccess;
    Status current;
  };
  auto state = std::make_shared<Joining>();
  std::packaged_task<void()> task([state, id, makeCurrent = makeCurrent_,
                                   api = &api_, size = size_, rank = rank_] {
    // The device's context is current per thread.
    state->current = makeCurrent();
    if (state->current)
      state->result = api->ncclCommInitRank(&state->comm, size, id, rank);
  });
  std::future<void> joined = task.get_future();
  std::thread(std::move(task)).detach();
  if (joined.wait_for(std::chrono::duration<double>(timeout_)) !=
      std::future_status::ready) {
    return Status::error(
        "joining the ranks' NCCL communicator (ncclCommInitRank) waited " +
        ops::num(timeout_) +
        " s for the other ranks (one died or hangs before it, or the "
        "network does not connect; --collective-timeout)");
  }
  AMPC_RETURN_IF_ERROR(state->current);
  if (state->result != ncclSuccess)
    return ncclError(api_, state->result,
                     ("ncclCommInitRank(rank " + std::to_string(rank_) +
                      " of " + std::to_string(size_) + ")")
                         .c_str());
  comm_ = state->comm;
  return Status::ok();
}

Status NcclCommunicator::create(CudaDevice &device, int rank, int size,
                                const ncclUniqueId &id,
                                std::unique_ptr<NcclCommunicator> &out) {
  std::unique_ptr<NcclCommunicator> c;
  AMPC_RETURN_IF_ERROR(prepare(device, rank, size, 60, c));
  AMPC_RETURN_IF_ERROR(c->join(id));
  out = std::move(c);
  return Status::ok();
}

NcclCommunicator::~NcclCommunicator() {
  // The driver calls below need the context current on this thread, which
  // may not be the one that ran the steps (a Python session collected
  // elsewhere).
  (void)makeCurrent_();
  // An exchange still queued (a run that failed between a bucket's start
  // and its wait) writes into buffers about to be freed: waited for, and
  // aborted after the timeout.
  if (comm_ && exchange_ && !failed_)
    (void)waitFor(exchange_, "closing the NCCL communicator");
  if (comm_) {
    // After a failure the exchanges may never end: abort rather than wait.
    if (failed_)
      api_.ncclCommAbort(comm_);
    else
      api_.ncclCommDestroy(comm_);
  }
  if (exchange_) {
    // Aborted (here or by the owner), the exchanges end where they are:
    // this stream is then waited for before the memory they wrote goes.
    if (failed_)
      api_.cuStreamSynchronize(exchange_);
    api_.cuStreamDestroy(exchange_);
  }
}

NcclCommunicator::Bucket::~Bucket() {
  if (queued_)
    api_->cuEventDestroy(queued_);
  if (summed_)
    api_->cuEventDestroy(summed_);
}

Status NcclCommunicator::createBucket(std::unique_ptr<Bucket> &out) {
  auto b = std::make_unique<Bucket>();
  b->api_ = &api_;
  // No timing: the events only order the two streams.
  AMPC_CU_CHECK(api_, cuEventCreate(&b->queued_, CU_EVENT_DISABLE_TIMING));
  AMPC_CU_CHECK(api_, cuEventCreate(&b->summed_, CU_EVENT_DISABLE_TIMING));
  out = std::move(b);
  return Status::ok();
}

Status NcclCommunicator::startSum(Bucket &bucket, CUdeviceptr send,
                                  CUdeviceptr recv, size_t count, DType type,
                                  CUstream compute) {
  if (!comm_ || failed_)
    return Status::error("the NCCL communicator failed (an earlier "
                         "exchange failed or did not end)");
  if (type != DType::F32 && type != DType::F64)
    return Status::error("an NCCL sum of " + std::string(name(type)) +
                         " values: only f32 and f64 are summed");
  if (CUresult r = api_.cuEventRecord(bucket.queued_, compute);
      r != CUDA_SUCCESS)
    return cuFailing(r, "cuEventRecord (an exchange's start)");
  if (CUresult r = api_.cuStreamWaitEvent(exchange_, bucket.queued_, 0);
      r != CUDA_SUCCESS)
    return cuFailing(r, "cuStreamWaitEvent (an exchange's start)");
  // CUstream and cudaStream_t are the same handle.
  if (ncclResult_t r = api_.ncclAllReduce(
          reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
          count, type == DType::F64 ? ncclFloat64 : ncclFloat32, ncclSum, comm_,
          reinterpret_cast<cudaStream_t>(exchange_));
      r != ncclSuccess) {
    // As a CUDA call's, a capture's error is the capture's (NCCL's own
    // errors are seen by asyncError as well).
    if (!capturing(compute))
      failed_ = true;
    return ncclError(api_, r, "ncclAllReduce");
  }
  if (CUresult r = api_.cuEventRecord(bucket.summed_, exchange_);
      r != CUDA_SUCCESS)
    return cuFailing(r, "cuEventRecord (an exchange's end)");
  return Status::ok();
}

Status NcclCommunicator::finish(Bucket &bucket, CUstream compute) {
  if (CUresult r = api_.cuStreamWaitEvent(compute, bucket.summed_, 0);
      r != CUDA_SUCCESS)
    return cuFailing(r, "cuStreamWaitEvent (an exchange's end)");
  return Status::ok();
}

Status NcclCommunicator::waitFor(CUstream stream, const char *what) {
  // Failed, the exchanges queued may never end: waiting again would only
  // spend the timeout again.
  if (failed_)
    return Status::error(std::string(what) +
                         ": the NCCL communicator failed (an earlier "
                         "exchange failed or did not end)");
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::duration<double>(timeout_);
  for (;;) {
    CUresult r = api_.cuStreamQuery(stream);
    if (r == CUDA_SUCCESS)
      return asyncError().withContext(what);
    if (r != CUDA_ERROR_NOT_READY)
      return failing(cuError(api_, r, "cuStreamQuery").withContext(what));
    AMPC_RETURN_IF_ERROR(asyncError().withContext(what));
    if (Clock::now() > deadline) {
      // Not aborted here: the graph that captured the exchange must go
      // first (see the header), which is the owner's to do.
      failed_ = true;
      return Status::error(std::string(what) +
                           ": the step's exchange over NCCL did not end "
                           "within " +
                           ops::num(timeout_) +
                           " s (--collective-timeout): another rank died or "
                           "hangs");
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

bool NcclCommunicator::isCaptureError(CUresult r) {
  switch (r) {
  case CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED:
  case CUDA_ERROR_STREAM_CAPTURE_INVALIDATED:
  case CUDA_ERROR_STREAM_CAPTURE_MERGE:
  case CUDA_ERROR_STREAM_CAPTURE_UNMATCHED:
  case CUDA_ERROR_STREAM_CAPTURE_UNJOINED:
  case CUDA_ERROR_STREAM_CAPTURE_ISOLATION:
  case CUDA_ERROR_STREAM_CAPTURE_IMPLICIT:
  case CUDA_ERROR_CAPTURED_EVENT:
  case CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD:
    return true;
  default:
    return false;
  }
}

bool NcclCommunicator::capturing(CUstream stream) const {
  CUstreamCaptureStatus status = CU_STREAM_CAPTURE_STATUS_NONE;
  return api_.cuStreamIsCapturing(stream, &status) == CUDA_SUCCESS &&
         status != CU_STREAM_CAPTURE_STATUS_NONE;
}

Status NcclCommunicator::cuFailing(CUresult r, const char *call) {
  // A broken capture (a library's call, or the step's) fails the capture,
  // and the session then launches the step kernel by kernel with this
  // communicator; any other error is the communicator's.
  if (!isCaptureError(r))
    failed_ = true;
  return cuError(api_, r, call);
}

void NcclCommunicator::abort() {
  failed_ = true;
  if (comm_)
    api_.ncclCommAbort(comm_);
  comm_ = nullptr;
}

Status NcclCommunicator::asyncError() {
  if (!comm_)
    return Status::error("the NCCL communicator was aborted (an earlier "
                         "exchange did not end)");
  ncclResult_t state = ncclSuccess;
  if (ncclResult_t r = api_.ncclCommGetAsyncError(comm_, &state);
      r != ncclSuccess)
    return failing(ncclError(api_, r, "ncclCommGetAsyncError"));
  if (state != ncclSuccess && state != ncclInProgress)
    return failing(
        ncclError(api_, state, "an exchange of the NCCL communicator"));
  return Status::ok();
}

} // namespace ampc::rt::cuda
