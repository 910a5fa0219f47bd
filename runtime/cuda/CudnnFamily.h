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
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"

#include <string>
#include <vector>

namespace ampc::rt::cuda {

void addCudnnConvolutionKernels(std::vector<KernelEntry> &out);
void addBatchNormKernels(std::vector<KernelEntry> &out);
void addPoolingKernels(std::vector<KernelEntry> &out);

// Looks up our kernel `k` for dtype `t`, then `compute` when given ("c32"
// or "c64"); our kernels exist for float dtypes only. `op` names the op in
// the error.
inline Status typedFunction(CudaDevice &device, const std::string &op,
                            CudaKernel k, DType t, CUfunction &out,
                            const char *compute = nullptr) {
  if (!isFloat(t))
    return Status::error(op + ": no CUDA kernel for dtype " +
                         std::string(name(t)));
  Status s = compute ? kernelFunction(device, k, {name(t), compute}, out)
                     : kernelFunction(device, k, {name(t)}, out);
  return s.withContext(op);
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDNNFAMILY_H
