//===- Session.h - runs one function of a Program -------------------------===//
//
// A Session owns the memory of one function on one device: it checks every
// kernel against its backend when created, initializes the parameters once,
// takes inputs, runs the kernels in order and exposes outputs. On request
// it also finds the kernel where inf or NaN first appeared. The CPU
// executor is CpuSession.cpp, the GPU's cuda/CudaSession.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_SESSION_H
#define AMPC_RUNTIME_SESSION_H

#include "runtime/Collective.h"
#include "runtime/Program.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

// A kernel output holding inf or NaN, found by the non-finite probe.
struct NonFiniteReport {
  size_t kernel = 0;    // index in execution order
  std::string where;    // KernelInfo::describe: "kernel 37 (gemm at 'fc2')"
  size_t output = 0;    // which of the kernel's outputs
  int64_t elements = 0; // in that output
  int64_t infs = 0;     // of them
  int64_t nans = 0;     // of them
  bool inputsNonFinite = false; // propagated: a float input held inf or NaN
  // One line: "kernel 37 (gemm at 'fc2') output 0: 12 of 4096 elements are
  // inf", saying so when the kernel only passed on what it was given.
  std::string message() const;
};

struct SessionOptions {
  // "cpu", "cuda" (GPU 0) or "cuda:N".
  std::string device = "cpu";
  // CPU: 0 is every hardware thread. A count the pool cannot start (above
  // cpu::ThreadPool::kMaxThreads, or beyond the system's limits) is an
  // error of create().
  unsigned threads = 0;
  // Bytes the device may hold for this process's sessions together; 0: what
  // it has (for the CPU, hostMemory(); for a GPU, its free memory). A
  // session whose arena and update staging do not fit beside the live ones
  // is refused by create().
  uint64_t memoryLimit = 0;
  // CUDA: f32 GEMMs and convolutions may use TF32 Tensor Cores (10-bit
  // mantissa products, f32 accumulation), as torch.backends.cuda.matmul.
  // allow_tf32 does.
  bool allowTf32 = false;
  // CUDA: capture the step into a CUDA graph on its second run and replay
  // it (off: launch kernel by kernel, for debugging).
  bool cudaGraph = true;
  // The ranks of a data-parallel run, which a step's all_reduce_start/wait
  // kernels exchange gradients with (runtime/mpi); null: one process.
  std::shared_ptr<Collective> collective;
};

// The executor of one function on one device (CpuSession, CudaSession).
class Session {
public:
  // Takes the function by value: move it in so the weights are not held
  // twice. Parameters' initial values move into the device's memory. An
  // unknown device, or one this build or machine cannot use, is an error
  // naming the device and why.
  static Status create(FunctionInfo fn, const SessionOptions &options,
                       std::unique_ptr<Session> &out);
  // Checks that `device` names a device this build and machine can run on,
  // opening it (a GPU: its driver, libraries and context), and gives its
  // memory in bytes (the CPU: hostMemory(); 0 if unknown). Tools call it
  // before compiling, so a missing GPU is reported first, in one line.
  static Status openDevice(const std::string &device, uint64_t &memoryBytes);
  virtual ~Session();

  const FunctionInfo &function() const { return fn_; }
  // The type a named input must have (for messages and for readers).
  Status inputType(const std::string &name, TensorView &type) const;
  // Copies `value` (host memory) into the input's bytes; dtype and shape
  // must match.
  virtual Status setInput(const std::string &name, const TensorView &value) = 0;
  // Waits until the inputs set so far are in the device's memory. A GPU's
  // copies are asynchronous and queued before the step; the CPU's are done
  // when setInput returns. A host loop that times the copy of the batch
  // apart from the step (TrainLoop's input_ms) calls it between the two.
  virtual Status waitForInputs() { return Status::ok(); }
  // Runs every kernel once. Every input must have been set since the last
  // run (the memory plan may reuse an input's bytes once it is read).
  virtual Status run() = 0;
  // A host view of an output's bytes, valid until the next run or the next
  // call of output()/param() for the same name (a GPU session copies it
  // back, waiting for the run to finish).
  virtual Status output(const std::string &name, TensorView &out) const = 0;
  // A host view of a parameter's bytes (after a training run: its new
  // value), valid as output()'s.
  virtual Status param(const std::string &name, TensorView &out) const = 0;
  // Overwrites a parameter (a checkpoint being restored); dtype and shape
  // must match.
  virtual Status setParam(const std::string &name, const TensorView &value) = 0;
  uint64_t runs() const { return runs_; }

  // "cpu (8 threads)", "cuda:0 (NVIDIA H100 80GB HBM3, sm_90, ...)".
  virtual std::string deviceName() const = 0;
  // Bytes this session holds on its device: arena, staging, workspace and
  // kernels' own tables.
  virtual uint64_t deviceBytes() const = 0;
  // The most bytes ampc held on this session's device at once, over every
  // session of the process (a GPU counts its allocations; the CPU reports
  // deviceBytes()).
  virtual uint64_t peakDeviceBytes() const { return deviceBytes(); }

  // With the probe on, run() reads every float output after its kernel
  // (the results are unchanged) to find where inf or NaN first appeared:
  // the first kernel whose float inputs were all finite but whose output is
  // not, or else (every non-finite value came in through the function's
  // inputs, parameters or constants) the first kernel with a non-finite
  // output. Slow: for diagnosing a step that overflowed.
  void setNonFiniteProbe(bool on) { probe_ = on; }
  // What the probe found in the last run; empty when it was off or every
  // float output was finite.
  const std::optional<NonFiniteReport> &firstNonFinite() const {
    return nonFinite_;
  }

protected:
  explicit Session(FunctionInfo fn);
  const BindingInfo *findParam(const std::string &name) const;
  // The index of input `name` in fn_.inputs, or the error naming the known
  // inputs.
  Status findInput(const std::string &name, size_t &index) const;
  // The error for a run with an input not given since the last run.
  Status checkInputsSet() const;

  // A parameter whose new value is not planned in its own bytes is copied
  // into place after a run. A new value that is itself a parameter (state
  // that keeps the previous weights) is staged first: all updates happen
  // at once.
  struct UpdateCopy {
    int param;          // index in fn_.params
    bool staged;        // copied via the staging buffer
    size_t stageOffset; // into it
  };
  Status planUpdateCopies(std::vector<UpdateCopy> &copies,
                          size_t &stagingBytes) const;

  // Value `value` where the device's kernels see it.
  virtual TensorView view(int value) const = 0;
  // Builds calls_, one per kernel of fn_ over view(), each checked by the
  // CPU checker: every device runs the same Program under the same rules.
  Status buildCalls();

  // The probe, for any device. hostView() gives a host view of a device
  // tensor (the CPU: the tensor itself; a GPU waits for its stream and
  // copies into a scratch buffer valid until the next call).
  virtual Status hostView(const TensorView &device, TensorView &host) const = 0;
  // Whether a float input of calls_[k] held inf or NaN: the inputs its
  // outputs overwrite (overwritten) or the others.
  bool inputsNonFinite(size_t k, bool overwritten) const;
  // Records the first non-finite output of calls_[k], if it is news.
  void probeOutputs(size_t k, bool inputsBad);
  // Whether the probe still looks at kernels in this run.
  bool probing() const {
    return probe_ && (!nonFinite_ || nonFinite_->inputsNonFinite);
  }

  FunctionInfo fn_;
  std::vector<ops::OpCall> calls_; // one per kernel, in order
  std::vector<bool> inputSet_;
  uint64_t runs_ = 0;
  bool probe_ = false;
  std::optional<NonFiniteReport> nonFinite_;
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_SESSION_H
