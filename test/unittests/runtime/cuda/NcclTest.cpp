//===- NcclTest.cpp - NCCL on one rank ------------------------------------===//
//
// The GPU machines have one GPU, so NCCL runs here as a communicator of
// one rank: its sum over the ranks is the rank's own values, which checks
// the loading, the communicator's bootstrap, the exchange stream and the
// events that order it against the compute stream (a sum queued before
// the data it reads, or read before it ends, gives other values). Skipped
// without a GPU or without NCCL, saying which; AMPC_REQUIRE_GPU=1 makes
// both failures.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"
#include "runtime/cuda/NcclCommunicator.h"

#include <cstring>
#include <vector>

namespace ampc::rt::cuda {
namespace {
using test::HostTensor;
using test::OpCase;

#define SKIP_WITHOUT_NCCL()                                                    \
  do {                                                                         \
    const CudaApi *ampcApi_ = nullptr;                                         \
    if (Status ampcS_ = loadNccl(ampcApi_); !ampcS_) {                         \
      if (::ampc::unittest::gpuRequired())                                     \
        GTEST_FAIL() << ampcS_.message()                                       \
                     << " (AMPC_REQUIRE_GPU=1: a failure, not a skip)";        \
      GTEST_SKIP() << ampcS_.message();                                        \
    }                                                                          \
  } while (0)

// The test device's context current and a communicator of it alone.
Status oneRank(CudaDevice &device, std::unique_ptr<NcclCommunicator> &comm) {
  AMPC_RETURN_IF_ERROR(device.makeCurrent());
  ncclUniqueId id;
  AMPC_RETURN_IF_ERROR(NcclCommunicator::uniqueId(id));
  return NcclCommunicator::create(device, 0, 1, id, comm);
}

TEST(CudaNccl, OneRankSumsOnTheExchangeStream) {
  AMPC_SKIP_WITHOUT_GPU();
  SKIP_WITHOUT_NCCL();
  CudaDevice &device = *test::testDevice();
  const CudaApi &api = device.api();
  std::unique_ptr<NcclCommunicator> comm;
  Status s = oneRank(device, comm);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);

  // Large enough that a sum racing its input or its reader would show.
  // f32 (the gradients) and f64 (synchronised batch norm's statistics),
  // each into another buffer and in place. (In place, one rank's NCCL
  // copies nothing, so only the other buffer tests the ordering.)
  const size_t n = size_t(1) << 22;
  std::vector<float> f32(n);
  std::vector<double> f64(n);
  for (size_t i = 0; i < n; ++i) {
    f32[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f;
    f64[i] = static_cast<double>(i % 1000) * (1.0 / 3.0) - 100.0;
  }
  std::vector<unsigned char> back(n * sizeof(double));
  DeviceBuffer send, recv;
  ASSERT_TRUE(send.allocate(device, n * sizeof(double), "the test's send"));
  ASSERT_TRUE(recv.allocate(device, n * sizeof(double), "the test's recv"));
  CUstream compute = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(comm->createBucket(bucket));

  for (DType type : {DType::F32, DType::F64})
    for (bool inPlace : {false, true}) {
      const void *host = type == DType::F32
                             ? static_cast<const void *>(f32.data())
                             : f64.data();
      const size_t bytes = n * sizeOf(type);
      CUdeviceptr out = inPlace ? send.get() : recv.get();
      // Poison, then the values, both on the compute stream: the sum must
      // wait for the second copy.
      ASSERT_EQ(
          api.cuMemsetD32Async(send.get(), 0x7fc00000u, bytes / 4, compute),
          CUDA_SUCCESS);
      ASSERT_EQ(
          api.cuMemsetD32Async(recv.get(), 0x7fc00000u, bytes / 4, compute),
          CUDA_SUCCESS);
      ASSERT_EQ(api.cuMemcpyHtoDAsync(send.get(), host, bytes, compute),
                CUDA_SUCCESS);
      s = comm->startSum(*bucket, send.get(), out, n, type, compute);
      ASSERT_TRUE(s) << s.message();
      s = comm->finish(*bucket, compute);
      ASSERT_TRUE(s) << s.message();
      ASSERT_EQ(api.cuMemcpyDtoHAsync(back.data(), out, bytes, compute),
                CUDA_SUCCESS);
      ASSERT_EQ(api.cuStreamSynchronize(compute), CUDA_SUCCESS);
      s = comm->asyncError();
      ASSERT_TRUE(s) << s.message();
      EXPECT_EQ(std::memcmp(back.data(), host, bytes), 0)
          << name(type) << (inPlace ? ", in place" : ", into another buffer");
    }

  // NCCL would sum 16-bit values in their own precision: refused.
  s = comm->startSum(*bucket, send.get(), recv.get(), n, DType::F16, compute);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(),
            "an NCCL sum of f16 values: only f32 and f64 are summed");
  bucket.reset();
  comm.reset();
  EXPECT_EQ(api.cuStreamDestroy(compute), CUDA_SUCCESS);
}

// Every step from the second on replays a CUDA graph that captured its
// exchanges (CudaSession::captureAndLaunch): the events become the graph's
// edges to the exchange stream's work. The captured step copies its input
// into the send buffer, sums into another buffer and copies the sum out;
// replayed twice on other values, each replay must give its own. (One
// rank's NCCL sum is a copy, not NCCL's kernel, and in place it copies
// nothing: the edges and the replay are what this shows.) An exchange
// outside the graph afterwards records the events again, as a probed step
// does.
TEST(CudaNccl, ACapturedExchangeReplaysInAGraph) {
  AMPC_SKIP_WITHOUT_GPU();
  SKIP_WITHOUT_NCCL();
  CudaDevice &device = *test::testDevice();
  const CudaApi &api = device.api();
  std::unique_ptr<NcclCommunicator> comm;
  Status s = oneRank(device, comm);
  ASSERT_TRUE(s) << s.message();
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(comm->createBucket(bucket));

  const size_t n = size_t(1) << 22;
  const size_t bytes = n * sizeof(float);
  DeviceBuffer input, send, recv, output;
  for (DeviceBuffer *b : {&input, &send, &recv, &output})
    ASSERT_TRUE(b->allocate(device, bytes, "the test's buffer"));
  // Whatever fails below, the graph goes before the communicator, which
  // would wait for it (the header), and the stream with it.
  struct GraphFirst {
    const CudaApi &api;
    CUgraph graph = nullptr;
    CUgraphExec exec = nullptr;
    CUstream stream = nullptr;
    ~GraphFirst() {
      // A failed assertion may leave work queued on the buffers, which go
      // before the communicator.
      if (stream)
        api.cuStreamSynchronize(stream);
      if (exec)
        api.cuGraphExecDestroy(exec);
      if (graph)
        api.cuGraphDestroy(graph);
      if (stream)
        api.cuStreamDestroy(stream);
    }
  } owned{api};
  ASSERT_EQ(api.cuStreamCreate(&owned.stream, CU_STREAM_NON_BLOCKING),
            CUDA_SUCCESS);
  CUstream compute = owned.stream;

  // The capture is ended whatever fails in it, so the stream leaves
  // capture mode before the assertions.
  ASSERT_EQ(
      api.cuStreamBeginCapture(compute, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
      CUDA_SUCCESS);
  CUresult copyIn =
      api.cuMemcpyDtoDAsync(send.get(), input.get(), bytes, compute);
  Status started =
      comm->startSum(*bucket, send.get(), recv.get(), n, DType::F32, compute);
  Status finished = started ? comm->finish(*bucket, compute) : started;
  CUresult copyOut =
      api.cuMemcpyDtoDAsync(output.get(), recv.get(), bytes, compute);
  CUresult ended = api.cuStreamEndCapture(compute, &owned.graph);
  ASSERT_EQ(copyIn, CUDA_SUCCESS);
  ASSERT_TRUE(started) << started.message();
  ASSERT_TRUE(finished) << finished.message();
  ASSERT_EQ(copyOut, CUDA_SUCCESS);
  ASSERT_EQ(ended, CUDA_SUCCESS);
  ASSERT_EQ(api.cuGraphInstantiate(&owned.exec, owned.graph, 0), CUDA_SUCCESS);

  std::vector<float> values(n), back(n);
  for (int replay = 0; replay < 2; ++replay) {
    for (size_t i = 0; i < n; ++i)
      values[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f + 7.0f * replay;
    // On the stream, in its order (the copy of the previous replay's back
    // has ended: values may change).
    ASSERT_EQ(api.cuMemcpyHtoDAsync(input.get(), values.data(), bytes, compute),
              CUDA_SUCCESS);
    // NaN everywhere the graph writes: a node that did not run shows.
    for (CUdeviceptr p : {send.get(), recv.get(), output.get()})
      ASSERT_EQ(api.cuMemsetD32Async(p, 0x7fc00000u, n, compute), CUDA_SUCCESS);
    ASSERT_EQ(api.cuGraphLaunch(owned.exec, compute), CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemcpyDtoHAsync(back.data(), output.get(), bytes, compute),
              CUDA_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(compute), CUDA_SUCCESS);
    s = comm->asyncError();
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(std::memcmp(back.data(), values.data(), bytes), 0)
        << "replay " << replay;
  }

  // Eager again: the send buffer still holds the last replay's values.
  ASSERT_EQ(api.cuMemsetD32Async(recv.get(), 0x7fc00000u, n, compute),
            CUDA_SUCCESS);
  s = comm->startSum(*bucket, send.get(), recv.get(), n, DType::F32, compute);
  ASSERT_TRUE(s) << s.message();
  s = comm->finish(*bucket, compute);
  ASSERT_TRUE(s) << s.message();
  ASSERT_EQ(api.cuMemcpyDtoHAsync(back.data(), recv.get(), bytes, compute),
            CUDA_SUCCESS);
  ASSERT_EQ(api.cuStreamSynchronize(compute), CUDA_SUCCESS);
  EXPECT_EQ(std::memcmp(back.data(), values.data(), bytes), 0)
      << "an exchange after the graph's";

  EXPECT_EQ(api.cuGraphExecDestroy(owned.exec), CUDA_SUCCESS);
  EXPECT_EQ(api.cuGraphDestroy(owned.graph), CUDA_SUCCESS);
  EXPECT_EQ(api.cuStreamDestroy(owned.stream), CUDA_SUCCESS);
  owned.exec = nullptr;
  owned.graph = nullptr;
  owned.stream = nullptr;
}

TEST(CudaNccl, RankOutsideTheCommunicatorIsRefused) {
  AMPC_SKIP_WITHOUT_GPU();
  SKIP_WITHOUT_NCCL();
  ncclUniqueId id;
  ASSERT_TRUE(NcclCommunicator::uniqueId(id));
  std::unique_ptr<NcclCommunicator> comm;
  Status s = NcclCommunicator::create(*test::testDevice(), 1, 1, id, comm);
  ASSERT_FALSE(s);
  EXPECT_EQ(s.message(), "NCCL rank 1 of 1 is out of range");
  EXPECT_EQ(comm, nullptr);
}

// Synchronised batch norm in one process (no communicator) says how to
// start it, as the gradient exchange does; both kernels of the pair.
TEST(CudaNccl, SyncedBatchNormInOneProcessSaysHowToStart) {
  AMPC_SKIP_WITHOUT_GPU();
  const Shape s{4, 3, 5, 5};
  auto params = [](uint64_t seed) {
    return HostTensor::random(DType::F32, {3}, seed, 0.5, 1.5);
  };
  OpCase forward;
  forward.op = "batch_norm_training";
  forward.attrs.setFloat("epsilon", 1e-5);
  forward.attrs.setFloat("momentum", 0.9);
  forward.attrs.setInt("sync_ranks", 2);
  forward.inputs = {HostTensor::random(DType::F32, s, 1), params(2), params(3),
                    params(4), params(5)};
  forward.outputs = {HostTensor::empty(DType::F32, s)};
  for (int i = 0; i < 4; ++i)
    forward.outputs.push_back(HostTensor::empty(DType::F32, {3}));
  OpCase backward;
  backward.op = "batch_norm_grad";
  backward.attrs.setInt("sync_ranks", 2);
  backward.inputs = {HostTensor::random(DType::F32, s, 6),
                     HostTensor::random(DType::F32, s, 7), params(8), params(9),
                     params(10)};
  backward.outputs = {HostTensor::empty(DType::F32, s),
                      HostTensor::empty(DType::F32, {3}),
                      HostTensor::empty(DType::F32, {3})};
  for (const OpCase *c : {&forward, &backward}) {
    std::vector<std::vector<HostTensor>> out;
    Status st = test::runCuda(*test::testDevice(), {*c}, out);
    ASSERT_FALSE(st) << c->op;
    EXPECT_NE(st.message().find("batch norm takes its statistics over 2 ranks "
                                "(data parallelism), but it runs in one "
                                "process: start it with --nproc 2"),
              std::string::npos)
        << st.message();
  }
}

} // namespace
} // namespace ampc::rt::cuda
