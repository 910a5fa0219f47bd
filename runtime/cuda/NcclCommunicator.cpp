//===- NcclCommunicator.cpp - one rank's NCCL exchanges on a GPU ----------===//
#include "runtime/cuda/NcclCommunicator.h"

#include <string>

namespace ampc::rt::cuda {

Status NcclCommunicator::uniqueId(ncclUniqueId &out) {
  const CudaApi *api = nullptr;
  AMPC_RETURN_IF_ERROR(loadNccl(api));
  AMPC_NCCL_CHECK(*api, ncclGetUniqueId(&out));
  return Status::ok();
}

Status NcclCommunicator::create(CudaDevice &device, int rank, int size,
                                const ncclUniqueId &id,
                                std::unique_ptr<NcclCommunicator> &out) {
  if (size < 1 || rank < 0 || rank >= size)
    return Status::error("NCCL rank " + std::to_string(rank) + " of " +
                         std::to_string(size) + " is out of range");
  const CudaApi *api = nullptr;
  AMPC_RETURN_IF_ERROR(loadNccl(api));
  // NCCL runs on the device's primary context, current on this thread.
  AMPC_RETURN_IF_ERROR(device.makeCurrent());
  std::unique_ptr<NcclCommunicator> c(
      new NcclCommunicator(device, *api, rank, size));
  AMPC_CU_CHECK(*api, cuStreamCreate(&c->exchange_, CU_STREAM_NON_BLOCKING));
  if (ncclResult_t r = api->ncclCommInitRank(&c->comm_, size, id, rank);
      r != ncclSuccess) {
    c->comm_ = nullptr;
    return ncclError(*api, r,
                     ("ncclCommInitRank(rank " + std::to_string(rank) + " of " +
                      std::to_string(size) + ")")
                         .c_str());
  }
  out = std::move(c);
  return Status::ok();
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_) {
    // After a failure the exchanges may never end: abort rather than wait.
    if (failed_)
      api_.ncclCommAbort(comm_);
    else
      api_.ncclCommDestroy(comm_);
  }
  if (exchange_)
    api_.cuStreamDestroy(exchange_);
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
                                  CUdeviceptr recv, size_t count,
                                  CUstream compute) {
  if (!comm_)
    return Status::error("the NCCL communicator was aborted (an earlier "
                         "exchange did not end)");
  AMPC_CU_CHECK(api_, cuEventRecord(bucket.queued_, compute));
  AMPC_CU_CHECK(api_, cuStreamWaitEvent(exchange_, bucket.queued_, 0));
  // CUstream and cudaStream_t are the same handle.
  if (ncclResult_t r = api_.ncclAllReduce(
          reinterpret_cast<const void *>(send), reinterpret_cast<void *>(recv),
          count, ncclFloat32, ncclSum, comm_,
          reinterpret_cast<cudaStream_t>(exchange_));
      r != ncclSuccess) {
    failed_ = true;
    return ncclError(api_, r, "ncclAllReduce");
  }
  AMPC_CU_CHECK(api_, cuEventRecord(bucket.summed_, exchange_));
  return Status::ok();
}

Status NcclCommunicator::finish(Bucket &bucket, CUstream compute) {
  AMPC_CU_CHECK(api_, cuStreamWaitEvent(compute, bucket.summed_, 0));
  return Status::ok();
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
  AMPC_NCCL_CHECK(api_, ncclCommGetAsyncError(comm_, &state));
  if (state != ncclSuccess && state != ncclInProgress) {
    failed_ = true;
    return ncclError(api_, state, "an exchange of the NCCL communicator");
  }
  return Status::ok();
}

} // namespace ampc::rt::cuda
