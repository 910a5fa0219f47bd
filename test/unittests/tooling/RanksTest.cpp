//===- RanksTest.cpp - a tool as one rank of a launch ---------------------===//
#include "runtime/tooling/Ranks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

// The launcher's variables rankDevice and launchRank read, set for one test
// and restored.
class LaunchEnv {
public:
  LaunchEnv() {
    for (const char *v : kVars) {
      const char *old = std::getenv(v);
      saved_.push_back(old ? std::optional<std::string>(old) : std::nullopt);
      unsetenv(v);
    }
  }
  ~LaunchEnv() {
    for (size_t i = 0; i < saved_.size(); ++i) {
      if (saved_[i])
        setenv(kVars[i], saved_[i]->c_str(), 1);
      else
        unsetenv(kVars[i]);
    }
  }

private:
  static constexpr const char *kVars[] = {"OMPI_COMM_WORLD_SIZE",
                                          "PMIX_RANK",
                                          "PMI_SIZE",
                                          "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "MPI_LOCALRANKID",
                                          "SLURM_LOCALID",
                                          "CUDA_VISIBLE_DEVICES",
                                          "OMPI_COMM_WORLD_RANK",
                                          "PMI_RANK"};
  std::vector<std::optional<std::string>> saved_;
};

TEST(RankDevice, CudaIsTheLocalRanksGpuUnderALaunchOfSeveralRanks) {
  LaunchEnv env;
  // No launch: as given.
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda");
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_LOCAL_RANK", "3", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda:3");
  // A GPU named in full, and the CPU, stay.
  EXPECT_EQ(ampc::tools::rankDevice("cuda:1"), "cuda:1");
  EXPECT_EQ(ampc::tools::rankDevice("cpu"), "cpu");
  // The launcher gave the rank one GPU of its own.
  setenv("CUDA_VISIBLE_DEVICES", "5", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda");
  setenv("CUDA_VISIBLE_DEVICES", "0,1,2,3", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda:3");
  // One rank is no data parallelism.
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda");
}

TEST(RankDevice, OtherLaunchersLocalRanks) {
  LaunchEnv env;
  setenv("PMI_SIZE", "2", 1);
  setenv("MPI_LOCALRANKID", "1", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda:1");
  unsetenv("MPI_LOCALRANKID");
  setenv("SLURM_LOCALID", "0", 1);
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda:0");
  // A launch that numbers no local rank: as given.
  unsetenv("SLURM_LOCALID");
  EXPECT_EQ(ampc::tools::rankDevice("cuda"), "cuda");
}

TEST(LaunchRank, TheLaunchersRankWhenItStartedSeveral) {
  LaunchEnv env;
  EXPECT_EQ(ampc::tools::launchRank(), std::nullopt);
  setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  setenv("OMPI_COMM_WORLD_RANK", "2", 1);
  EXPECT_EQ(ampc::tools::launchRank(), 2);
  // A launch of one rank: no rank to name.
  setenv("OMPI_COMM_WORLD_SIZE", "1", 1);
  EXPECT_EQ(ampc::tools::launchRank(), std::nullopt);
  // MPICH's Hydra.
  unsetenv("OMPI_COMM_WORLD_SIZE");
  unsetenv("OMPI_COMM_WORLD_RANK");
  setenv("PMI_SIZE", "2", 1);
  setenv("PMI_RANK", "1", 1);
  EXPECT_EQ(ampc::tools::launchRank(), 1);
}

TEST(RankDevice, AnErrorSaysWhereTheLaunchPutTheRank) {
  ampc::rt::Status none = ampc::rt::Status::error(
      "--device cuda:1: there is no CUDA device 1 (this machine has 1, "
      "numbered from 0)");
  EXPECT_EQ(ampc::tools::rankDeviceError(none, "cuda", "cuda:1").message(),
            "--device cuda:1: there is no CUDA device 1 (this machine has 1, "
            "numbered from 0) (--device cuda under a launch of several ranks: "
            "each rank takes the GPU of its place on its machine, cuda:1 "
            "here, as NCCL puts no two ranks on one GPU; start at most as "
            "many ranks per machine as it has GPUs)");
  // The device as the user named it: the error as it is.
  EXPECT_EQ(ampc::tools::rankDeviceError(none, "cuda:1", "cuda:1").message(),
            none.message());
  EXPECT_TRUE(
      ampc::tools::rankDeviceError(ampc::rt::Status::ok(), "cuda", "cuda:1"));
  // Another error (no driver) is every rank's, whatever its GPU.
  ampc::rt::Status noDriver = ampc::rt::Status::error(
      "--device cuda:1: no CUDA driver on this machine");
  EXPECT_EQ(ampc::tools::rankDeviceError(noDriver, "cuda", "cuda:1").message(),
            noDriver.message());
}

TEST(LocalRanks, NprocStartsAtMostFourRanksPerHardwareThread) {
  using ampc::tools::checkLocalRanks;
  EXPECT_TRUE(checkLocalRanks(1, 2));
  EXPECT_TRUE(checkLocalRanks(8, 2));
  EXPECT_EQ(checkLocalRanks(9, 2).message(),
            "--nproc 9 would start that many processes on this machine, "
            "which has 2 hardware threads: --nproc starts at most 8 (4 per "
            "thread); for ranks on several machines, start the tool under "
            "mpirun -n N with a host list");
  // A machine that does not say its thread count counts as one thread.
  EXPECT_TRUE(checkLocalRanks(4, 0));
  EXPECT_EQ(checkLocalRanks(100000, 0).message(),
            "--nproc 100000 would start that many processes on this "
            "machine, which has 1 hardware thread: --nproc starts at most 4 "
            "(4 per thread); for ranks on several machines, start the tool "
            "under mpirun -n N with a host list");
}

} // namespace
