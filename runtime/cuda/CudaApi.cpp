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

// The directories of AMPC_CUDA_LIBRARY_PATH, in order.
std::vector<std::string> userDirs() {
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
  return dirs;
}

std::vector<std::string> searchDirs() {
  std::vector<std::string> dirs = userDirs();
  dirs.push_back(""); // the loader's own search (LD_LIBRARY_PATH, ldconfig)
  dirs.push_back("/usr/local/cuda/lib64");
  return dirs;
}

// The search of searchDirs() in words, for the error that ends it.
std::string describeSearch() {
  std::string user;
  for (const std::string &d : userDirs())
    user += (user.empty() ? "" : ", ") + d;
  if (user.empty())
    user = std::getenv("AMPC_CUDA_LIBRARY_PATH") ? "empty" : "unset";
  return "AMPC_CUDA_LIBRARY_PATH (" + user +
         "), the dynamic loader's search (LD_LIBRARY_PATH, RUNPATH, "
         "/etc/ld.so.cache) and /usr/local/cuda/lib64";
}

} // namespace

Status openCudaLibrary(const std::vector<const char *> &names, void *&handle,
                       std::string &path) {
  handle = nullptr;
  // What the loader said about a file that is there but does not load;
  // "not found" everywhere is the common case and says less.
  std::string loadError;
  for (const std::string &dir : searchDirs())
    for (const char *name : names) {
      std::string candidate = dir.empty() ? name : dir + "/" + name;
      handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handle) {
        path = candidate;
        return Status::ok();
      }
      const char *e = dlerror();
      std::string notFound =
          candidate + ": cannot open shared object file: No such file";
      if (e && loadError.empty() && std::string(e).rfind(notFound, 0) != 0)
        loadError = e;
    }
  std::string wanted = names.front();
  if (names.size() > 1) {
    wanted += " (or ";
    for (size_t i = 1; i < names.size(); ++i)
      wanted += std::string(i > 1 ? ", " : "") + names[i];
    wanted += ")";
  }
  if (!loadError.empty())
    return Status::error(wanted + " does not load: " + loadError +
                         "; looked in " + describeSearch());
  return Status::error(wanted + " is not in " + describeSearch());
}

namespace {

template <typename Fn>
Status lookup(void *lib, const std::string &libPath, const char *symbol,
              Fn &out) {
  out = reinterpret_cast<Fn>(dlsym(lib, symbol));
  if (!out)
    return Status::error(libPath + " has no function '" + symbol +
                         "' (the backend needs CUDA 13, cuBLASLt 13, cuDNN 9 "
                         "and NCCL 2.9 or later)");
  return Status::ok();
}

// One per process, never destroyed: the libraries stay loaded for the
// life of the process, and handles and function pointers are shared by
// every session. Each part is loaded once (std::call_once), the core when
// a device is first opened, cuDNN when a convolution is first prepared,
// NCCL when a data-parallel session first needs it.
struct Loaded {
  CudaApi api;
  std::once_flag coreOnce, cudnnOnce, ncclOnce;
  Status core, cudnn, nccl;
  std::string driverPath, cublasLtPath, cudnnPath, ncclPath;
};

Loaded &loaded() {
  static Loaded *l = new Loaded;
  return *l;
}

Status loadCore(Loaded &l) {
  CudaApi &api = l.api;
  void *driver = nullptr, *lt = nullptr;
  if (Status st =
          openCudaLibrary({"libcuda.so.1", "libcuda.so"}, driver, l.driverPath);
      !st)
    return Status::error("no CUDA driver on this machine (" + st.message() +
                         ")");
#define AMPC_CU(name)                                                          \
  AMPC_RETURN_IF_ERROR(lookup(driver, l.driverPath, AMPC_STR(name), api.name));
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

  if (Status st = openCudaLibrary({"libcublasLt.so.13", "libcublasLt.so"}, lt,
                                  l.cublasLtPath);
      !st)
    return Status::error("cuBLASLt 13 cannot be loaded (" + st.message() +
                         "); set AMPC_CUDA_LIBRARY_PATH to its directory");
#define AMPC_CUBLASLT(name)                                                    \
  AMPC_RETURN_IF_ERROR(lookup(lt, l.cublasLtPath, AMPC_STR(name), api.name));
#include "runtime/cuda/CudaSymbols.def"
  api.cublasLtPath = l.cublasLtPath.c_str();
  return Status::ok();
}

Status loadCudnnLibrary(Loaded &l) {
  CudaApi &api = l.api;
  void *dnn = nullptr;
  if (Status st =
          openCudaLibrary({"libcudnn.so.9", "libcudnn.so"}, dnn, l.cudnnPath);
      !st)
    return Status::error("cuDNN 9 cannot be loaded: " + st.message() +
                         "; convolutions need it: set AMPC_CUDA_LIBRARY_PATH "
                         "to its directory");
  // All or nothing: a half-filled table would let a caller use a library
  // that was refused.
  CudaApi found;
#define AMPC_CUDNN(name)                                                       \
  if (Status st = lookup(dnn, l.cudnnPath, AMPC_STR(name), found.name); !st)   \
    return Status::error("cuDNN 9 cannot be used: " + st.message());
#include "runtime/cuda/CudaSymbols.def"
#define AMPC_CUDNN(name) api.name = found.name;
#include "runtime/cuda/CudaSymbols.def"
  api.cudnnPath = l.cudnnPath.c_str();
  return Status::ok();
}

// NCCL 2.9 captures its collectives into CUDA graphs, which the sessions
// replay (ncclGetVersion's code is major * 10000 + minor * 100 + patch).
constexpr int kMinNcclVersion = 20900;

Status loadNcclLibrary(Loaded &l) {
  CudaApi &api = l.api;
  void *nccl = nullptr;
  if (Status st =
          openCudaLibrary({"libnccl.so.2", "libnccl.so"}, nccl, l.ncclPath);
      !st)
    return Status::error(
        "NCCL cannot be loaded: " + st.message() +
        "; data parallelism on GPUs needs it: set AMPC_CUDA_LIBRARY_PATH to "
        "its directory (the CUDA toolkit's lib64, or nvidia/nccl/lib in "
        "PyTorch's site-packages)");
  CudaApi found; // all or nothing, as cuDNN's
#define AMPC_NCCL(name)                                                        \
  if (Status st = lookup(nccl, l.ncclPath, AMPC_STR(name), found.name); !st)   \
    return Status::error("NCCL cannot be used: " + st.message());
#include "runtime/cuda/CudaSymbols.def"
  int version = 0;
  if (found.ncclGetVersion(&version) != ncclSuccess ||
      version < kMinNcclVersion)
    return Status::error("NCCL at " + l.ncclPath + " is version " +
                         std::to_string(version) +
                         "; the backend needs 2.9 (20900) or later");
#define AMPC_NCCL(name) api.name = found.name;
#include "runtime/cuda/CudaSymbols.def"
  api.ncclPath = l.ncclPath.c_str();
  return Status::ok();
}

} // namespace

Status loadCudaApi(const CudaApi *&out) {
  Loaded &l = loaded();
  std::call_once(l.coreOnce, [&l] { l.core = loadCore(l); });
  if (!l.core)
    return l.core;
  out = &l.api;
  return Status::ok();
}

Status loadCudnn(const CudaApi *&out) {
  Loaded &l = loaded();
  std::call_once(l.cudnnOnce, [&l] { l.cudnn = loadCudnnLibrary(l); });
  if (!l.cudnn)
    return l.cudnn;
  out = &l.api;
  return Status::ok();
}

Status loadNccl(const CudaApi *&out) {
  Loaded &l = loaded();
  std::call_once(l.ncclOnce, [&l] { l.nccl = loadNcclLibrary(l); });
  if (!l.nccl)
    return l.nccl;
  out = &l.api;
  return Status::ok();
}

std::string cuErrorName(const CudaApi &api, CUresult r) {
  const char *name = nullptr;
  if (api.cuGetErrorName)
    api.cuGetErrorName(r, &name);
  return name ? name : "CUresult " + std::to_string(int(r));
}

Status cuError(const CudaApi &api, CUresult r, const char *call) {
  const char *text = nullptr;
  if (api.cuGetErrorString)
    api.cuGetErrorString(r, &text);
  std::string m = std::string(call) + " failed: " + cuErrorName(api, r);
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

Status ncclError(const CudaApi &api, ncclResult_t r, const char *call) {
  const char *text =
      api.ncclGetErrorString ? api.ncclGetErrorString(r) : "unknown";
  return Status::error(std::string(call) + " failed: " + text + " (NCCL " +
                       std::to_string(int(r)) + ")");
}

} // namespace ampc::rt::cuda
