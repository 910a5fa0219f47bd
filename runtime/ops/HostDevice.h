//===- HostDevice.h - functions both backends compile ---------------------===//
//
// AMPC_HOST_DEVICE marks an inline function of runtime/ops that the CPU
// backend (a C++ compiler) and the CUDA kernels (nvcc) both compile, so the
// two compute a value by one definition.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_HOSTDEVICE_H
#define AMPC_RUNTIME_OPS_HOSTDEVICE_H

#ifdef __CUDACC__
#define AMPC_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define AMPC_HOST_DEVICE inline
#endif

#endif // AMPC_RUNTIME_OPS_HOSTDEVICE_H
