//===- Ranks.h - amp-run as one rank of a data-parallel run -----*- C++ -*-===//
//
// `amp-run --nproc N ...` starts `mpirun -n N amp-run ...` in its place;
// under mpirun each process joins the launch's world (runtime/mpi) and
// trains as one rank. See docs/data-parallel.md.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_RANKS_H
#define AMPC_TOOLS_AMPRUN_RANKS_H

#include "runtime/mpi/MpiCollective.h"
#include "runtime/tooling/RunFlags.h"

#include <memory>

namespace ampc::tools {

/// Replaces this process by mpirun starting `nproc` copies of the same
/// command without --nproc. Returns only when it cannot (the exit code,
/// after the error).
int startRanks(int argc, char **argv, int64_t nproc);

/// The launch's world when this process was started by mpirun (null
/// otherwise): MPI is initialised, and a world of one rank is no data
/// parallelism. `run` is checked against it (--nproc).
rt::Status joinRanks(const RunOptions &run,
                     std::shared_ptr<rt::mpi::MpiCollective> &out);

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_RANKS_H
