//===- CudaApi.h - the CUDA libraries, loaded at run time -----------------===//
//
// The driver (libcuda), cuBLASLt and cuDNN are opened with dlopen and their
// functions looked up once (IREE's dynamic symbols), so every ampc build
// links and runs on machines without a GPU or without CUDA; only
// `--device cuda` needs them, and it says which library is missing.
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

namespace ampc::rt::cuda {

struct CudaApi {
#define AMPC_CU(name) decltype(&::name) name = nullptr;
#define AMPC_CUBLASLT(name) decltype(&::name) name = nullptr;
#define AMPC_CUDNN(name) decltype(&::name) name = nullptr;
#include "runtime/cuda/CudaSymbols.def"
  // Where each library was found (for messages and `amp-exec --devices`).
  const char *driverPath = "", *cublasLtPath = "", *cudnnPath = "";
};

// Loads the three libraries and every symbol of CudaSymbols.def, and
// initializes the driver, once per process; later calls return the first
// outcome. The error is one line that says what is missing: "no CUDA driver
// (libcuda.so.1: cannot open shared object file...)", "no CUDA GPU is
// visible (cuInit: CUDA_ERROR_NO_DEVICE ...)". Libraries are searched in
// AMPC_CUDA_LIBRARY_PATH (colon-separated directories) first, then by the
// dynamic loader's rules, then in /usr/local/cuda/lib64.
Status loadCudaApi(const CudaApi *&out);

// "cuMemAlloc_v2 failed: CUDA_ERROR_OUT_OF_MEMORY (out of memory)".
Status cuError(const CudaApi &api, CUresult r, const char *call);
Status cublasError(cublasStatus_t r, const char *call);
Status cudnnError(const CudaApi &api, cudnnStatus_t r, const char *call);

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

#endif // AMPC_RUNTIME_CUDA_CUDAAPI_H
