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

/// Reads the rank count attribute `attr` of `call` into `ranks` (1 when an
/// optional attribute is absent) and, above 1, checks that the session
/// runs on that many: `sessionRanks`, 0 when it runs in one process. `what`
/// says what the ranks are for, as "<what> N ranks".
Status ranksOf(const OpCall &call, const char *attr, bool required,
               const char *what, int64_t sessionRanks, int64_t &ranks);

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_RANKS_H
