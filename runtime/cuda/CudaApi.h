//===- CudaApi.h - the CUDA libraries, loaded at run time -----------------===//
//
// The driver (libcuda), cuBLASLt, cuDNN and NCCL are opened with dlopen and
// their functions looked up once (IREE's dynamic symbols), so every ampc build
// links and runs on machines without a GPU or without CUDA; only
// `--device cuda` needs them, and it says which library is missing. The
// driver and cuBLASLt are the core, loaded when a device is opened; cuDNN
// only serves convolutions and is loaded when the first one is prepared,
// so a missing or broken cuDNN cannot stop a model without convolutions;
// NCCL only serves data parallelism and is loaded when a data-parallel
// session first needs it.
// The headers come from the CUDA toolkit at build time and give each
// pointer its exact type.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDAAPI_H
#define AMPC_RUNTIME_CUDA_CUDAAPI_H

#include "runtime/Status.h"

#include <cublasLt.h>
#include <cuda.h>
#include <cudnn.h>
#include <nccl.h>

#include <string>
#include <vector>

namespace ampc::rt::cuda {

struct CudaApi {
#define AMPC_CU(name) decltype(&::name) name = nullptr;
#define AMPC_CUBLASLT(name) decltype(&::name) name = nullptr;
#define AMPC_CUDNN(name) decltype(&::name) name = nullptr;
#define AMPC_NCCL(name) decltype(&::name) name = nullptr;
#include "runtime/cuda/CudaSymbols.def"
  // Where each library was found (for messages and `amp-exec --devices`);
  // cudnnPath and ncclPath stay "" until loadCudnn / loadNccl succeed.
  const char *driverPath = "", *cublasLtPath = "", *cudnnPath = "",
             *ncclPath = "";
};

// Loads the driver and cuBLASLt with their symbols of CudaSymbols.def, and
// initializes the driver, once per process; later calls return the first
// outcome. The cuDNN pointers stay null (loadCudnn). The error is one line
// that says what is missing: "no CUDA driver on this machine (libcuda.so.1
// (or libcuda.so) is not in ...)", "no CUDA GPU is visible (cuInit:
// CUDA_ERROR_NO_DEVICE ...)". Libraries are searched in
// AMPC_CUDA_LIBRARY_PATH (colon-separated directories) first, then by the
// dynamic loader's rules, then in /usr/local/cuda/lib64.
Status loadCudaApi(const CudaApi *&out);

// Loads cuDNN 9 and its symbols into the same CudaApi, once per process and
// thread-safely; later calls return the first outcome. Needs no driver
// (nothing of cuDNN is initialized here: a device creates its handle,
// CudaDevice::cudnn). The error names the library and every place it was
// looked for: "cuDNN 9 cannot be loaded: libcudnn.so.9 (or libcudnn.so) is
// not in AMPC_CUDA_LIBRARY_PATH (unset), ...; convolutions need it: set
// AMPC_CUDA_LIBRARY_PATH to its directory".
Status loadCudnn(const CudaApi *&out);

// Loads NCCL 2 (2.9 or later) and its symbols into the same CudaApi, as
// loadCudnn does cuDNN: once per process, thread-safely, without a driver.
// The error names the library, every place it was looked for and where
// NCCL usually is ("NCCL cannot be loaded: libnccl.so.2 (or libnccl.so)
// is not in ...; data parallelism on GPUs needs it: set
// AMPC_CUDA_LIBRARY_PATH to its directory (the CUDA toolkit's lib64, or
// nvidia/nccl/lib in PyTorch's site-packages)"), or the version found.
Status loadNccl(const CudaApi *&out);

// Opens the first of `names` found, searching as above, with RTLD_NOW |
// RTLD_LOCAL. The error is one line naming every place looked in, and what
// the loader said about a file that exists but does not load (a missing
// dependency, the wrong architecture). The loaders use it; it is here for
// the tests of those messages.
Status openCudaLibrary(const std::vector<const char *> &names, void *&handle,
                       std::string &path);

// "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
Status cuError(const CudaApi &api, CUresult r, const char *call);
// The driver's name of `r` ("CUDA_ERROR_INVALID_VALUE"), or "CUresult N".
std::string cuErrorName(const CudaApi &api, CUresult r);
Status cublasError(cublasStatus_t r, const char *call);
Status cudnnError(const CudaApi &api, cudnnStatus_t r, const char *call);
Status ncclError(const CudaApi &api, ncclResult_t r, const char *call);

} // namespace ampc::rt::cuda

// Each evaluates `call` (an expression using `api`, a CudaApi reference in
// scope) once and returns the failure as a Status naming the call.
#define AMPC_CU_CHECK(api, call)                                               \
  do {                                                                         \
    CUresult ampcCuR_ = (api).call;                                            \
    if (ampcCuR_ != CUDA_SUCCESS)                                              \
      return ::ampc::rt::cuda::cuError((api), ampcCuR_, #call);                \
  } while (0)
#define AMPC_CUBLAS_CHECK(api, call)                                           \
  do {                                                                         \
    cublasStatus_t ampcLtR_ = (api).call;                                      \
    if (ampcLtR_ != CUBLAS_STATUS_SUCCESS)                                     \
      return ::ampc::rt::cuda::cublasError(ampcLtR_, #call);                   \
  } while (0)
#define AMPC_CUDNN_CHECK(api, call)                                            \
  do {                                                                         \
    cudnnStatus_t ampcDnnR_ = (api).call;                                      \
    if (ampcDnnR_ != CUDNN_STATUS_SUCCESS)                                     \
      return ::ampc::rt::cuda::cudnnError((api), ampcDnnR_, #call);            \
  } while (0)

#define AMPC_NCCL_CHECK(api, call)                                             \
  do {                                                                         \
    ncclResult_t ampcNcclR_ = (api).call;                                      \
    if (ampcNcclR_ != ncclSuccess)                                             \
      return ::ampc::rt::cuda::ncclError((api), ampcNcclR_, #call);            \
  } while (0)

#endif // AMPC_RUNTIME_CUDA_CUDAAPI_H
