//===- Ranks.h - the ranks a kernel call exchanges data with ----*- C++ -*-===//
//
// The kernels of a data-parallel step that talk to the other ranks
// (all_reduce_start/wait, synchronised batch norm) were compiled for a
// number of ranks, an attribute of the call, which must be the number the
// session runs on. Each backend asks its own exchange for that number
// (runtime/cpu/Ranks.h: MPI; runtime/cuda/Ranks.h: NCCL); the rule and its
// messages are here, once.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_RANKS_H
#define AMPC_RUNTIME_OPS_RANKS_H

#include "runtime/Status.h"
#include "runtime/ops/OpCall.h"

namespace ampc::rt::ops {

/// An exchange's `world_size` (all_reduce_start/wait: the ranks its
/// gradients are averaged over) into `ranks`, checked above 1 against the
/// ranks the session runs on: `sessionRanks`, 0 when it runs in one
/// process.
Status worldSizeOf(const OpCall &call, int64_t sessionRanks, int64_t &ranks);

/// A batch norm's `sync_ranks` (1 when absent: each rank's own statistics)
/// into `ranks`, checked as worldSizeOf checks its.
Status syncRanksOf(const OpCall &call, int64_t sessionRanks, int64_t &ranks);

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_RANKS_H
