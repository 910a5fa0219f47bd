//===- CudaApi.cpp - dlopen and dlsym of the CUDA libraries ---------------===//
#include "runtime/cuda/CudaApi.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

namespace ampc::rt::cuda {
namespace {

#define AMPC_STR2(x) #x
#define AMPC_STR(x) AMPC_STR2(x)

std::vector<std::string> searchDirs() {
  std::vector<std::string> dirs;
  if (const char *env = std::getenv("AMPC_CUDA_LIBRARY_PATH")) {
    std::string s = env;
    size_t start = 0;
    while (start <= s.size()) {
      size_t end = s.find(':', start);
      if (end == std::string::npos)
        end = s.size();
      if (end > start)
        dirs.push_back(s.substr(start, end - start));
      start = end + 1;
    }
  }
  dirs.push_back(""); // the loader's own search (LD_LIBRARY_PATH, ldconfig)
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

// Opens the first of `names` found in the search directories; on failure
// the message is what the loader said about the first name.
Status openLibrary(const std::vector<const char *> &names, void *&handle,
                   std::string &path) {
  std::string firstError;
  for (const std::string &dir : searchDirs())
    for (const char *name : names) {
      std::string candidate = dir.empty() ? name : dir + "/" + name;
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        path = candidate;
        return Status::ok();
      }
      if (firstError.empty())
        if (const char *e = dlerror())
          firstError = e;
    }
  return Status::error(firstError.empty()
                           ? std::string(names.front()) + " was not found"
                           : firstError);
}

template <typename Fn>
Status lookup(void *lib, const char *libName, const char *symbol, Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!out)
    return Status::error(std::string(libName) + " has no function '" + symbol +
                         "' (the backend needs CUDA 13, cuBLASLt 13 and cuDNN "
                         "9)");
  return Status::ok();
}

struct Loaded {
  CudaApi api;
  Status status;
  std::string driverPath, cublasLtPath, cudnnPath;
};

Status load(Loaded &l) {
  CudaApi &api = l.api;
  void *driver = nullptr, *lt = nullptr, *dnn = nullptr;
  if (Status st =
          openLibrary({"libcuda.so.1", "libcuda.so"}, driver, l.driverPath);
      !st)
    return Status::error("no CUDA driver on this machine (" + st.message() +
                         ")");
#define AMPC_CU(name)                                                          \
  AMPC_RETURN_IF_ERROR(lookup(driver, "libcuda", AMPC_STR(name), api.name));
#include "runtime/cuda/CudaSymbols.def"
  api.driverPath = l.driverPath.c_str();
  CUresult r = api.cuInit(0);
  if (r == CUDA_ERROR_NO_DEVICE)
    return Status::error("no CUDA GPU is visible (the driver is at " +
                         l.driverPath + "; cuInit: CUDA_ERROR_NO_DEVICE)");
  if (r != CUDA_SUCCESS)
    return cuError(api, r, "cuInit(0)");
  int devices = 0;
  AMPC_CU_CHECK(api, cuDeviceGetCount(&devices));
  if (devices == 0)
    return Status::error("no CUDA GPU is visible (cuDeviceGetCount: 0)");

  if (Status st = openLibrary({"libcublasLt.so.13", "libcublasLt.so"}, lt,
                              l.cublasLtPath);
      !st)
    return Status::error("cuBLASLt 13 cannot be loaded (" + st.message() +
                         "); set AMPC_CUDA_LIBRARY_PATH to its directory");
#define AMPC_CUBLASLT(name)                                                    \
  AMPC_RETURN_IF_ERROR(lookup(lt, "libcublasLt", AMPC_STR(name), api.name));
#include "runtime/cuda/CudaSymbols.def"
  api.cublasLtPath = l.cublasLtPath.c_str();

  if (Status st =
          openLibrary({"libcudnn.so.9", "libcudnn.so"}, dnn, l.cudnnPath);
      !st)
    return Status::error("cuDNN 9 cannot be loaded (" + st.message() +
                         "); set AMPC_CUDA_LIBRARY_PATH to its directory");
#define AMPC_CUDNN(name)                                                       \
  AMPC_RETURN_IF_ERROR(lookup(dnn, "libcudnn", AMPC_STR(name), api.name));
#include "runtime/cuda/CudaSymbols.def"
  api.cudnnPath = l.cudnnPath.c_str();
  // The libraries stay loaded for the life of the process: handles and
  // function pointers are shared by every session.
  return Status::ok();
}

} // namespace

Status loadCudaApi(const CudaApi *&out) {
  static Loaded *loaded = [] {
    auto *l = new Loaded;
    l->status = load(*l);
    return l;
  }();
  if (!loaded->status)
    return loaded->status;
  out = &loaded->api;
  return Status::ok();
}

Status cuError(const CudaApi &api, CUresult r, const char *call) {
  const char *name = nullptr, *text = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString)
    api.cuGetErrorString(r, &text);
  std::string m = std::string(call) + " failed: " +
                  (name ? name : "CUresult " + std::to_string(int(r)));
  if (text)
    m += std::string(" (") + text + ")";
  return Status::error(m);
}

Status cublasError(cublasStatus_t r, const char *call) {
  const char *name = "an unknown cuBLAS status";
  switch (r) {
#define AMPC_CASE(x)                                                           \
  case x:                                                                      \
    name = #x;                                                                 \
    break;
    AMPC_CASE(CUBLAS_STATUS_NOT_INITIALIZED)
    AMPC_CASE(CUBLAS_STATUS_ALLOC_FAILED)
    AMPC_CASE(CUBLAS_STATUS_INVALID_VALUE)
    AMPC_CASE(CUBLAS_STATUS_ARCH_MISMATCH)
    AMPC_CASE(CUBLAS_STATUS_MAPPING_ERROR)
    AMPC_CASE(CUBLAS_STATUS_EXECUTION_FAILED)
    AMPC_CASE(CUBLAS_STATUS_INTERNAL_ERROR)
    AMPC_CASE(CUBLAS_STATUS_NOT_SUPPORTED)
    AMPC_CASE(CUBLAS_STATUS_LICENSE_ERROR)
#undef AMPC_CASE
  default:
    break;
  }
  return Status::error(std::string(call) + " failed: " + name + " (" +
                       std::to_string(int(r)) + ")");
}

Status cudnnError(const CudaApi &api, cudnnStatus_t r, const char *call) {
  const char *text = api.cudnnGetErrorString ? api.cudnnGetErrorString(r)
                                             : "an unknown cuDNN status";
  return Status::error(std::string(call) + " failed: " + text + " (" +
                       std::to_string(int(r)) + ")");
}

} // namespace ampc::rt::cuda
