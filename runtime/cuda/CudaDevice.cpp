//===- CudaDevice.cpp - opening a GPU -------------------------------------===//
#include "runtime/cuda/CudaDevice.h"

#include "runtime/ByteSize.h"
#include "runtime/cuda/CudaModules.h"

#include <cstdio>

namespace ampc::rt::cuda {

Status CudaDevice::open(int ordinal, std::shared_ptr<CudaDevice> &out) {
  static std::mutex mu;
  // Never destroyed: at exit the driver may be torn down before a static
  // map's destructor would release handles into it.
  static auto *opened = new std::map<int, std::shared_ptr<CudaDevice>>;
  std::lock_guard<std::mutex> lock(mu);
  if (auto it = opened->find(ordinal); it != opened->end()) {
    out = it->second;
    return it->second->makeCurrent();
  }
  std::shared_ptr<CudaDevice> d(new CudaDevice);
  AMPC_RETURN_IF_ERROR(d->init(ordinal));
  (*opened)[ordinal] = d;
  out = d;
  return Status::ok();
}

Status CudaDevice::init(int ordinal) {
  AMPC_RETURN_IF_ERROR(loadCudaApi(api_));
  const CudaApi &api = *api_;
  int count = 0;
  AMPC_CU_CHECK(api, cuDeviceGetCount(&count));
  if (ordinal < 0 || ordinal >= count)
    return Status::error("there is no CUDA device " + std::to_string(ordinal) +
                         " (this machine has " + std::to_string(count) +
                         ", numbered from 0)");
  ordinal_ = ordinal;
  AMPC_CU_CHECK(api, cuDeviceGet(&dev_, ordinal));
  char name[256] = {0};
  AMPC_CU_CHECK(api, cuDeviceGetName(name, sizeof(name) - 1, dev_));
  name_ = name;
  int major = 0, minor = 0;
  AMPC_CU_CHECK(
      api, cuDeviceGetAttribute(
               &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev_));
  AMPC_CU_CHECK(
      api, cuDeviceGetAttribute(
               &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev_));
  cc_ = major * 10 + minor;
  AMPC_CU_CHECK(
      api, cuDeviceGetAttribute(&sms_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                dev_));
  size_t total = 0;
  AMPC_CU_CHECK(api, cuDeviceTotalMem(&total, dev_));
  total_ = total;
  // The compute_90 PTX runs on sm_90 and later only; say so rather than
  // fail at the first kernel.
  if (cc_ < 90)
    return Status::error("CUDA device " + std::to_string(ordinal) + " (" +
                         name_ + ") is sm_" + std::to_string(cc_) +
                         "; the CUDA backend is built for sm_90 (Hopper) and "
                         "later");
  AMPC_CU_CHECK(api, cuDevicePrimaryCtxRetain(&ctx_, dev_));
  AMPC_RETURN_IF_ERROR(makeCurrent());
  for (size_t i = 0; i < kCudaModuleCount; ++i) {
    CUmodule m = nullptr;
    CUresult r = api.cuModuleLoadData(&m, kCudaModules[i].image);
    if (r != CUDA_SUCCESS)
      return cuError(api, r,
                     ("cuModuleLoadData(kernels/" +
                      std::string(kCudaModules[i].name) + ".cu)")
                         .c_str());
    modules_.push_back(m);
  }
  AMPC_CUBLAS_CHECK(api, cublasLtCreate(&lt_));
  return Status::ok();
}

Status CudaDevice::cudnn(cudnnHandle_t &out) {
  std::call_once(dnnOnce_, [this] { dnnStatus_ = createCudnn(); });
  AMPC_RETURN_IF_ERROR(dnnStatus_);
  out = dnn_;
  return Status::ok();
}

Status CudaDevice::createCudnn() {
  const CudaApi *api = nullptr;
  AMPC_RETURN_IF_ERROR(loadCudnn(api));
  // cudnnCreate binds the handle to the current context.
  AMPC_RETURN_IF_ERROR(makeCurrent());
  cudnnHandle_t h = nullptr;
  cudnnStatus_t r = api->cudnnCreate(&h);
  // The first cuDNN call that loads its sub-libraries (a version mismatch
  // between copies of cuDNN shows here): name the copy that was used.
  if (r != CUDNN_STATUS_SUCCESS)
    return cudnnError(*api, r, "cudnnCreate")
        .withContext("cuDNN 9 at " + std::string(api->cudnnPath) +
                     " cannot be initialized on CUDA device " +
                     std::to_string(ordinal_));
  dnn_ = h;
  return Status::ok();
}

CudaDevice::~CudaDevice() {
  if (!api_)
    return;
  // Process exit: the driver may already be shutting down, so results are
  // not looked at.
  if (dnn_)
    api_->cudnnDestroy(dnn_);
  if (lt_)
    api_->cublasLtDestroy(lt_);
  for (CUmodule m : modules_)
    api_->cuModuleUnload(m);
  if (ctx_)
    api_->cuDevicePrimaryCtxRelease(dev_);
}

std::string CudaDevice::describe() const {
  return name_ + " (sm_" + std::to_string(cc_) + ", " + std::to_string(sms_) +
         " SMs, " + formatBytes(total_) + ")";
}

Status CudaDevice::makeCurrent() const {
  AMPC_CU_CHECK(*api_, cuCtxSetCurrent(ctx_));
  return Status::ok();
}

Status CudaDevice::function(const char *name, CUfunction &out) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = functions_.find(name); it != functions_.end()) {
    out = it->second;
    return Status::ok();
  }
  for (CUmodule m : modules_) {
    CUfunction f = nullptr;
    CUresult r = api_->cuModuleGetFunction(&f, m, name);
    if (r == CUDA_SUCCESS) {
      functions_[name] = f;
      out = f;
      return Status::ok();
    }
    if (r != CUDA_ERROR_NOT_FOUND)
      return cuError(
          *api_, r, ("cuModuleGetFunction(" + std::string(name) + ")").c_str());
  }
  return Status::error("the CUDA backend has no kernel '" + std::string(name) +
                       "' in its embedded modules (a build of mismatched "
                       "kernels/*.cu)");
}

Status CudaDevice::freeBytes(uint64_t &free) const {
  size_t f = 0, t = 0;
  AMPC_CU_CHECK(*api_, cuMemGetInfo(&f, &t));
  free = f;
  return Status::ok();
}

Status CudaDevice::allocate(size_t bytes, const std::string &what,
                            CUdeviceptr &out) {
  out = 0;
  CUresult r = api_->cuMemAlloc(&out, bytes ? bytes : 1);
  if (r == CUDA_ERROR_OUT_OF_MEMORY) {
    uint64_t free = 0;
    std::string freeText =
        freeBytes(free) ? describeBytes(free) + " free" : "unknown free";
    return Status::error("cannot allocate " + describeBytes(bytes) + " for " +
                         what + " on CUDA device " + std::to_string(ordinal_) +
                         " (" + name_ + "): out of memory, " + freeText +
                         " of " + describeBytes(total_));
  }
  if (r != CUDA_SUCCESS)
    return cuError(*api_, r, ("cuMemAlloc for " + what).c_str());
  uint64_t now = held_ += bytes;
  uint64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
  return Status::ok();
}

void CudaDevice::release(CUdeviceptr ptr, size_t bytes) {
  if (!ptr)
    return;
  api_->cuMemFree(ptr);
  held_ -= bytes;
}

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&o) noexcept {
  if (this != &o) {
    reset();
    device_ = o.device_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.device_ = nullptr;
    o.ptr_ = 0;
    o.bytes_ = 0;
  }
  return *this;
}

Status DeviceBuffer::allocate(CudaDevice &device, size_t bytes,
                              const std::string &what) {
  reset();
  AMPC_RETURN_IF_ERROR(device.allocate(bytes, what, ptr_));
  device_ = &device;
  bytes_ = bytes;
  return Status::ok();
}

Status DeviceBuffer::upload(CudaDevice &device, const void *data, size_t bytes,
                            const std::string &what) {
  AMPC_RETURN_IF_ERROR(allocate(device, bytes, what));
  if (bytes)
    AMPC_CU_CHECK(device.api(), cuMemcpyHtoD(ptr_, data, bytes));
  return Status::ok();
}

void DeviceBuffer::reset() {
  if (device_)
    device_->release(ptr_, bytes_);
  device_ = nullptr;
  ptr_ = 0;
  bytes_ = 0;
}

} // namespace ampc::rt::cuda
