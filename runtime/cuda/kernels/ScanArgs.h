//===- ScanArgs.h - the argument of arg_max, cumsum and top_k -------------===//
//
// Shared by the host (runtime/cuda/Scan.cpp) and the device
// (kernels/Scan.cu): the input as [outer, len, inner]
// (runtime/ops/AxisPlan.h) and the op's attributes. Plain C++.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_KERNELS_SCANARGS_H
#define AMPC_RUNTIME_CUDA_KERNELS_SCANARGS_H

#include <stdint.h>

namespace ampc_cuda {

struct ScanArgs {
  int64_t outer, len, inner;
  int64_t k; // top_k: values kept along the axis
  int flag0; // cumsum: exclusive; arg_max: select_last_index;
             // top_k: largest
  int flag1; // cumsum: reverse
};

} // namespace ampc_cuda

#endif // AMPC_RUNTIME_CUDA_KERNELS_SCANARGS_H
