//===- Ranks.cpp - a tool as one rank of a data-parallel run --------------===//

#include "runtime/tooling/Ranks.h"

#include "runtime/tooling/Signals.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace ampc::tools {
namespace {

/// This executable's path ("" when /proc cannot say).
std::string selfPath() {
  char self[4096];
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof(self) - 1);
  return n > 0 ? std::string(self, static_cast<size_t>(n)) : std::string();
}

/// This executable's directory ("" when /proc cannot say).
std::string selfDirectory() {
  std::string path = selfPath();
  return path.empty() ? path : path.substr(0, path.rfind('/'));
}

using JoinMpi = rt::mpi::MpiCollective *(*)(double, const char *,
                                            std::string *);

constexpr const char *kPlugin = "libampc-mpi.so";

/// libampc-mpi.so's join function: from $AMPC_MPI_PLUGIN, else in
/// `pluginDir` when one is given, else in the build's lib/ beside bin/, else
/// beside the executable.
rt::Status loadPlugin(const std::string &pluginDir, JoinMpi &join) {
  std::vector<std::string> tried;
  if (const char *given = std::getenv("AMPC_MPI_PLUGIN"); given && *given) {
    tried.push_back(given);
  } else if (!pluginDir.empty()) {
    tried.push_back(pluginDir + "/" + kPlugin);
  } else {
    std::string dir = selfDirectory();
    tried = {dir + "/../lib/" + kPlugin, dir + "/" + kPlugin};
  }
  std::string why;
  for (const std::string &path : tried) {
    // RTLD_GLOBAL: OpenMPI loads its own components, which look up
    // libmpi's symbols globally.
    void *lib = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (!lib) {
      why += "\n  " + path + ": " + ::dlerror();
      continue;
    }
    join = reinterpret_cast<JoinMpi>(::dlsym(lib, "ampcJoinMpi"));
    if (!join)
      return rt::Status::error(path + " has no ampcJoinMpi: it is not " +
                               kPlugin + " of this build");
    return rt::Status::ok();
  }
  return rt::Status::error(
      std::string("started by mpirun (data parallelism), but cannot load ") +
      kPlugin + ", which joins the ranks over MPI (built with the project; " +
      "it needs OpenMPI's libmpi, from Debian's libopenmpi-dev; " +
      "AMPC_MPI_PLUGIN names another path):" + why);
}

/// The launch's size from its environment (0: none or unknown).
int launchSize() {
  for (const char *var : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return 0;
}

} // namespace

bool launchedByMpi() {
  // OpenMPI's, PMIx's and MPICH's (Hydra's PMI) launchers each set one.
  for (const char *v : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE"})
    if (std::getenv(v))
      return true;
  return false;
}

std::optional<int> launchRank() {
  if (launchSize() < 2)
    return std::nullopt;
  for (const char *var : {"OMPI_COMM_WORLD_RANK", "PMI_RANK"})
    if (const char *v = std::getenv(var); v && *v)
      return std::atoi(v);
  return std::nullopt;
}

rt::Status checkLocalRanks(int64_t nproc, unsigned hardwareThreads) {
  int64_t threads = std::max(1u, hardwareThreads);
  int64_t limit = kRanksPerThread * threads;
  if (nproc <= limit)
    return rt::Status::ok();
  return rt::Status::error(
      "--nproc " + std::to_string(nproc) + " would start that many " +
      "processes on this machine, which has " + std::to_string(threads) +
      " hardware thread" + (threads == 1 ? "" : "s") + ": --nproc starts at " +
      "most " + std::to_string(limit) + " (" + std::to_string(kRanksPerThread) +
      " per thread); for ranks on " +
      "several machines, start the tool under mpirun -n N with a host list");
}

rt::Status startRanks(int argc, char **argv, int64_t nproc) {
  AMPC_RETURN_IF_ERROR(
      checkLocalRanks(nproc, std::thread::hardware_concurrency()));
  std::vector<std::string> args = {"mpirun", "-n", std::to_string(nproc),
                                   // More ranks than cores (up to
                                   // checkLocalRanks's limit) is the
                                   // user's choice, not mpirun's refusal.
                                   "--oversubscribe"};
  // OpenMPI refuses root unless told; the user asked for these ranks.
  if (::geteuid() == 0)
    args.push_back("--allow-run-as-root");
  std::string self = selfPath();
  args.push_back(self.empty() ? std::string(argv[0]) : self);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--nproc" || a == "-nproc") {
      ++i; // and its value
      continue;
    }
    if (a.rfind("--nproc=", 0) == 0 || a.rfind("-nproc=", 0) == 0)
      continue;
    args.push_back(a);
  }
  std::vector<char *> cargs;
  for (std::string &a : args)
    cargs.push_back(a.data());
  cargs.push_back(nullptr);
  std::fflush(stdout);
  std::fflush(stderr);
  ::execvp("mpirun", cargs.data());
  return rt::Status::error(std::string("--nproc: cannot start mpirun: ") +
                           std::strerror(errno) +
                           " (Debian's openmpi-bin provides it; "
                           "scripts/setup.sh installs it)");
}

int endRanks(std::shared_ptr<rt::mpi::MpiCollective> &world, int rc) {
  if (rc != 0 && !isSignalExit(rc) && world && world->size() > 1)
    world->abortAll(rc);
  world.reset(); // MPI_Finalize, on every rank at the end of its run
  return rc;
}

rt::Status joinRanks(const RunOptions &run, const std::string &tool,
                     std::shared_ptr<rt::mpi::MpiCollective> &out,
                     const std::string &pluginDir) {
  out.reset();
  if (!launchedByMpi())
    return rt::Status::ok();
  JoinMpi join = nullptr;
  AMPC_RETURN_IF_ERROR(loadPlugin(pluginDir, join));
  std::string error;
  std::shared_ptr<rt::mpi::MpiCollective> world(
      join(static_cast<double>(run.collectiveTimeout), tool.c_str(), &error));
  if (!world)
    return rt::Status::error(error);
  if (run.isGiven("nproc") && run.nproc != world->size())
    return rt::Status::error("--nproc " + std::to_string(run.nproc) +
                             ", but mpirun started " +
                             std::to_string(world->size()) + " ranks");
  out = std::move(world);
  return rt::Status::ok();
}

std::string rankDevice(const std::string &device) {
  if (device != "cuda" || !launchedByMpi())
    return device;
  if (launchSize() < 2)
    return device;
  if (const char *visible = std::getenv("CUDA_VISIBLE_DEVICES");
      visible && *visible && !std::strchr(visible, ','))
    return device;
  for (const char *var :
       {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char *v = std::getenv(var); v && *v)
      return "cuda:" + std::to_string(std::atoi(v));
  return device;
}

rt::Status rankDeviceError(rt::Status s, const std::string &given,
                           const std::string &chosen) {
  // Only where the chosen GPU does not exist (CudaDevice's message): a
  // missing driver or library is the same error on every rank.
  if (s || given == chosen ||
      s.message().find("there is no CUDA device") == std::string::npos)
    return s;
  return rt::Status::error(
      s.message() + " (--device " + given + " under a launch of several " +
      "ranks: each rank takes the GPU of its place on its machine, " + chosen +
      " here, as NCCL puts no two ranks on one GPU; start at most as many " +
      "ranks per machine as it has GPUs)");
}

void shareCores(RunOptions &run, int64_t ranks) {
  if (ranks > 1 && !run.isGiven("threads"))
    run.threads = std::max(1u, std::thread::hardware_concurrency() /
                                   static_cast<unsigned>(ranks));
}

} // namespace ampc::tools
