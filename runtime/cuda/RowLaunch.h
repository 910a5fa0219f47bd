//===- RowLaunch.h - choosing a row kernel (Softmax.cu, LayerNorm.cu) -----===//
//
// Rows of up to 1024 contiguous elements run one per warp with K elements
// per lane (K a power of two, ampc_*_warp_<dtype>_k<K>); longer rows one
// per 512-thread block (ampc_*_block_<dtype>). 16-byte accesses need the
// row length a multiple of 16 / element size and every base pointer
// 16-byte aligned.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_ROWLAUNCH_H
#define AMPC_RUNTIME_CUDA_ROWLAUNCH_H

#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"

#include <initializer_list>
#include <string>

namespace ampc::rt::cuda::rows {

constexpr int64_t kMaxWarpRow = 1024;
constexpr unsigned kWarpBlockThreads = 128; // 4 rows per block
constexpr unsigned kBlockThreads = 512;

// The row kernels take f32, f16 and bf16 (AMPC_VARIANTS_ROW).
inline Status checkDType(const std::string &op, const char *what, DType t) {
  if (t == DType::F32 || t == DType::F16 || t == DType::BF16)
    return Status::ok();
  return Status::error(op + ": the CUDA backend takes " + what +
                       " of f32, f16 or bf16, got " + std::string(name(t)));
}

// Elements per lane for a warp row of `len` (<= kMaxWarpRow).
inline int warpK(int64_t len) {
  int k = 1;
  while (int64_t(k) * 32 < len)
    k *= 2;
  return k;
}

inline bool canVectorize(int64_t len, DType t,
                         std::initializer_list<const void *> ptrs, int k = 32) {
  int64_t v = 16 / int64_t(sizeOf(t));
  if (len % v != 0 || k < v)
    return false;
  for (const void *p : ptrs)
    if (reinterpret_cast<uintptr_t>(p) % 16 != 0)
      return false;
  return true;
}

// The kernel, its name and launch shape for `rows` rows of `len`: `warp`
// (K elements per lane) for rows that fit a warp, else `block`.
inline Status choose(CudaDevice &device, CudaKernel warp, CudaKernel block,
                     DType t, int64_t rows, int64_t len,
                     std::initializer_list<const void *> ptrs, CUfunction &fn,
                     std::string &name, LaunchDims &dims, int &vec) {
  const int64_t sms = std::max(1, device.multiprocessors());
  if (len <= kMaxWarpRow) {
    int k = warpK(len);
    vec = canVectorize(len, t, ptrs, k);
    dims.block[0] = kWarpBlockThreads;
    int64_t blocks = (rows + 3) / 4;
    dims.grid[0] = unsigned(std::max<int64_t>(1, std::min(blocks, sms * 16)));
    return kernelFunction(device, warp, {rt::name(t), "k" + std::to_string(k)},
                          fn, &name);
  }
  vec = canVectorize(len, t, ptrs);
  dims.block[0] = kBlockThreads;
  dims.grid[0] = unsigned(std::max<int64_t>(1, std::min(rows, sms * 4)));
  return kernelFunction(device, block, {rt::name(t)}, fn, &name);
}

} // namespace ampc::rt::cuda::rows

#endif // AMPC_RUNTIME_CUDA_ROWLAUNCH_H
