//===- Session.h - runs one function of a Program -------------------------===//
//
// A Session owns the arena of one function: it checks every kernel against
// its backend when created, initializes the parameters once, takes inputs,
// runs the kernels in order and exposes outputs as views of its memory.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_SESSION_H
#define AMPC_RUNTIME_SESSION_H

#include "runtime/Program.h"

#include <memory>
#include <string>
#include <vector>

namespace ampc::rt {

namespace cpu {
class ThreadPool;
}

struct SessionOptions {
  std::string device = "cpu";
  unsigned threads = 0; // 0: every hardware thread
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

private:
  explicit Session(FunctionInfo fn);
  TensorView view(int value) const;
  const BindingInfo *findParam(const std::string &name) const;

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
  std::vector<uint8_t> staging_;
  size_t stagingBytes_ = 0;
  std::unique_ptr<cpu::ThreadPool> pool_;
  uint64_t runs_ = 0;
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_SESSION_H
