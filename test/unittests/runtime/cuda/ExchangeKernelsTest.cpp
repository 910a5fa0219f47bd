//===- ExchangeKernelsTest.cpp - a bucket's kernels around NCCL's sum -----===//
//
// all_reduce_start and all_reduce_wait need a communicator of their
// world_size (two GPUs at least), which the GPU machines do not have; the
// kernels they launch around NCCL's sum (kernels/Collectives.cu) need only
// one GPU, and are checked here against the CPU backend's arithmetic
// (runtime/cpu/Collectives.cpp): the widening into the f32 buffer is exact,
// a mean is sum * (1/N) in f32 rounded once into the gradient's type, and a
// step whose skip flag is set gives each rank's own gradient back bit for
// bit, from an f32 or a 16-bit exchange buffer. Skipped without a GPU.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"
#include "runtime/Half.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"

#include <cstring>
#include <vector>

namespace ampc::rt::cuda {
namespace {
using test::HostTensor;

// `v` rounded to `t` (f32, f16, bf16), as its bits.
uint32_t roundedBits(DType t, float v) {
  if (t == DType::F16)
    return floatToHalfBits(v);
  if (t == DType::BF16)
    return floatToBFloatBits(v);
  return bitsOf(v);
}

// Element i of `bytes` holding `t` values, as its bits.
uint32_t bitsAt(DType t, const std::vector<uint8_t> &bytes, int64_t i) {
  if (t == DType::F32) {
    uint32_t u;
    std::memcpy(&u, bytes.data() + 4 * i, 4);
    return u;
  }
  uint16_t h;
  std::memcpy(&h, bytes.data() + 2 * i, 2);
  return h;
}

TEST(CudaExchange, WidenThenMeanRoundsOnceAndSkipKeepsTheGradient) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice &device = *test::testDevice();
  const CudaApi &api = device.api();
  ASSERT_TRUE(device.makeCurrent());
  CUstream stream = nullptr;
  ASSERT_EQ(api.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS);
  LaunchContext ctx{device, stream};
  // Odd, and more than one grid-stride pass of a small grid.
  int64_t n = 100003;
  uint64_t seed = 77;
  for (DType t : {DType::F32, DType::F16, DType::BF16}) {
    SCOPED_TRACE(std::string(name(t)));
    const size_t bytes = n * sizeOf(t);
    // This rank's gradient, and another rank's, each in the gradient type
    // (f16's largest is 65504: their mean stays finite).
    const double range = t == DType::F16 ? 60000 : 70000;
    HostTensor mine = HostTensor::random(t, {n}, seed += 2, -range, range);
    HostTensor other = HostTensor::random(t, {n}, seed + 1, -range, range);
    DeviceBuffer grad, wide, sum, out, flag;
    ASSERT_TRUE(grad.upload(device, mine.bytes.data(), bytes, "the gradient"));
    ASSERT_TRUE(wide.allocate(device, n * 4, "the f32 exchange buffer"));
    ASSERT_TRUE(out.allocate(device, bytes, "the mean"));
    ASSERT_TRUE(flag.allocate(device, 1, "the skip flag"));

    CUfunction widen = nullptr, finish = nullptr;
    ASSERT_TRUE(
        kernelFunction(device, CudaKernel::ExchangeWiden, {name(t)}, widen));
    ASSERT_TRUE(
        kernelFunction(device, CudaKernel::ExchangeFinish, {name(t)}, finish));
    CUdeviceptr g = grad.get(), w = wide.get();
    void *widenArgs[] = {&g, &w, &n};
    ASSERT_TRUE(launchKernel(ctx, widen, gridFor(device, n, 256, 1, 1),
                             widenArgs, "widen"));
    std::vector<float> widened(n);
    ASSERT_EQ(api.cuMemcpyDtoHAsync(widened.data(), w, n * 4, stream),
              CUDA_SUCCESS);
    ASSERT_EQ(api.cuStreamSynchronize(stream), CUDA_SUCCESS);
    int bad = 0;
    for (int64_t i = 0; i < n && bad < 10; ++i)
      if (bitsOf(widened[i]) != bitsOf(static_cast<float>(mine.at(i)))) {
        ADD_FAILURE() << "widened " << i << ": " << widened[i] << " against "
                      << mine.at(i);
        ++bad;
      }

    // What NCCL's f32 sum over two ranks would hold.
    std::vector<float> sums(n);
    for (int64_t i = 0; i < n; ++i)
      sums[i] =
          static_cast<float>(mine.at(i)) + static_cast<float>(other.at(i));
    ASSERT_TRUE(sum.upload(device, sums.data(), n * 4, "the sums"));
    const float inverse = 0.5f;
    for (int skip : {-1, 0, 1}) { // -1: the step has no skip flag
      for (bool ownIsF32 : {true, false}) {
        SCOPED_TRACE("skip " + std::to_string(skip) +
                     (ownIsF32 ? ", f32 buffer" : ", 16-bit buffer"));
        uint8_t flagByte = skip > 0 ? 1 : 0;
        ASSERT_EQ(api.cuMemcpyHtoDAsync(flag.get(), &flagByte, 1, stream),
                  CUDA_SUCCESS);
        ASSERT_EQ(api.cuMemsetD8Async(out.get(), 0xff, bytes, stream),
                  CUDA_SUCCESS);
        CUdeviceptr s = sum.get(), own = ownIsF32 ? w : g, o = out.get();
        CUdeviceptr skipPtr = skip < 0 ? 0 : flag.get();
        int ownF32 = ownIsF32 ? 1 : 0;
        float inv = inverse;
        void *args[] = {&s, &own, &ownF32, &skipPtr, &inv, &o, &n};
        ASSERT_TRUE(launchKernel(ctx, finish, gridFor(device, n, 256, 1, 1),
                                 args, "finish"));
        std::vector<uint8_t> back(bytes);
        ASSERT_EQ(api.cuMemcpyDtoHAsync(back.data(), o, bytes, stream),
                  CUDA_SUCCESS);
        ASSERT_EQ(api.cuStreamSynchronize(stream), CUDA_SUCCESS);
        bad = 0;
        for (int64_t i = 0; i < n && bad < 10; ++i) {
          uint32_t want = skip > 0 ? bitsAt(t, mine.bytes, i)
                                   : roundedBits(t, sums[i] * inverse);
          if (bitsAt(t, back, i) != want) {
            ADD_FAILURE() << "element " << i << ": bits " << std::hex
                          << bitsAt(t, back, i) << " against " << want
                          << std::dec;
            ++bad;
          }
        }
      }
    }
  }
  EXPECT_EQ(api.cuStreamDestroy(stream), CUDA_SUCCESS);
}

} // namespace
} // namespace ampc::rt::cuda
