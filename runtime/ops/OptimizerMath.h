//===- OptimizerMath.h - update formula pieces both backends compile ------===//
//
// What the CPU update loops (cpu/Optimizers.cpp) and the CUDA update kernels
// (cuda/kernels/Optimizers.cu) compute alike, as host/device functions.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_OPTIMIZERMATH_H
#define AMPC_RUNTIME_OPS_OPTIMIZERMATH_H

#include "runtime/ops/HostDevice.h"

namespace ampc::rt::ops {

// The gradient g with the L2 term c * p of the parameter added (ONNX's
// norm_coefficient, PyTorch's coupled weight_decay), or g itself when c is
// 0: PyTorch then adds nothing, and 0 * p would be NaN for an infinite
// parameter (an infinite frozen entry of a tensor whose others are
// trained, or any state a caller keeps infinite on purpose).
template <typename T> AMPC_HOST_DEVICE T withL2(T g, T c, T p) {
  return c != T(0) ? g + c * p : g;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_OPTIMIZERMATH_H
