//===- StepList.h - a prepared kernel that is a fixed list of launches ----===//
//
// Movement.cpp and Reduction.cpp prepare each op into a list of kernel
// launches and memsets whose arguments are all known at session creation,
// except the shared workspace and the step counter, which LaunchContext
// gives at each launch: those arguments are patched in as the list runs.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CUDA_STEPLIST_H
#define AMPC_RUNTIME_CUDA_STEPLIST_H

#include "runtime/cuda/Launch.h"

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace ampc::rt::cuda {

class StepList : public PreparedKernel {
public:
  // Starts a launch of `fn` (named `what` in errors); add its arguments in
  // order with arg / workspaceArg / stepCounterArg.
  void kernel(CUfunction fn, const LaunchDims &dims, std::string what) {
    Step s;
    s.kind = Step::Kernel;
    s.fn = fn;
    s.dims = dims;
    s.what = std::move(what);
    steps_.push_back(std::move(s));
  }
  template <typename T> void arg(const T &v) {
    Arg a;
    a.bytes.resize(sizeof(T));
    std::memcpy(a.bytes.data(), &v, sizeof(T));
    steps_.back().args.push_back(std::move(a));
  }
  // The workspace address plus `offset` bytes.
  void workspaceArg(size_t offset) {
    arg(CUdeviceptr(0));
    steps_.back().args.back().source = Arg::Workspace;
    steps_.back().args.back().offset = offset;
  }
  void stepCounterArg() {
    arg(CUdeviceptr(0));
    steps_.back().args.back().source = Arg::StepCounter;
  }
  // Sets `words` 32-bit words to `value`, at `ptr`, or at the workspace
  // plus `offset` bytes when `ptr` is 0.
  void memset32(CUdeviceptr ptr, size_t offset, size_t words, unsigned value) {
    Step s;
    s.kind = Step::Memset32;
    s.ptr = ptr;
    s.offset = offset;
    s.count = words;
    s.value = value;
    steps_.push_back(std::move(s));
  }
  void memset8(CUdeviceptr ptr, size_t bytes) {
    Step s;
    s.kind = Step::Memset8;
    s.ptr = ptr;
    s.count = bytes;
    steps_.push_back(std::move(s));
  }
  void memcpy(CUdeviceptr dst, CUdeviceptr src, size_t bytes) {
    Step s;
    s.kind = Step::Memcpy;
    s.ptr = dst;
    s.src = src;
    s.count = bytes;
    steps_.push_back(std::move(s));
  }

  Status launch(const LaunchContext &ctx) override {
    const CudaApi &api = ctx.device.api();
    for (Step &s : steps_) {
      switch (s.kind) {
      case Step::Kernel: {
        if (s.ptrs.size() != s.args.size()) {
          s.ptrs.clear();
          for (Arg &a : s.args)
            s.ptrs.push_back(a.bytes.data());
        }
        for (Arg &a : s.args) {
          CUdeviceptr p = 0;
          if (a.source == Arg::Workspace)
            p = ctx.workspace + a.offset;
          else if (a.source == Arg::StepCounter)
            p = ctx.stepCounter;
          else
            continue;
          std::memcpy(a.bytes.data(), &p, sizeof(p));
        }
        AMPC_RETURN_IF_ERROR(
            launchKernel(ctx, s.fn, s.dims, s.ptrs.data(), s.what.c_str()));
        break;
      }
      case Step::Memset32: {
        CUdeviceptr p = s.ptr ? s.ptr : ctx.workspace + s.offset;
        AMPC_CU_CHECK(api, cuMemsetD32Async(p, s.value, s.count, ctx.stream));
        break;
      }
      case Step::Memset8:
        AMPC_CU_CHECK(api, cuMemsetD8Async(s.ptr, 0, s.count, ctx.stream));
        break;
      case Step::Memcpy:
        AMPC_CU_CHECK(api,
                      cuMemcpyDtoDAsync(s.ptr, s.src, s.count, ctx.stream));
        break;
      }
    }
    return Status::ok();
  }

private:
  struct Arg {
    enum Source { Value, Workspace, StepCounter } source = Value;
    size_t offset = 0;
    std::vector<unsigned char> bytes;
  };
  struct Step {
    enum Kind { Kernel, Memset32, Memset8, Memcpy } kind = Kernel;
    CUfunction fn = nullptr;
    LaunchDims dims;
    std::string what;
    std::vector<Arg> args;
    std::vector<void *> ptrs;
    CUdeviceptr ptr = 0, src = 0;
    size_t offset = 0, count = 0;
    unsigned value = 0;
  };
  std::vector<Step> steps_;
};

using PrepareFn = Status (*)(const ops::OpCall &, PrepareContext &, StepList &);

// A KernelEntry::prepare for ops that are never grouped, from a function
// that fills a StepList.
template <PrepareFn F>
Status prepareOne(const std::vector<const ops::OpCall *> &calls,
                  PrepareContext &ctx, std::unique_ptr<PreparedKernel> &out) {
  if (calls.size() != 1)
    return Status::error(calls.empty()
                             ? std::string("no call to prepare")
                             : calls[0]->op + ": cannot be grouped, got " +
                                   std::to_string(calls.size()) + " calls");
  auto steps = std::make_unique<StepList>();
  AMPC_RETURN_IF_ERROR(F(*calls[0], ctx, *steps));
  out = std::move(steps);
  return Status::ok();
}

} // namespace ampc::rt::cuda

#endif // AMPC_RUNTIME_CUDA_STEPLIST_H
