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

#include "runtime/cpu/CpuKernels.h"

namespace ampc::rt::cpu {

/// Reads the rank count attribute `attr` of `call` into `ranks` (1 when an
/// optional attribute is absent) and, above 1, checks the session has that
/// many ranks. `what` says what the ranks are for, as "<what> N ranks".
Status ranksOf(const OpCall &call, const CpuContext &ctx, const char *attr,
               bool required, const char *what, int64_t &ranks);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_RANKS_H
