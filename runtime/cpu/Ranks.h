//===- Ranks.h - the ranks a CPU kernel exchanges data with -----*- C++ -*-===//
//
// The kernels of a data-parallel step that talk to the other ranks
// (all_reduce_start/wait, synchronised batch norm) were compiled for a
// number of ranks, which must be the session's (SessionOptions::
// collective).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_RANKS_H
#define AMPC_RUNTIME_CPU_RANKS_H

#include "runtime/Collective.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/ops/Ranks.h"

namespace ampc::rt::cpu {

/// The ranks the session runs on, as ops::worldSizeOf and syncRanksOf
/// take them: its collective's, 0 in one process.
inline int64_t sessionRanks(const CpuContext &ctx) {
  return ctx.collective ? ctx.collective->size() : 0;
}

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_RANKS_H
