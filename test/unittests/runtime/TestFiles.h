//===- TestFiles.h - scratch directories and files for tests ----*- C++ -*-===//
//
// What the tests of amp-run's file formats share: a fresh directory per test
// (named after the process and the test, so ctest's parallel processes never
// share one), a whole file as a string, a tensor's elements, and "failed with
// a message containing".
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_TESTFILES_H
#define AMPC_TEST_RUNTIME_TESTFILES_H

#include "runtime/Status.h"
#include "runtime/io/TensorFile.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

namespace ampc::rt::test {

// TempDir()/ampc-<what>-<pid>: the stem of every scratch name below.
inline std::string scratchName(const std::string &what) {
  return ::testing::TempDir() + "ampc-" + what + "-" + std::to_string(getpid());
}

// A fixture whose `dir` is an empty directory for the test, removed after.
class ScratchDirTest : public ::testing::Test {
protected:
  explicit ScratchDirTest(std::string what) : what(std::move(what)) {}

  void SetUp() override {
    dir = scratchName(what) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }

  std::string dir;

private:
  std::string what;
};

inline std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<uint8_t> slurpBytes(const std::string &path) {
  std::string s = slurp(path);
  return std::vector<uint8_t>(s.begin(), s.end());
}

template <typename T> std::vector<T> valuesOf(const HostTensor &t) {
  std::vector<T> v(t.bytes.size() / sizeof(T));
  std::memcpy(v.data(), t.bytes.data(), t.bytes.size());
  return v;
}

inline bool contains(const Status &s, const std::string &text) {
  return !s.isOk() && s.message().find(text) != std::string::npos;
}

} // namespace ampc::rt::test

#endif // AMPC_TEST_RUNTIME_TESTFILES_H
