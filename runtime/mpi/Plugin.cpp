//===- Plugin.cpp - MpiCollective as a library loaded at run time ---------===//
//
// libampc-mpi.so: the tools join an mpirun launch through it (dlopen, see
// runtime/tooling/Ranks.h), so that neither links MPI: amp-exec stays
// portable to machines without OpenMPI, and needs it only when mpirun
// started it.
//
//===----------------------------------------------------------------------===//

#include "runtime/mpi/MpiCollective.h"

using ampc::rt::Status;
using ampc::rt::mpi::MpiCollective;

/// Joins the launch's world (MpiCollective::create); on failure returns
/// null with the error in `*error`.
extern "C" __attribute__((visibility("default"))) MpiCollective *
ampcJoinMpi(double timeoutSeconds, const char *tool, std::string *error) {
  std::unique_ptr<MpiCollective> world;
  if (Status s = MpiCollective::create(timeoutSeconds, tool, world); !s) {
    *error = s.message();
    return nullptr;
  }
  return world.release();
}
