//===- CudaModules.h - the fatbins of kernels/*.cu, embedded --------------===//
//
// runtime/cuda/CMakeLists.txt compiles each kernels/*.cu with nvcc into a
// fatbin (sm_90 SASS and compute_90 PTX) and generates the table.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDAMODULES_H
#define AMPC_RUNTIME_CUDA_CUDAMODULES_H

#include <cstddef>

namespace ampc::rt::cuda {

struct CudaModuleImage {
  const char *name; // the .cu file's stem
  const void *image;
  size_t size;
};

extern const CudaModuleImage kCudaModules[];
extern const size_t kCudaModuleCount;

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDAMODULES_H
