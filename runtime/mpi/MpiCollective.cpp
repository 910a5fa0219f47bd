//===- MpiCollective.cpp - the processes of an mpirun launch --------------===//

#include "runtime/mpi/MpiCollective.h"

#include <mpi.h>

#include <chrono>
#include <climits>
#include <cstdlib>
#include <string>
#include <thread>

namespace ampc::rt::mpi {
namespace {

std::string mpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, length);
}

/// Completes `request`, polling until `timeout` seconds have passed; `what`
/// names the wait in the error.
Status waitFor(MPI_Request &request, double timeout, const char *what) {
  using Clock = std::chrono::steady_clock;
  auto deadline = Clock::now() + std::chrono::duration<double>(timeout);
  int done = 0;
  // Spins briefly (a loopback all-reduce takes microseconds), then yields
  // the core, which another rank of the same machine may need to arrive.
  for (int polls = 0;; ++polls) {
    if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
        rc != MPI_SUCCESS)
      return Status::error(std::string(what) + ": " + mpiError(rc));
    if (done)
      return Status::ok();
    if (Clock::now() > deadline)
      return Status::error(
          std::string(what) + " waited " +
          std::to_string(static_cast<int>(timeout)) +
          " s for the other ranks (one died or hangs; --collective-timeout)");
    if (polls > 1000)
      std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
}

} // namespace

bool launchedByMpi() {
  // OpenMPI's, PMIx's and MPICH's (Hydra's PMI) launchers each set one.
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v))
      return true;
  return false;
}

Status MpiCollective::create(double timeoutSeconds,
                             std::unique_ptr<MpiCollective> &out) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized) {
    int provided = 0;
    if (int rc =
            MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
        rc != MPI_SUCCESS)
      return Status::error("MPI_Init: " + mpiError(rc));
  }
  // Errors come back as codes, to be reported with the rank, not as
  // MPI's own abort.
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  out.reset(new MpiCollective(rank, size, timeoutSeconds));
  return Status::ok();
}

MpiCollective::~MpiCollective() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized)
    MPI_Finalize();
}

Status MpiCollective::allReduceSum(float *data, size_t count) {
  if (count > static_cast<size_t>(INT_MAX))
    return Status::error("an all-reduce of " + std::to_string(count) +
                         " values, over MPI's 2^31 - 1 per call");
  auto start = std::chrono::steady_clock::now();
  MPI_Request request;
  if (int rc = MPI_Iallreduce(MPI_IN_PLACE, data, static_cast<int>(count),
                              MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &request);
      rc != MPI_SUCCESS)
    return Status::error("the gradient all-reduce: " + mpiError(rc));
  Status s = waitFor(request, timeout_, "the gradient all-reduce");
  allReduceSeconds_ +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return s;
}

Status MpiCollective::waitForAll(double timeoutSeconds) {
  MPI_Request request;
  if (int rc = MPI_Ibarrier(MPI_COMM_WORLD, &request); rc != MPI_SUCCESS)
    return Status::error("waiting for rank 0: " + mpiError(rc));
  return waitFor(request, timeoutSeconds, "waiting for rank 0");
}

Status MpiCollective::allReduceMax(double &value) {
  MPI_Request request;
  if (int rc = MPI_Iallreduce(MPI_IN_PLACE, &value, 1, MPI_DOUBLE, MPI_MAX,
                              MPI_COMM_WORLD, &request);
      rc != MPI_SUCCESS)
    return Status::error("an all-reduce: " + mpiError(rc));
  return waitFor(request, timeout_, "an all-reduce");
}

void MpiCollective::abortAll(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

} // namespace ampc::rt::mpi
