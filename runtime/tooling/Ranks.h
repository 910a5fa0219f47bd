//===- Ranks.h - a tool as one rank of a data-parallel run ------*- C++ -*-===//
//
// `--nproc N` makes a tool start `mpirun -n N TOOL ...` in its place; under
// mpirun each process joins the launch's world through libampc-mpi.so,
// loaded here at run time (runtime/mpi/Plugin.cpp), and trains as one rank.
// amp-run and amp-exec share this. See docs/data-parallel.md.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_RANKS_H
#define AMPC_RUNTIME_TOOLING_RANKS_H

#include "runtime/mpi/MpiCollective.h"
#include "runtime/tooling/RunFlags.h"

#include <memory>

namespace ampc::tools {

/// Whether this process was started by mpirun (or another MPI launcher).
bool launchedByMpi();

/// Replaces this process by mpirun starting `nproc` copies of the same
/// command without --nproc. Returns only when it cannot, saying why.
rt::Status startRanks(int argc, char **argv, int64_t nproc);

/// The launch's world when this process was started by mpirun (null
/// otherwise): libampc-mpi.so is loaded and MPI initialised, and a world
/// of one rank is no data parallelism. `tool` names the process in the
/// errors MPI_Init's watchdog prints; `run` is checked against the world
/// (--nproc).
rt::Status joinRanks(const RunOptions &run, const std::string &tool,
                     std::shared_ptr<rt::mpi::MpiCollective> &out);

/// A rank's GPU: with several ranks (`so.collective`), `--device cuda`,
/// which names no GPU, becomes GPU <local rank> (as mpirun numbers the
/// ranks of each machine, OMPI_COMM_WORLD_LOCAL_RANK), one GPU per rank,
/// as NCCL needs; a device named in full stays as it is.
void placeRank(rt::SessionOptions &so);

/// --threads counts one process's cores: without it, each of `ranks`
/// ranks on this machine takes its share of the hardware threads.
void shareCores(RunOptions &run, int64_t ranks);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_RANKS_H
