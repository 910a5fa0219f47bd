//===- MpiCollectiveTest.cpp - MpiCollective on the ranks of mpirun -------===//
//
// Run by ctest under `mpirun -n 2` (mpi-collective): every rank runs every
// test, and mpirun fails when one rank does. One collective per process
// (MPI is initialised once), made by the first test that needs it.
//
//===----------------------------------------------------------------------===//
#include "runtime/mpi/MpiCollective.h"

#include <gtest/gtest.h>
#include <mpi.h>

#include <cstdint>
#include <memory>
#include <vector>

using namespace ampc::rt;

namespace {

// Null, with the failure reported, when MPI cannot start.
mpi::MpiCollective *world() {
  static std::unique_ptr<mpi::MpiCollective> w = [] {
    std::unique_ptr<mpi::MpiCollective> c;
    Status s = mpi::MpiCollective::create(30, "ampc-mpi-unittests", c);
    EXPECT_TRUE(s) << s.message();
    return c;
  }();
  return w.get();
}

// What the CUDA sessions use it for: rank 0's NCCL id (128 bytes) on every
// rank.
TEST(MpiCollective, BroadcastGivesEveryRankRankZerosBytes) {
  ASSERT_NE(world(), nullptr);
  mpi::MpiCollective &c = *world();
  ASSERT_GE(c.size(), 2) << "run under mpirun -n 2 or more";
  for (size_t bytes : {size_t(0), size_t(1), size_t(128), size_t(100003)}) {
    std::vector<uint8_t> data(bytes);
    for (size_t i = 0; i < bytes; ++i)
      data[i] = c.rank() == 0 ? static_cast<uint8_t>(i * 7 + 3) : 0xEE;
    Status s = c.broadcast(data.data(), bytes);
    ASSERT_TRUE(s) << s.message();
    for (size_t i = 0; i < bytes; ++i)
      ASSERT_EQ(data[i], static_cast<uint8_t>(i * 7 + 3))
          << "byte " << i << " of " << bytes << " on rank " << c.rank();
  }
}

// Doubles summed over the ranks (the ranks' losses, batch norm's sums).
TEST(MpiCollective, SumOverRanksAddsEveryRanksValues) {
  ASSERT_NE(world(), nullptr);
  mpi::MpiCollective &c = *world();
  std::vector<double> v = {1.0 + c.rank(), 0.5, -2.0 * c.rank()};
  Status s = c.sumOverRanks(v.data(), v.size());
  ASSERT_TRUE(s) << s.message();
  const double n = c.size();
  EXPECT_EQ(v[0], n + n * (n - 1) / 2);
  EXPECT_EQ(v[1], 0.5 * n);
  EXPECT_EQ(v[2], -n * (n - 1));
}

// What a Python program's exit does (ampc/__init__.py): MPI is finalised
// once, and a collective after it fails at once, saying why. Last in the
// file, which GoogleTest runs in order (not under --gtest_shuffle): it ends
// MPI for this process.
TEST(MpiCollective, LeaveFinalisesAndLaterCallsFail) {
  ASSERT_NE(world(), nullptr);
  mpi::MpiCollective &c = *world();
  c.leave();
  int finalized = 0;
  MPI_Finalized(&finalized);
  EXPECT_TRUE(finalized);
  double v = 1;
  Status s = c.sumOverRanks(&v, 1);
  ASSERT_FALSE(s);
  EXPECT_NE(s.message().find("this rank has left the ranks"), std::string::npos)
      << s.message();
  c.leave(); // and again, as the destructor does: nothing more
}

} // namespace
