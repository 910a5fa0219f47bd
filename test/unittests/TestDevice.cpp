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
    if (!s && s.message().rfind("device '", 0) == 0)
      GTEST_SKIP() << "AMPC_TEST_DEVICE=" << testDevice()
                   << " cannot be used here: " << s.message();
  }
};

const auto *const kRegistered =
    ::testing::AddGlobalTestEnvironment(new DeviceEnvironment);

} // namespace
} // namespace ampc::unittest
