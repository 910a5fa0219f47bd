//===- Launch.h - launching our own kernels -------------------------------===//
//
// Kernels in kernels/*.cu are extern "C" and take plain arguments; the host
// side finds them by name once (prepare) and launches them with
// cuLaunchKernel (launch). Elementwise kernels use a grid-stride loop, so
// the grid is capped and any element count runs.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_LAUNCH_H
#define AMPC_RUNTIME_CUDA_LAUNCH_H

#include "runtime/cuda/CudaKernels.h"

#include <algorithm>
#include <cstdint>

namespace ampc::rt::cuda {

struct LaunchDims {
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {256, 1, 1};
  unsigned sharedBytes = 0;
};

// Blocks of `threads` for `work` items, each thread taking `perThread`
// items per pass, capped at `maxBlocksPerSm` per SM (grid-stride loops
// cover the rest).
inline LaunchDims gridFor(const CudaDevice &device, int64_t work,
                          unsigned threads = 256, unsigned perThread = 1,
                          unsigned maxBlocksPerSm = 8) {
  LaunchDims d;
  d.block[0] = threads;
  int64_t perBlock = int64_t(threads) * perThread;
  int64_t blocks = std::max<int64_t>(1, (work + perBlock - 1) / perBlock);
  int64_t cap = int64_t(std::max(1, device.multiprocessors())) * maxBlocksPerSm;
  d.grid[0] = static_cast<unsigned>(std::min(blocks, cap));
  return d;
}

// `args` holds a pointer to each kernel argument, in order. `what` names
// the kernel in the error.
inline Status launchKernel(const LaunchContext &ctx, CUfunction fn,
                           const LaunchDims &d, void **args, const char *what) {
  CUresult r = ctx.device.api().cuLaunchKernel(
      fn, d.grid[0], d.grid[1], d.grid[2], d.block[0], d.block[1], d.block[2],
      d.sharedBytes, ctx.stream, args, nullptr);
  if (r != CUDA_SUCCESS)
    return cuError(ctx.device.api(), r,
                   (std::string("cuLaunchKernel(") + what + ")").c_str());
  return Status::ok();
}

// `n` rounded up to a multiple of `a`: pieces of a shared workspace start
// 256-byte aligned, which every access width and cuBLASLt/cuDNN accept.
inline size_t alignUp(size_t n, size_t a = 256) { return (n + a - 1) / a * a; }

// A device address as a kernel argument.
inline CUdeviceptr devicePtr(const TensorView &t) {
  return reinterpret_cast<CUdeviceptr>(t.data);
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_LAUNCH_H
