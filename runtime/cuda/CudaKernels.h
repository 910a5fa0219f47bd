//===- CudaKernels.h - the CUDA backend's kernels -------------------------===//
//
// The kernel ops of runtime/ops (Ops.def, Elementwise.def), taking an
// ops::OpCall whose TensorView::data are device addresses. A call is
// checked by ops::checkKernel and then prepared once, when the session is
// created: descriptors built, algorithms chosen, kernels looked up, tables
// uploaded. A prepared kernel only launches on the stream, so a whole step
// can be captured into a CUDA graph and replayed: launch() must not
// allocate, synchronize, or read device memory on the host.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDAKERNELS_H
#define AMPC_RUNTIME_CUDA_CUDAKERNELS_H

#include "runtime/cuda/CudaDevice.h"
#include "runtime/ops/OpCall.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ampc::rt::cuda {

class NcclCommunicator;
struct ExchangeBucket; // Collectives.cpp

struct PrepareContext {
  CudaDevice &device;
  // GEMMs in f32 may use TF32 Tensor Cores (SessionOptions::allowTf32).
  bool allowTf32 = false;
  // The scratch every kernel shares (one stream: one kernel at a time).
  // A kernel that needs scratch raises this to its size; launch() then gets
  // at least that many bytes.
  size_t workspaceBytes = 0;
  void requestWorkspace(size_t bytes) {
    if (bytes > workspaceBytes)
      workspaceBytes = bytes;
  }
  // Data parallelism: the session's communicator (null in one process),
  // and the buckets its all_reduce_start calls prepared, by exchange
  // buffer, for their all_reduce_wait.
  NcclCommunicator *nccl = nullptr;
  std::map<CUdeviceptr, std::shared_ptr<ExchangeBucket>> exchanges;
};

struct LaunchContext {
  CudaDevice &device;
  CUstream stream = nullptr;
  CUdeviceptr workspace = 0;
  size_t workspaceBytes = 0;
  // A u64 on the device: the session's runs so far, written before each
  // run (dropout draws a fresh mask per step from it).
  CUdeviceptr stepCounter = 0;
};

class PreparedKernel {
public:
  virtual ~PreparedKernel() = default;
  virtual Status launch(const LaunchContext &ctx) = 0;
  // Device memory the kernel holds itself (tables, descriptors' state).
  virtual size_t deviceBytes() const { return 0; }
};

struct KernelEntry {
  const char *name;
  // Prepares `calls`: one call, or for a `groupable` op several calls of
  // it that follow each other in the step and that canGroup accepted (one
  // launch for all: the multi-tensor optimizer updates). Every call passed
  // ops::checkKernel already.
  Status (*prepare)(const std::vector<const ops::OpCall *> &calls,
                    PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out);
  // May `next` join a group that starts with `first`? Null: never.
  bool (*canGroup)(const ops::OpCall &first, const ops::OpCall &next) = nullptr;
};

// Family registration (one file each under runtime/cuda/).
void addElementwiseKernels(std::vector<KernelEntry> &out); // + "fused"
void addMovementKernels(std::vector<KernelEntry> &out);
void addGemmKernels(std::vector<KernelEntry> &out);        // cuBLASLt
void addCudnnKernels(std::vector<KernelEntry> &out);       // conv, bn, pool
void addNormalizationKernels(std::vector<KernelEntry> &out);
void addLossKernels(std::vector<KernelEntry> &out);
void addReductionKernels(std::vector<KernelEntry> &out);
void addScanKernels(std::vector<KernelEntry> &out); // arg_max, cumsum, top_k
void addOptimizerKernels(std::vector<KernelEntry> &out);
void addCollectiveKernels(std::vector<KernelEntry> &out); // NCCL

// Null when the CUDA backend has no kernel for `op`.
const KernelEntry *findKernel(const std::string &op);
std::vector<std::string> kernelNames();

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDAKERNELS_H
