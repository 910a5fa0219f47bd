//===- CpuSession.h - the CPU executor ------------------------------------===//
//
// Kernel calls are built once, when the session is created (the arena does
// not move), so a run is a loop of kernel calls with nothing to look up.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPUSESSION_H
#define AMPC_RUNTIME_CPUSESSION_H

#include "runtime/Session.h"

namespace ampc::rt {

namespace cpu {
class ThreadPool;
}

class CpuSession final : public Session {
public:
  static Status create(FunctionInfo fn, const SessionOptions &options,
                       std::unique_ptr<Session> &out);
  ~CpuSession() override;

  Status setInput(const std::string &name, const TensorView &value) override;
  Status run() override;
  Status output(const std::string &name, TensorView &out) const override;
  Status param(const std::string &name, TensorView &out) const override;
  Status setParam(const std::string &name, const TensorView &value) override;
  std::string deviceName() const override;
  uint64_t deviceBytes() const override { return heldBytes_; }

private:
  explicit CpuSession(FunctionInfo fn);
  TensorView view(int value) const override;
  Status hostView(const TensorView &device, TensorView &host) const override {
    host = device; // kernels run in host memory
    return Status::ok();
  }

  std::unique_ptr<uint8_t[], void (*)(void *)> arena_{nullptr, nullptr};
  std::vector<UpdateCopy> updateCopies_;
  std::unique_ptr<uint8_t[]> staging_;
  size_t stagingBytes_ = 0;
  uint64_t heldBytes_ = 0; // arena and staging, counted process-wide
  std::unique_ptr<cpu::ThreadPool> pool_;
  std::shared_ptr<Collective> collective_; // SessionOptions::collective
};

} // namespace ampc::rt

#endif // AMPC_RUNTIME_CPUSESSION_H
