//===- CudnnFamily.h - the conv / batch-norm / pooling family's parts -----===//
//
// addCudnnKernels (CudaKernels.h) registers the family from three files:
// CudnnConvolution.cpp (cuDNN convolutions), BatchNorm.cpp and Pooling.cpp
// (our own kernels, where cuDNN cannot give the CPU backend's semantics).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDNNFAMILY_H
#define AMPC_RUNTIME_CUDA_CUDNNFAMILY_H

#include "runtime/cuda/CudaKernels.h"

#include <string>
#include <vector>

namespace ampc::rt::cuda {

void addCudnnConvolutionKernels(std::vector<KernelEntry> &out);
void addBatchNormKernels(std::vector<KernelEntry> &out);
void addPoolingKernels(std::vector<KernelEntry> &out);

// The suffix our kernels carry for a float dtype ("f32", "f16", "bf16",
// "f64"); empty for any other dtype.
inline const char *floatSuffix(DType t) {
  switch (t) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::F64:
    return "f64";
  default:
    return "";
  }
}

// Looks up our kernel `base` + "_" + the dtype's suffix; `op` names the op
// in the error.
inline Status typedFunction(CudaDevice &device, const std::string &op,
                            const std::string &base, DType t, CUfunction &out) {
  std::string suffix = floatSuffix(t);
  if (suffix.empty())
    return Status::error(op + ": no CUDA kernel for dtype " +
                         std::string(name(t)));
  std::string name = base + "_" + suffix;
  return device.function(name.c_str(), out).withContext(op);
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDNNFAMILY_H
