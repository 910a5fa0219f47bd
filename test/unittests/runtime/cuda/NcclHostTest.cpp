//===- NcclHostTest.cpp - the communicator's host logic, without a GPU ----===//
//
// NcclCommunicator's decisions are made on the host: what it queues on
// which stream, in which order, with which type; when a wait gives up,
// what fails the communicator and what does not, and whether closing it
// destroys or aborts it. None of that needs a GPU, so these tests drive
// it over a CudaApi of fakes that log each call and answer as each test
// says (NcclCommunicator::prepareWith). They run on every machine; what
// NCCL and the driver then do is NcclTest.cpp's, on a GPU.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/NcclCommunicator.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ampc::rt::cuda {
namespace {

// Handles the fakes hand out, told apart in the log.
CUstream const kExchange = reinterpret_cast<CUstream>(0x100);
CUstream const kCompute = reinterpret_cast<CUstream>(0x200);
ncclComm_t const kComm = reinterpret_cast<ncclComm_t>(0x300);

// What the fakes answer, and what they were asked. One test at a time.
struct Fakes {
  std::mutex mu;
  std::vector<std::string> log;
  CUresult eventRecord = CUDA_SUCCESS;
  CUresult streamQuery = CUDA_SUCCESS;
  CUstreamCaptureStatus captureStatus = CU_STREAM_CAPTURE_STATUS_NONE;
  ncclResult_t initRank = ncclSuccess;
  ncclResult_t allReduce = ncclSuccess;
  ncclResult_t asyncState = ncclSuccess;
  std::atomic<bool> initBlocks{false}; // until released
  std::atomic<bool> initEntered{false}, initReturned{false};
  int nextEvent = 0;

  void say(std::string line) {
    std::lock_guard<std::mutex> lock(mu);
    log.push_back(std::move(line));
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mu);
    log.clear();
  }
  std::vector<std::string> calls() {
    std::lock_guard<std::mutex> lock(mu);
    return log;
  }
};
Fakes *fakes = nullptr;

std::string streamName(CUstream s) {
  return s == kExchange ? "exchange" : s == kCompute ? "compute" : "?";
}
std::string eventName(CUevent e) {
  return "event" + std::to_string(reinterpret_cast<uintptr_t>(e));
}

CUresult fakeStreamCreate(CUstream *s, unsigned) {
  *s = kExchange;
  fakes->say("create stream exchange");
  return CUDA_SUCCESS;
}
CUresult fakeStreamSynchronize(CUstream s) {
  fakes->say("synchronize stream " + streamName(s));
  return CUDA_SUCCESS;
}
CUresult fakeStreamIsCapturing(CUstream, CUstreamCaptureStatus *status) {
  *status = fakes->captureStatus;
  return CUDA_SUCCESS;
}
CUresult fakeStreamDestroy(CUstream s) {
  fakes->say("destroy stream " + streamName(s));
  return CUDA_SUCCESS;
}
CUresult fakeEventCreate(CUevent *e, unsigned) {
  *e = reinterpret_cast<CUevent>(uintptr_t(++fakes->nextEvent));
  return CUDA_SUCCESS;
}
CUresult fakeEventDestroy(CUevent) { return CUDA_SUCCESS; }
CUresult fakeEventRecord(CUevent e, CUstream s) {
  fakes->say("record " + eventName(e) + " on " + streamName(s));
  return fakes->eventRecord;
}
CUresult fakeStreamWaitEvent(CUstream s, CUevent e, unsigned) {
  fakes->say(streamName(s) + " waits for " + eventName(e));
  return CUDA_SUCCESS;
}
CUresult fakeStreamQuery(CUstream s) {
  fakes->say("query " + streamName(s));
  return fakes->streamQuery;
}
CUresult fakeGetErrorName(CUresult r, const char **s) {
  *s = r == CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
           ? "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"
       : r == CUDA_ERROR_LAUNCH_FAILED ? "CUDA_ERROR_LAUNCH_FAILED"
                                       : "another CUresult";
  return CUDA_SUCCESS;
}
const char *fakeNcclErrorString(ncclResult_t) { return "a fake NCCL error"; }
ncclResult_t fakeInitRank(ncclComm_t *comm, int size, ncclUniqueId, int rank) {
  fakes->say("init rank " + std::to_string(rank) + " of " +
             std::to_string(size));
  fakes->initEntered = true;
  while (fakes->initBlocks)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  *comm = kComm;
  ncclResult_t result = fakes->initRank;
  // The last touch of the test's state: its TearDown waits for it.
  fakes->initReturned = true;
  return result;
}
ncclResult_t fakeAllReduce(const void *send, void *recv, size_t count,
                           ncclDataType_t type, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  fakes->say("all-reduce " + std::to_string(count) + " " +
             (type == ncclFloat64   ? "f64"
              : type == ncclFloat32 ? "f32"
                                    : "other") +
             (op == ncclSum ? " sum" : " other") +
             (send == recv ? " in place" : "") + " on " +
             streamName(reinterpret_cast<CUstream>(stream)) +
             (comm == kComm ? "" : " of another communicator"));
  return fakes->allReduce;
}
ncclResult_t fakeGetAsyncError(ncclComm_t, ncclResult_t *state) {
  *state = fakes->asyncState;
  return ncclSuccess;
}
ncclResult_t fakeAbort(ncclComm_t) {
  fakes->say("abort");
  return ncclSuccess;
}
ncclResult_t fakeDestroy(ncclComm_t) {
  fakes->say("destroy");
  return ncclSuccess;
}

class NcclHost : public ::testing::Test {
protected:
  void SetUp() override {
    fakes = &state;
    api.cuStreamCreate = fakeStreamCreate;
    api.cuStreamDestroy = fakeStreamDestroy;
    api.cuStreamSynchronize = fakeStreamSynchronize;
    api.cuStreamIsCapturing = fakeStreamIsCapturing;
    api.cuEventCreate = fakeEventCreate;
    api.cuEventDestroy = fakeEventDestroy;
    api.cuEventRecord = fakeEventRecord;
    api.cuStreamWaitEvent = fakeStreamWaitEvent;
    api.cuStreamQuery = fakeStreamQuery;
    api.cuGetErrorName = fakeGetErrorName;
    api.ncclGetErrorString = fakeNcclErrorString;
    api.ncclCommInitRank = fakeInitRank;
    api.ncclAllReduce = fakeAllReduce;
    api.ncclCommGetAsyncError = fakeGetAsyncError;
    api.ncclCommAbort = fakeAbort;
    api.ncclCommDestroy = fakeDestroy;
  }
  void TearDown() override {
    // A join that timed out left its thread in the fake: let it go.
    state.initBlocks = false;
    while (joinStarted && !state.initReturned)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }

  // A communicator of rank 1 of 2 that has joined.
  std::unique_ptr<NcclCommunicator> joined(double timeout = 5) {
    std::unique_ptr<NcclCommunicator> c;
    Status s = NcclCommunicator::prepareWith(
        api, [] { return Status::ok(); }, 1, 2, timeout, c);
    EXPECT_TRUE(s) << s.message();
    joinStarted = true;
    s = c->join(ncclUniqueId{});
    EXPECT_TRUE(s) << s.message();
    return c;
  }

  Fakes state;
  CudaApi api;
  bool joinStarted = false;
};

TEST_F(NcclHost, SumsQueueOnTheExchangeStreamBetweenTwoEvents) {
  auto c = joined();
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(c->createBucket(bucket));
  ASSERT_TRUE(c->startSum(*bucket, 0x10, 0x20, 1000, DType::F32, kCompute));
  ASSERT_TRUE(c->finish(*bucket, kCompute));
  ASSERT_TRUE(c->startSum(*bucket, 0x30, 0x30, 64, DType::F64, kCompute));
  ASSERT_TRUE(c->finish(*bucket, kCompute));
  std::vector<std::string> want = {
      "create stream exchange",
      "init rank 1 of 2",
      "record event1 on compute",
      "exchange waits for event1",
      "all-reduce 1000 f32 sum on exchange",
      "record event2 on exchange",
      "compute waits for event2",
      "record event1 on compute",
      "exchange waits for event1",
      "all-reduce 64 f64 sum in place on exchange",
      "record event2 on exchange",
      "compute waits for event2",
  };
  EXPECT_EQ(state.calls(), want);

  Status s = c->startSum(*bucket, 0x10, 0x10, 8, DType::BF16, kCompute);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "an NCCL sum of bf16 values: only f32 and f64 are summed");
  EXPECT_FALSE(c->failed());

  // Closed healthy: the exchange stream is waited for, then destroyed.
  bucket.reset();
  state.clear();
  c.reset();
  want = {"query exchange", "destroy", "destroy stream exchange"};
  EXPECT_EQ(state.calls(), want);
}

TEST_F(NcclHost, AWaitThatTimesOutFailsItAndClosingAbortsIt) {
  auto c = joined(/*timeout=*/0.05);
  state.streamQuery = CUDA_ERROR_NOT_READY; // a rank that never comes
  auto start = std::chrono::steady_clock::now();
  Status s = c->waitFor(kCompute, "step 3");
  double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "step 3: the step's exchange over NCCL did not end "
                         "within 0.05 s (--collective-timeout): another rank "
                         "died or hangs");
  EXPECT_GE(waited, 0.05);
  EXPECT_LT(waited, 5.0);
  EXPECT_TRUE(c->failed());
  // Not aborted yet: a graph that captured the exchanges may still exist.
  for (const std::string &call : state.calls())
    EXPECT_NE(call, "abort");

  // A failed communicator starts nothing more.
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(c->createBucket(bucket));
  state.clear();
  s = c->startSum(*bucket, 0x10, 0x10, 8, DType::F32, kCompute);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "the NCCL communicator failed (an earlier exchange "
                         "failed or did not end)");
  EXPECT_TRUE(state.calls().empty());

  // Closing it aborts it, without waiting again, and then waits for the
  // exchange stream, whose exchanges the abort ended.
  bucket.reset();
  c.reset();
  std::vector<std::string> want = {"abort", "synchronize stream exchange",
                                   "destroy stream exchange"};
  EXPECT_EQ(state.calls(), want);
}

TEST_F(NcclHost, AnExchangeErrorFailsItAndABrokenCaptureDoesNot) {
  auto c = joined();
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(c->createBucket(bucket));
  // A library broke the step's capture: the step falls back to launching
  // kernel by kernel, with the same communicator.
  state.eventRecord = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
  Status s = c->startSum(*bucket, 0x10, 0x10, 8, DType::F32, kCompute);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("CUDA_ERROR_STREAM_CAPTURE_INVALIDATED"),
            std::string::npos)
      << s.message();
  EXPECT_FALSE(c->failed());
  state.eventRecord = CUDA_SUCCESS;
  EXPECT_TRUE(c->startSum(*bucket, 0x10, 0x10, 8, DType::F32, kCompute));

  // NCCL's own error (a rank that died, the network) fails it.
  state.asyncState = ncclRemoteError;
  s = c->asyncError();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "an exchange of the NCCL communicator failed: a "
                         "fake NCCL error (NCCL " +
                             std::to_string(int(ncclRemoteError)) + ")");
  EXPECT_TRUE(c->failed());
  bucket.reset();
  state.clear();
  c.reset();
  std::vector<std::string> want = {"abort", "synchronize stream exchange",
                                   "destroy stream exchange"};
  EXPECT_EQ(state.calls(), want);
}

TEST_F(NcclHost, OtherCudaErrorsAndNcclsFailItOutsideACapture) {
  for (bool viaNccl : {false, true}) {
    for (bool inCapture : {false, true}) {
      SCOPED_TRACE(std::string(viaNccl ? "ncclAllReduce" : "cuEventRecord") +
                   (inCapture ? " in a capture" : ""));
      auto c = joined();
      std::unique_ptr<NcclCommunicator::Bucket> bucket;
      ASSERT_TRUE(c->createBucket(bucket));
      state.captureStatus = inCapture ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                      : CU_STREAM_CAPTURE_STATUS_NONE;
      if (viaNccl)
        state.allReduce = ncclUnhandledCudaError;
      else
        state.eventRecord = CUDA_ERROR_LAUNCH_FAILED;
      Status s = c->startSum(*bucket, 0x10, 0x10, 8, DType::F32, kCompute);
      ASSERT_FALSE(s);
      EXPECT_NE(
          s.message().find(viaNccl ? "ncclAllReduce failed"
                                   : "cuEventRecord (an exchange's "
                                     "start) failed: CUDA_ERROR_LAUNCH_FAILED"),
          std::string::npos)
          << s.message();
      // A CUDA error other than a capture's fails it in a capture too;
      // NCCL's error in a capture is taken for the capture's.
      EXPECT_EQ(c->failed(), !(viaNccl && inCapture));
      state.allReduce = ncclSuccess;
      state.eventRecord = CUDA_SUCCESS;
      // A failed communicator's wait says so at once.
      if (c->failed()) {
        state.streamQuery = CUDA_ERROR_NOT_READY;
        s = c->waitFor(kCompute, "step 1");
        ASSERT_FALSE(s);
        EXPECT_EQ(s.message(), "step 1: the NCCL communicator failed (an "
                               "earlier exchange failed or did not end)");
        state.streamQuery = CUDA_SUCCESS;
      }
      bucket.reset();
      c.reset();
      state.clear();
    }
  }
}

TEST_F(NcclHost, AJoinThatNeverEndsGivesUpAfterTheTimeout) {
  state.initBlocks = true; // the other rank never joins
  std::unique_ptr<NcclCommunicator> c;
  ASSERT_TRUE(NcclCommunicator::prepareWith(
      api, [] { return Status::ok(); }, 0, 2, 0.05, c));
  joinStarted = true;
  auto start = std::chrono::steady_clock::now();
  Status s = c->join(ncclUniqueId{});
  // The join's thread logs its call; the log is cleared after it.
  while (!state.initEntered)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "joining the ranks' NCCL communicator (ncclCommInitRank) waited "
            "0.05 s for the other ranks (one died or hangs before it, or the "
            "network does not connect; --collective-timeout)");
  EXPECT_GE(waited, 0.05);
  EXPECT_LT(waited, 5.0);
  // It never joined: closing it neither destroys nor aborts anything, and
  // the join's late answer goes nowhere.
  state.clear();
  c.reset();
  std::vector<std::string> want = {"destroy stream exchange"};
  EXPECT_EQ(state.calls(), want);
}

TEST_F(NcclHost, AJoinThatFailsSaysWhichRank) {
  state.initRank = ncclInvalidUsage;
  std::unique_ptr<NcclCommunicator> c;
  ASSERT_TRUE(NcclCommunicator::prepareWith(
      api, [] { return Status::ok(); }, 1, 2, 5, c));
  joinStarted = true;
  Status s = c->join(ncclUniqueId{});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "ncclCommInitRank(rank 1 of 2) failed: a fake NCCL "
                         "error (NCCL " +
                             std::to_string(int(ncclInvalidUsage)) + ")");
}

TEST_F(NcclHost, AContextThatCannotBeMadeCurrentIsRefused) {
  std::unique_ptr<NcclCommunicator> c;
  Status s = NcclCommunicator::prepareWith(
      api, [] { return Status::error("cuCtxSetCurrent failed: fake"); }, 0, 1,
      5, c);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "cuCtxSetCurrent failed: fake");
  EXPECT_EQ(c, nullptr);
}

TEST_F(NcclHost, ARankOutsideTheCommunicatorIsRefused) {
  for (auto [rank, size] : {std::pair{1, 1}, {-1, 2}, {0, 0}}) {
    std::unique_ptr<NcclCommunicator> c;
    Status s = NcclCommunicator::prepareWith(
        api, [] { return Status::ok(); }, rank, size, 5, c);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.message(), "NCCL rank " + std::to_string(rank) + " of " +
                               std::to_string(size) + " is out of range");
    EXPECT_EQ(c, nullptr);
  }
  EXPECT_TRUE(state.calls().empty());
}

} // namespace
} // namespace ampc::rt::cuda
