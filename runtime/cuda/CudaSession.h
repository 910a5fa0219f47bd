//===- CudaSession.h - the GPU executor -----------------------------------===//
//
// The function's arena is one device allocation, its constants another.
// Kernels are checked by the CPU backend's checker (same Program, same
// rules) and prepared once; consecutive calls an op can group (the
// optimizer updates) become one multi-tensor launch. The first run
// launches kernel by kernel, the second captures the step, update copies
// included, into a CUDA graph that every later run replays; where the
// capture, the instantiation or the first replay fails, one warning says
// why and every run goes kernel by kernel (AMPC_CUDA_GRAPH=0: from the
// start). Nothing in a run waits for the GPU: output() and param() do, and
// report a failure of the device there. A data-parallel step (all_reduce
// kernels) exchanges its gradients over NCCL with the launch's other ranks
// (NcclCommunicator.h); its waits then give up after the collective's
// timeout, failing the communicator (aborted when the session closes,
// after its graphs), instead of waiting forever for a rank that died.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_CUDASESSION_H
#define AMPC_RUNTIME_CUDA_CUDASESSION_H

#include "runtime/Session.h"
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/NcclCommunicator.h"

#include <map>

namespace ampc::rt::cuda {

class CudaSession final : public Session {
public:
  static Status create(FunctionInfo fn, int ordinal,
                       const SessionOptions &options,
                       std::unique_ptr<Session> &out);
  ~CudaSession() override;

  Status setInput(const std::string &name, const TensorView &value) override;
  Status waitForInputs() override { return sync("the inputs' copies"); }
  Status run() override;
  Status output(const std::string &name, TensorView &out) const override;
  Status param(const std::string &name, TensorView &out) const override;
  Status setParam(const std::string &name, const TensorView &value) override;
  std::string deviceName() const override;
  uint64_t deviceBytes() const override;
  uint64_t peakDeviceBytes() const override { return device_->peakBytes(); }

private:
  CudaSession(FunctionInfo fn, std::shared_ptr<CudaDevice> device);
  TensorView view(int value) const override; // device address
  Status hostView(const TensorView &device, TensorView &host) const override;
  Status prepareKernels(const SessionOptions &options);
  // The NCCL communicator of a data-parallel step's ranks, when the step
  // exchanges and the launch has several ranks.
  Status joinExchanges(const SessionOptions &options);
  Status enqueueStep(); // every kernel and update copy
  Status runProbed();   // kernel by kernel, probing
  // Captures the step and launches the graph; falls back to enqueueStep()
  // for good, with one warning, where the graph machinery fails (or, with
  // NCCL, where any rank has graphs off or fails to capture). Called once,
  // on the first run after run 0 that is not probed (probed runs go kernel
  // by kernel on every rank alike).
  Status captureAndLaunch();
  // Whether `yes` holds on every rank of ncclRanks_ (one MPI sum); every
  // rank must call it at the same point.
  Status allRanks(bool &yes);
  // Captures the step into graph_ and instantiates graphExec_, or says in
  // `failedAt` which call failed; an error is a stream left capturing.
  Status captureStep(std::string &failedAt);
  Status enqueueUpdateCopies();
  Status readBack(const TensorView &deviceView, const std::string &key,
                  TensorView &out) const; // waits, then copies to the host
  Status sync(const char *what) const;

  std::shared_ptr<CudaDevice> device_;
  std::unique_ptr<NcclCommunicator> nccl_;
  // The launch's ranks, when nccl_ is: how they agree on graphs.
  std::shared_ptr<Collective> ncclRanks_;
  CUstream stream_ = nullptr;
  DeviceBuffer arena_, constants_, staging_, workspace_, stepCounter_;
  std::vector<size_t> constantOffset_;
  struct Launch {
    std::unique_ptr<PreparedKernel> kernel;
    size_t first, count; // the calls it runs (a group: several)
  };
  std::vector<Launch> launches_;
  std::vector<UpdateCopy> updateCopies_;
  size_t stagingBytes_ = 0;
  CUgraph graph_ = nullptr;
  CUgraphExec graphExec_ = nullptr;
  bool useGraph_ = true;
  bool captureTried_ = false; // captureAndLaunch ran (once, on run 1)
  // AMPC_CUDA_GRAPH=test-fallback: the capture fails on purpose.
  bool breakCapture_ = false;
  uint64_t counterHost_ = 0; // the source of the step counter's copy
  // Host copies handed out by output() and param(), by binding name.
  mutable std::map<std::string, std::vector<uint8_t>> host_;
  mutable std::vector<uint8_t> probeScratch_; // hostView()'s copy
};

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_CUDASESSION_H
