//===- RankDeviceTest.cpp - which GPU a rank of a launch takes ------------===//
#include "runtime/tooling/Ranks.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

namespace {

// The launcher's variables rankDevice reads, set for one test and restored.
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
  static constexpr const char *kVars[] = {
      "OMPI_COMM_WORLD_SIZE",       "PMIX_RANK",       "PMI_SIZE",
      "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID",
      "CUDA_VISIBLE_DEVICES"};
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

} // namespace
