//===- TestDevice.cpp - skip every test when the test device is absent ----===//
#include "TestDevice.h"

#include "gtest/gtest.h"

namespace ampc::unittest {
namespace {

// A function with nothing in it: creating its session only opens the
// device, whose failure Session::create prefixes with "device 'NAME'".
class DeviceEnvironment : public ::testing::Environment {
public:
  void SetUp() override {
    if (testDevice() == "cpu")
      return;
    rt::FunctionInfo empty;
    empty.name = "probe";
    std::unique_ptr<rt::Session> session;
    rt::Status s =
        rt::Session::create(std::move(empty), testSessionOptions(), session);
    if (!s && s.message().rfind("device '", 0) == 0) {
      // Not fatal: a fatal failure here would list every test as skipped;
      // this way each fails on the device it cannot open. Not "cannot be
      // used here": ctest's SKIP_REGULAR_EXPRESSION for ampc-unittests-cuda
      // would turn the failure back into a skip.
      if (gpuRequired()) {
        ADD_FAILURE() << "AMPC_TEST_DEVICE=" << testDevice()
                      << " is required (AMPC_REQUIRE_GPU=1) but cannot be "
                         "opened: "
                      << s.message();
        return;
      }
      GTEST_SKIP() << "AMPC_TEST_DEVICE=" << testDevice()
                   << " cannot be used here: " << s.message();
    }
  }
};

const auto *const kRegistered =
    ::testing::AddGlobalTestEnvironment(new DeviceEnvironment);

} // namespace
} // namespace ampc::unittest
