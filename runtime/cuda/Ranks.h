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

/// The ranks the session runs on, as ops::worldSizeOf and syncRanksOf
/// take them: its NCCL communicator's, 0 in one process.
inline int64_t sessionRanks(const PrepareContext &ctx) {
  return ctx.nccl ? ctx.nccl->size() : 0;
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_RANKS_H
