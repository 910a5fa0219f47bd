//===- Ranks.cpp - amp-run as one rank of a data-parallel run -------------===//

#include "tools/amp-run/Ranks.h"

#include "tools/amp-run/Fail.h"

#include "llvm/ADT/StringRef.h"

#include <cerrno>
#include <cstring>
#include <string>
#include <unistd.h>
#include <vector>

namespace ampc::tools {

int startRanks(int argc, char **argv, int64_t nproc) {
  std::vector<std::string> args = {"mpirun", "-n", std::to_string(nproc),
                                   // More ranks than cores is the user's
                                   // choice here, not mpirun's refusal.
                                   "--oversubscribe"};
  // OpenMPI refuses root unless told; the user asked for these ranks.
  if (::geteuid() == 0)
    args.push_back("--allow-run-as-root");
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  args.push_back(n > 0 ? std::string(self, static_cast<size_t>(n)) : argv[0]);
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef a(argv[i]);
    if (a == "--nproc" || a == "-nproc") {
      ++i; // and its value
      continue;
    }
    if (a.starts_with("--nproc=") || a.starts_with("-nproc="))
      continue;
    args.push_back(argv[i]);
  }
  std::vector<char *> cargs;
  for (std::string &a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  llvm::outs().flush();
  llvm::errs().flush();
  ::execvp("mpirun", cargs.data());
  return fail(std::string("--nproc: cannot start mpirun: ") +
              std::strerror(errno) +
              " (Debian's openmpi-bin provides it; scripts/setup.sh "
              "installs it)");
}

rt::Status joinRanks(const RunOptions &run,
                     std::shared_ptr<rt::mpi::MpiCollective> &out) {
  out.reset();
  if (!rt::mpi::launchedByMpi())
    return rt::Status::ok();
  std::unique_ptr<rt::mpi::MpiCollective> world;
  AMPC_RETURN_IF_ERROR(rt::mpi::MpiCollective::create(
      static_cast<double>(run.collectiveTimeout), "amp-run", world));
  if (run.isGiven("nproc") && run.nproc != world->size())
    return rt::Status::error("--nproc " + std::to_string(run.nproc) +
                             ", but mpirun started " +
                             std::to_string(world->size()) + " ranks");
  out = std::move(world);
  return rt::Status::ok();
}

} // namespace ampc::tools
