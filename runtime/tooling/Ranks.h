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
#include <optional>

namespace ampc::tools {

/// Whether this process was started by mpirun (or another MPI launcher).
bool launchedByMpi();

/// This process's rank, from the launcher's environment, when a launch
/// started it among several (OMPI_COMM_WORLD_RANK or PMI_RANK, with the
/// size beside it): known before MPI is joined, so that the errors before
/// it say whose they are too, as a rank on a machine that lacks the data.
std::optional<int> launchRank();

/// The most ranks --nproc starts per hardware thread of this machine. A
/// rank is a process with its own copy of the model and a thread at least;
/// past a few per thread they only slow each other down, and a mistyped
/// count (--nproc 100000) would fill the machine with processes.
constexpr int64_t kRanksPerThread = 4;

/// Whether --nproc may start `nproc` ranks on a machine of
/// `hardwareThreads` threads (0: unknown, taken as 1); the error says the
/// limit.
rt::Status checkLocalRanks(int64_t nproc, unsigned hardwareThreads);

/// Replaces this process by mpirun starting `nproc` copies of the same
/// command without --nproc (checkLocalRanks first). Returns only when it
/// cannot, saying why.
rt::Status startRanks(int argc, char **argv, int64_t nproc);

/// The launch's world when this process was started by mpirun (null
/// otherwise): libampc-mpi.so is loaded and MPI initialised, and a world
/// of one rank is no data parallelism. `tool` names the process in the
/// errors MPI_Init's watchdog prints; `run` is checked against the world
/// (--nproc). `pluginDir`: the folder of libampc-mpi.so, where it is not
/// the tools' (the Python module keeps a copy beside itself).
rt::Status joinRanks(const RunOptions &run, const std::string &tool,
                     std::shared_ptr<rt::mpi::MpiCollective> &out,
                     const std::string &pluginDir = "");

/// A tool's end under a launch: a rank that stops with an error (`rc`)
/// ends the others now, since they would wait in their next all-reduce
/// until --collective-timeout (mpirun ends the job when a rank dies of a
/// signal, not when it returns non-zero). A run that SIGINT or SIGTERM
/// stopped stops every rank after the same step, each on its own. Then
/// MPI is finalised (`world` released); returns `rc`.
int endRanks(std::shared_ptr<rt::mpi::MpiCollective> &world, int rc);

/// This rank's device, from the launcher's environment (decided before
/// any device is opened): under mpirun with several ranks, `cuda` (no GPU
/// named) is GPU <local rank>, as the launcher numbers the ranks of each
/// machine (OMPI_COMM_WORLD_LOCAL_RANK, MPI_LOCALRANKID, SLURM_LOCALID):
/// one GPU per rank, as NCCL needs. A device named in full, a launcher
/// that gave the rank one GPU of its own (CUDA_VISIBLE_DEVICES listing
/// one) or names no local rank: the device as given.
std::string rankDevice(const std::string &device);

/// `s`, the error of opening `chosen` (rankDevice's choice for `given`),
/// saying where the device came from when the launch chose a GPU that does
/// not exist: each rank takes its own GPU, so a machine with fewer GPUs
/// than ranks fails there.
rt::Status rankDeviceError(rt::Status s, const std::string &given,
                           const std::string &chosen);

/// --threads counts one process's cores: without it, each of `ranks`
/// ranks on this machine takes its share of the hardware threads.
void shareCores(RunOptions &run, int64_t ranks);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_RANKS_H
