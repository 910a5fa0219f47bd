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

TEST(CudaNccl, OneRankSumsOnTheExchangeStream) {
  AMPC_SKIP_WITHOUT_GPU();
  SKIP_WITHOUT_NCCL();
  CudaDevice &device = *test::testDevice();
  const CudaApi &api = device.api();
  ASSERT_TRUE(device.makeCurrent());
  ncclUniqueId id;
  Status s = NcclCommunicator::uniqueId(id);
  ASSERT_TRUE(s) << s.message();
  std::unique_ptr<NcclCommunicator> comm;
  s = NcclCommunicator::create(device, 0, 1, id, comm);
  ASSERT_TRUE(s) << s.message();
  EXPECT_EQ(comm->rank(), 0);
  EXPECT_EQ(comm->size(), 1);

  // Large enough that a sum racing its input or its reader would show.
  const size_t n = size_t(1) << 22;
  std::vector<float> host(n), back(n);
  for (size_t i = 0; i < n; ++i)
    host[i] = static_cast<float>(i % 1000) * 0.25f - 100.0f;
  DeviceBuffer send, recv;
  ASSERT_TRUE(send.allocate(device, n * sizeof(float), "the test's send"));
  ASSERT_TRUE(recv.allocate(device, n * sizeof(float), "the test's recv"));
  CUstream compute = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&compute, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  std::unique_ptr<NcclCommunicator::Bucket> bucket;
  ASSERT_TRUE(comm->createBucket(bucket));

  for (bool inPlace : {false, true}) {
    CUdeviceptr out = inPlace ? send.get() : recv.get();
    // Poison, then the values, both on the compute stream: the sum must
    // wait for the second copy.
    ASSERT_EQ(api.cuMemsetD32Async(send.get(), 0x7fc00000u, n, compute),
              CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemsetD32Async(recv.get(), 0x7fc00000u, n, compute),
              CUDA_SUCCESS);
    ASSERT_EQ(api.cuMemcpyHtoDAsync(send.get(), host.data(), n * sizeof(float),
                                    compute),
              CUDA_SUCCESS);
    s = comm->startSum(*bucket, send.get(), out, n, compute);
    ASSERT_TRUE(s) << s.message();
    s = comm->finish(*bucket, compute);
    ASSERT_TRUE(s) << s.message();
    ASSERT_EQ(
        api.cuMemcpyDtoHAsync(back.data(), out, n * sizeof(float), compute),
        CUDA_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(compute), CUDA_SUCCESS);
    s = comm->asyncError();
    ASSERT_TRUE(s) << s.message();
    EXPECT_EQ(std::memcmp(back.data(), host.data(), n * sizeof(float)), 0)
        << (inPlace ? "in place" : "into another buffer");
  }
  bucket.reset();
  comm.reset();
  EXPECT_EQ(api.cuStreamDestroy(compute), CUDA_SUCCESS);
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

} // namespace
} // namespace ampc::rt::cuda
