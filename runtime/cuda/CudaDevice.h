//===- CudaDevice.h - one GPU, its context, libraries and kernels ---------===//
//
// Shared by every session on the GPU: the primary context, the cuBLASLt
// handle, the cuDNN handle (created when a convolution first needs it), and
// our own kernels, loaded from the fatbins embedded at
// build time (sm_90 code plus compute_90 PTX the driver compiles for other
// GPUs). Device memory goes through allocate()/release() so the device can
// report what ampc holds and its peak.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDADEVICE_H
#define AMPC_RUNTIME_CUDA_CUDADEVICE_H

#include "runtime/cuda/CudaApi.h"

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace ampc::rt::cuda {

class CudaDevice {
public:
  // Opens GPU `ordinal` once per process; later calls share it. The error
  // says why CUDA cannot be used here (CudaApi.h) or that the ordinal is
  // out of range.
  static Status open(int ordinal, std::shared_ptr<CudaDevice> &out);
  ~CudaDevice();

  const CudaApi &api() const { return *api_; }
  int ordinal() const { return ordinal_; }
  const std::string &name() const { return name_; }
  int computeCapability() const { return cc_; } // 90 for sm_90
  int multiprocessors() const { return sms_; }
  uint64_t totalBytes() const { return total_; }
  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, 79.1 GiB)".
  std::string describe() const;

  // Makes the device's context current on the calling thread: every entry
  // point that may run on a new thread calls it first.
  Status makeCurrent() const;
  // One of our kernels by its extern "C" name.
  Status function(const char *name, CUfunction &out);
  cublasLtHandle_t cublasLt() const { return lt_; }
  // The cuDNN handle, created on first use: loads cuDNN (loadCudnn) and
  // calls cudnnCreate once per device, thread-safely; later calls return
  // the first outcome. The error says why cuDNN cannot be used (the
  // library, where it was looked for, or cudnnCreate's status).
  Status cudnn(cudnnHandle_t &out);

  // Device memory; failure names what it was for and the free bytes.
  Status allocate(size_t bytes, const std::string &what, CUdeviceptr &out);
  void release(CUdeviceptr ptr, size_t bytes);
  uint64_t heldBytes() const { return held_; }
  uint64_t peakBytes() const { return peak_; }
  Status freeBytes(uint64_t &free) const;

private:
  CudaDevice() = default;
  Status init(int ordinal);
  Status createCudnn();

  const CudaApi *api_ = nullptr;
  int ordinal_ = 0;
  CUdevice dev_ = 0;
  CUcontext ctx_ = nullptr;
  std::string name_;
  int cc_ = 0, sms_ = 0;
  uint64_t total_ = 0;
  std::vector<CUmodule> modules_;
  std::mutex mu_;
  std::map<std::string, CUfunction> functions_;
  cublasLtHandle_t lt_ = nullptr;
  cudnnHandle_t dnn_ = nullptr;
  std::once_flag dnnOnce_;
  Status dnnStatus_;
  std::atomic<uint64_t> held_{0}, peak_{0};
};

// Device memory owned by whoever holds it (a session's arena, a kernel's
// table of pointers).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  DeviceBuffer(DeviceBuffer &&o) noexcept { *this = std::move(o); }
  DeviceBuffer &operator=(DeviceBuffer &&o) noexcept;
  ~DeviceBuffer() { reset(); }

  Status allocate(CudaDevice &device, size_t bytes, const std::string &what);
  // Allocates and copies `bytes` of host memory in (synchronously).
  Status upload(CudaDevice &device, const void *data, size_t bytes,
                const std::string &what);
  void reset();
  CUdeviceptr get() const { return ptr_; }
  size_t size() const { return bytes_; }

private:
  CudaDevice *device_ = nullptr;
  CUdeviceptr ptr_ = 0;
  size_t bytes_ = 0;
};

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDADEVICE_H
