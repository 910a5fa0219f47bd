//===- Session.h - runs one function of a Program -------------------------===//
//
// A Session owns the arena of one function: it checks every kernel against
// its backend when created, initializes the parameters once, takes inputs,
// runs the kernels in order and exposes outputs as views of its memory.
// On request it also finds the kernel where inf or NaN first appeared.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_SESSION_H
#define AMPC_RUNTIME_SESSION_H

#include "runtime/Program.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ampc::rt {

namespace cpu {
class ThreadPool;
}

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
  std::string device = "cpu";
  // 0: every hardware thread. A count the pool cannot start (above
  // cpu::ThreadPool::kMaxThreads, or beyond the system's limits) is an
  // error of create().
  unsigned threads = 0;
  // Bytes the device may hold for this process's sessions together; 0: what
  // it has (for the CPU, hostMemory()). A session whose arena and update
  // staging do not fit beside the live ones is refused by create().
  uint64_t memoryLimit = 0;
};

class Session {
public:
  // Takes the function by value: move it in so the weights are not held
  // twice. Parameters' initial values move into the arena.
  static Status create(FunctionInfo fn, const SessionOptions &options,
                       std::unique_ptr<Session> &out);
  ~Session();

  const FunctionInfo &function() const { return fn_; }
  // The type a named input must have (for messages and for readers).
  Status inputType(const std::string &name, TensorView &type) const;
  // Copies `value` into the input's bytes; dtype and shape must match.
  Status setInput(const std::string &name, const TensorView &value);
  // Runs every kernel once. Every input must have been set since the last
  // run (the memory plan may reuse an input's bytes once it is read).
  Status run();
  // A view of an output's bytes, valid until the next run.
  Status output(const std::string &name, TensorView &out) const;
  // A view of a parameter's bytes (after a training run: its new value),
  // valid until the next run.
  Status param(const std::string &name, TensorView &out) const;
  // Overwrites a parameter (a checkpoint being restored); dtype and shape
  // must match.
  Status setParam(const std::string &name, const TensorView &value);
  uint64_t runs() const { return runs_; }

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

private:
  explicit Session(FunctionInfo fn);
  TensorView view(int value) const;
  const BindingInfo *findParam(const std::string &name) const;
  // The probe's look at kernel `k`'s float inputs: those its outputs may
  // overwrite (read before it runs) or the others (read after).
  bool inputsNonFinite(size_t k, bool overwritten) const;
  // Records the first non-finite output of kernel `k`, if it is news.
  void probeOutputs(size_t k, bool inputsBad);

  FunctionInfo fn_;
  std::unique_ptr<uint8_t[], void (*)(void *)> arena_{nullptr, nullptr};
  std::vector<cpu::OpCall> calls_;
  std::vector<bool> inputSet_;
  // Parameters whose new value is copied into place after a run.
  struct UpdateCopy {
    int param;          // index in fn_.params
    bool staged;        // the value is another parameter: copied via staging_
    size_t stageOffset; // into staging_
  };
  std::vector<UpdateCopy> updateCopies_;
  std::unique_ptr<uint8_t[]> staging_;
  size_t stagingBytes_ = 0;
  uint64_t heldBytes_ = 0; // arena and staging, counted process-wide
  std::unique_ptr<cpu::ThreadPool> pool_;
  uint64_t runs_ = 0;
  bool probe_ = false;
  std::optional<NonFiniteReport> nonFinite_;
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_SESSION_H
