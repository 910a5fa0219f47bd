//===- CudaLibrariesTest.cpp - finding and loading the CUDA libraries -----===//
//
// The search and its messages need no GPU: a library that is nowhere, one
// that is there but does not load, and cuDNN, which loads without a driver
// wherever it is installed (every symbol of CudaSymbols.def's cuDNN section
// must resolve). That a model without convolutions never loads cuDNN, and
// that the first convolution does, needs a GPU.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include "runtime/cuda/CudaApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace ampc::rt::cuda::test {
namespace {

namespace fs = std::filesystem;

// A fresh directory under the test's temporary directory.
std::string freshDir(const std::string &name) {
  fs::path dir = fs::path(::testing::TempDir()) / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir.string();
}

const char kLoaderSearch[] =
    "the dynamic loader's search (LD_LIBRARY_PATH, RUNPATH, /etc/ld.so.cache) "
    "and /usr/local/cuda/lib64";

TEST(CudaLibraries, MissingLibraryNamesEveryPlaceLooked) {
  std::string empty = freshDir("ampc-cuda-libs-empty");
  std::string absent =
      (fs::path(::testing::TempDir()) / "ampc-no-such-dir").string();
  fs::remove_all(absent);
  ScopedEnv env("AMPC_CUDA_LIBRARY_PATH", empty + "::" + absent);
  void *handle = nullptr;
  std::string path;
  Status s = openCudaLibrary(
      {"libampc-test-absent.so.9", "libampc-test-absent.so"}, handle, path);
  ASSERT_FALSE(s);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(s.message(),
            "libampc-test-absent.so.9 (or libampc-test-absent.so) is not in "
            "AMPC_CUDA_LIBRARY_PATH (" +
                empty + ", " + absent + "), " + kLoaderSearch);
}

TEST(CudaLibraries, UnsetOrEmptySearchPathIsSaid) {
  void *handle = nullptr;
  std::string path;
  {
    ScopedEnv env("AMPC_CUDA_LIBRARY_PATH", std::nullopt);
    Status s = openCudaLibrary({"libampc-test-absent.so.9"}, handle, path);
    EXPECT_EQ(s.message(), "libampc-test-absent.so.9 is not in "
                           "AMPC_CUDA_LIBRARY_PATH (unset), " +
                               std::string(kLoaderSearch));
  }
  ScopedEnv env("AMPC_CUDA_LIBRARY_PATH", ":");
  Status s = openCudaLibrary({"libampc-test-absent.so.9"}, handle, path);
  EXPECT_EQ(s.message(), "libampc-test-absent.so.9 is not in "
                         "AMPC_CUDA_LIBRARY_PATH (empty), " +
                             std::string(kLoaderSearch));
}

// A file that is there but is no library (a truncated download, the wrong
// architecture): the loader's own reason, not "not found".
TEST(CudaLibraries, LibraryThatDoesNotLoadSaysWhy) {
  std::string dir = freshDir("ampc-cuda-libs-broken");
  std::string file = dir + "/libampc-test-broken.so.9";
  std::ofstream(file) << "not an ELF file\n";
  ScopedEnv env("AMPC_CUDA_LIBRARY_PATH", dir);
  void *handle = nullptr;
  std::string path;
  Status s = openCudaLibrary({"libampc-test-broken.so.9"}, handle, path);
  ASSERT_FALSE(s);
  const std::string &m = s.message();
  EXPECT_EQ(
      m.rfind("libampc-test-broken.so.9 does not load: " + file + ": ", 0), 0u)
      << m;
  EXPECT_NE(m.find("; looked in AMPC_CUDA_LIBRARY_PATH (" + dir + "), " +
                   kLoaderSearch),
            std::string::npos)
      << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
}

TEST(CudaLibraries, FoundLibraryGivesItsPath) {
  ScopedEnv env("AMPC_CUDA_LIBRARY_PATH", std::nullopt);
  void *handle = nullptr;
  std::string path;
  // libc is everywhere; the loader's own search finds it.
  Status s =
      openCudaLibrary({"libampc-test-absent.so", "libc.so.6"}, handle, path);
  ASSERT_TRUE(s) << s.message();
  EXPECT_NE(handle, nullptr);
  EXPECT_EQ(path, "libc.so.6");
}

// cuDNN loads on its own, without a driver: on a machine with cuDNN (this
// one may have no GPU) every symbol must resolve; without it the one error
// names the library and where it was looked for.
TEST(CudaLibraries, CudnnLoadsWithoutADriverOrSaysWhereItLooked) {
  const CudaApi *api = nullptr;
  Status s = loadCudnn(api);
  if (!s) {
    const std::string &m = s.message();
    EXPECT_EQ(m.rfind("cuDNN 9 cannot be ", 0), 0u) << m;
    EXPECT_NE(m.find("libcudnn.so.9"), std::string::npos) << m;
    EXPECT_NE(m.find("AMPC_CUDA_LIBRARY_PATH"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    // Later calls give the first outcome.
    EXPECT_EQ(loadCudnn(api).message(), m);
    return;
  }
  ASSERT_NE(api, nullptr);
#define AMPC_CUDNN(name) EXPECT_NE(api->name, nullptr) << #name;
#include "runtime/cuda/CudaSymbols.def"
  EXPECT_STRNE(api->cudnnPath, "");
  EXPECT_EQ(api->cudnnGetVersion() / 10000, 9u) << api->cudnnGetVersion();
  const CudaApi *again = nullptr;
  ASSERT_TRUE(loadCudnn(again));
  EXPECT_EQ(again, api);
}

// NCCL, as cuDNN: loads without a driver where it is installed (every
// symbol resolved, version 2.9 or later), else one error naming the
// library, where it was looked for and where NCCL usually is.
TEST(CudaLibraries, NcclLoadsWithoutADriverOrSaysWhereItLooked) {
  const CudaApi *api = nullptr;
  Status s = loadNccl(api);
  if (!s) {
    const std::string &m = s.message();
    EXPECT_EQ(m.rfind("NCCL cannot be ", 0), 0u) << m;
    EXPECT_NE(m.find("libnccl.so.2"), std::string::npos) << m;
    EXPECT_NE(m.find("AMPC_CUDA_LIBRARY_PATH"), std::string::npos) << m;
    EXPECT_NE(m.find("nvidia/nccl/lib"), std::string::npos) << m;
    EXPECT_EQ(m.find('\n'), std::string::npos) << m;
    EXPECT_EQ(loadNccl(api).message(), m);
    return;
  }
  ASSERT_NE(api, nullptr);
#define AMPC_NCCL(name) EXPECT_NE(api->name, nullptr) << #name;
#include "runtime/cuda/CudaSymbols.def"
  EXPECT_STRNE(api->ncclPath, "");
  int version = 0;
  ASSERT_EQ(api->ncclGetVersion(&version), ncclSuccess);
  EXPECT_GE(version, 20900);
  const CudaApi *again = nullptr;
  ASSERT_TRUE(loadNccl(again));
  EXPECT_EQ(again, api);
}

bool cudnnInProcess() {
  void *h = dlopen("libcudnn.so.9", RTLD_LAZY | RTLD_NOLOAD);
  if (h)
    dlclose(h); // only drops the reference RTLD_NOLOAD took
  return h != nullptr;
}

// The GEMM-only model of B5: its kernels never load cuDNN, so a missing or
// broken cuDNN cannot stop it; the first convolution loads it. Run in a
// fresh process (the death test re-runs this test alone), since other
// tests of this binary load cuDNN. Exit codes: 1, cuDNN was loaded before
// any convolution; 2, a kernel failed; 3, the convolution did not load it.
void gemmThenConv() {
  OpCase gemm;
  gemm.op = "gemm";
  gemm.attrs = gemmAttrs();
  gemm.inputs = {HostTensor::random(DType::F32, {8, 16}, 1),
                 HostTensor::random(DType::F32, {16, 4}, 2)};
  gemm.outputs = {HostTensor::empty(DType::F32, {8, 4})};
  std::vector<std::vector<HostTensor>> out;
  if (cudnnInProcess())
    std::exit(1);
  if (Status s = runCuda(*testDevice(), {gemm}, out); !s) {
    std::fprintf(stderr, "gemm: %s\n", s.message().c_str());
    std::exit(2);
  }
  if (cudnnInProcess())
    std::exit(1);
  OpCase conv;
  conv.op = "conv2d";
  conv.attrs.setInts("strides", {1, 1});
  conv.attrs.setInts("pads", {1, 1, 1, 1});
  conv.attrs.setInts("dilations", {1, 1});
  conv.attrs.setInt("group", 1);
  conv.inputs = {HostTensor::random(DType::F32, {1, 2, 5, 5}, 3),
                 HostTensor::random(DType::F32, {3, 2, 3, 3}, 4)};
  conv.outputs = {HostTensor::empty(DType::F32, {1, 3, 5, 5})};
  if (Status s = runCuda(*testDevice(), {conv}, out); !s) {
    std::fprintf(stderr, "conv2d: %s\n", s.message().c_str());
    std::exit(2);
  }
  std::exit(cudnnInProcess() ? 0 : 3);
}

TEST(CudaLibrariesDeathTest, CudnnIsLoadedByTheFirstConvolutionOnly) {
  AMPC_SKIP_WITHOUT_GPU();
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(gemmThenConv(), ::testing::ExitedWithCode(0), "");
}

} // namespace
} // namespace ampc::rt::cuda::test
