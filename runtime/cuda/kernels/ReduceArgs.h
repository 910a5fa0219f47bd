//===- ReduceArgs.h - the argument of the reduction kernels ---------------===//
//
// Shared by the host (runtime/cuda/Reduction.cpp fills it at prepare time)
// and the device (kernels/Reduction.cu), so both lay it out alike. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_REDUCEARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_REDUCEARGS_H

#include <stdint.h>

namespace ampc_cuda {

constexpr int kMaxReduceRank = 8;

struct ReduceArgs {
  // Output index o -> input offset of its first element (row-major over
  // the kept dims).
  int64_t keptDims[kMaxReduceRank], keptStrides[kMaxReduceRank];
  // Reduced index q -> offset (row-major over the reduced dims; for the
  // row kernel these exclude the contiguous last dim of length `len`).
  int64_t redDims[kMaxReduceRank], redStrides[kMaxReduceRank];
  int64_t len;    // row kernel: contiguous elements per reduced row; else 1
  int64_t count;  // elements reduced into each output
  int64_t outN;   // outputs
  int64_t splits; // chunks per output (1: no second pass)
  int64_t chunk;  // elements per chunk
  int keptRank, redRank;
  int kind; // a ReduceKind
};

enum ReduceKind { kSum = 0, kMean = 1, kMax = 2 };

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_REDUCEARGS_H
