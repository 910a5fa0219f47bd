//===- Ranks.h - the ranks a CUDA kernel exchanges data with ----*- C++ -*-===//
//
// The kernels of a data-parallel step that talk to the other ranks
// (all_reduce_start/wait, synchronised batch norm) were compiled for a
// number of ranks, which must be the session's NCCL communicator's; the
// CPU backend's runtime/cpu/Ranks.h says the same of its MPI collective.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_RANKS_H
#define AMPC_RUNTIME_CUDA_RANKS_H

#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/NcclCommunicator.h"
#include "runtime/ops/Ranks.h"

namespace ampc::rt::cuda {

/// ops::ranksOf against the session's NCCL communicator's ranks.
inline Status ranksOf(const ops::OpCall &call, const PrepareContext &ctx,
                      const char *attr, bool required, const char *what,
                      int64_t &ranks) {
  return ops::ranksOf(call, attr, required, what,
                      ctx.nccl ? ctx.nccl->size() : 0, ranks);
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_RANKS_H
