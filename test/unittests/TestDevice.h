//===- TestDevice.h - the device the compile-and-run tests use ------------===//
//
// AMPC_TEST_DEVICE (cpu, cuda, cuda:N; cpu when unset) picks where the
// gradient checks and AMP programs run: ctest runs them once on the CPU and
// once more as ampc-unittests-cuda, whose tests all skip, with the reason,
// where the GPU cannot be opened; with AMPC_REQUIRE_GPU=1 (the GPU
// machine's runs) that is a failure instead.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_UNITTESTS_TESTDEVICE_H
#define AMPC_TEST_UNITTESTS_TESTDEVICE_H

#include "runtime/Session.h"

#include <cstdlib>
#include <string>

namespace ampc::unittest {

inline std::string testDevice() {
  const char *d = std::getenv("AMPC_TEST_DEVICE");
  return d && *d ? d : "cpu";
}

// AMPC_REQUIRE_GPU=1 (any value but "" and "0"): a device that cannot be
// opened fails the run instead of skipping it.
inline bool gpuRequired() {
  const char *e = std::getenv("AMPC_REQUIRE_GPU");
  return e && *e && std::string(e) != "0";
}

inline rt::SessionOptions testSessionOptions() {
  rt::SessionOptions o;
  o.device = testDevice();
  o.threads = 1;
  return o;
}

} // namespace ampc::unittest

#endif // AMPC_TEST_UNITTESTS_TESTDEVICE_H
