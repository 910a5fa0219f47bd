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

/// ops::ranksOf against the session's collective's ranks.
inline Status ranksOf(const OpCall &call, const CpuContext &ctx,
                      const char *attr, bool required, const char *what,
                      int64_t &ranks) {
  return ops::ranksOf(call, attr, required, what,
                      ctx.collective ? ctx.collective->size() : 0, ranks);
}

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_RANKS_H
