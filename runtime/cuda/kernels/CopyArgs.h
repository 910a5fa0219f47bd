//===- CopyArgs.h - the arguments of the strided copy kernels -------------===//
//
// Shared by the host (runtime/cuda/Movement.cpp fills them at prepare time)
// and the device (kernels/Movement.cu), so both lay them out alike. Plain
// C++.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_COPYARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_COPYARGS_H

#include <stdint.h>

namespace ampc_cuda {

constexpr int kMaxCopyRank = 8;

// dst[dstOffset + sum_d i_d * dst[d]] = src[srcOffset + sum_d i_d * src[d]]
// over the row-major index space `dims`, in elements of the kernel's width
// (strides may be 0 or negative).
struct StridedCopyArgs {
  int64_t dims[kMaxCopyRank];
  int64_t src[kMaxCopyRank];
  int64_t dst[kMaxCopyRank];
  int64_t srcOffset, dstOffset, total;
  int rank;
};

// out[o..., p, q] = in[base(o) + p + q * srcQ]: the last two output dims
// are P (source stride 1) and Q; the output is contiguous.
struct TileArgs {
  int64_t outerDims[kMaxCopyRank];
  int64_t outerSrc[kMaxCopyRank];
  int64_t P, Q, srcQ, srcOffset, outer;
  int outerRank;
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_COPYARGS_H
