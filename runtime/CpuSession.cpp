//===- CpuSession.cpp - the CPU executor ----------------------------------===//
#include "runtime/CpuSession.h"

#include "runtime/ByteSize.h"
#include "runtime/Collective.h"
#include "runtime/HostMemory.h"
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/Parallel.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ampc::rt {
namespace {

// Bytes the arenas and staging of this process's live CPU sessions hold: a
// second session (the evaluation step beside the training step) must fit
// beside the first.
std::atomic<uint64_t> gHeldBytes{0};

// Refuses a session whose arena and staging do not fit in what the device
// has beside the other sessions, before anything is allocated (an
// over-committed allocation would succeed and the kernel would kill the
// process on first touch instead). A session that fits has its bytes added
// to gHeldBytes in the same step, into `reserved`, so two sessions created
// at once cannot both fit in the same room.
Status checkFits(const std::string &function, uint64_t arena, uint64_t staging,
                 uint64_t limit, uint64_t &reserved) {
  MemoryLimit device;
  if (limit) {
    device.bytes = limit;
    device.source = "under the session's memory limit";
  } else {
    device = hostMemory();
  }
  uint64_t need;
  const bool overflows = __builtin_add_overflow(arena, staging, &need);
  if (!device.bytes) { // unknown: the allocation itself will tell
    gHeldBytes += need;
    reserved = need;
    return Status::ok();
  }
  uint64_t held = gHeldBytes.load();
  while (!overflows && need <= device.bytes && held <= device.bytes - need)
    if (gHeldBytes.compare_exchange_weak(held, held + need)) {
      reserved = need;
      return Status::ok();
    }
  std::string what = "arena of " + describeBytes(arena);
  if (staging)
    what += " and " + describeBytes(staging) + " to stage parameter updates";
  std::string m = what + " for function '" + function + "' " +
                  (staging ? "do" : "does") + " not fit: the CPU has " +
                  describeBytes(device.bytes) + " " + device.source;
  if (held)
    m += ", of which the process's other sessions hold " + describeBytes(held);
  return Status::error(m);
}

} // namespace

CpuSession::CpuSession(FunctionInfo fn) : Session(std::move(fn)) {}
CpuSession::~CpuSession() { gHeldBytes -= heldBytes_; }

TensorView CpuSession::view(int value) const {
  const ValueInfo &v = fn_.values[value];
  TensorView t;
  t.dtype = v.dtype;
  t.shape = v.shape;
  if (v.inArena)
    t.data = arena_.get() + v.offset;
  else
    t.data = const_cast<char *>(fn_.constants[v.constant].data());
  return t;
}

std::string CpuSession::deviceName() const {
  return "cpu (" + std::to_string(pool_ ? pool_->size() : 1) + " threads)";
}

Status CpuSession::create(FunctionInfo function, const SessionOptions &options,
                          std::unique_ptr<Session> &out) {
  std::unique_ptr<CpuSession> s(new CpuSession(std::move(function)));
  const FunctionInfo &fn = s->fn_;
  // Known before any allocation: the staging counts toward the memory the
  // session needs.
  AMPC_RETURN_IF_ERROR(s->planUpdateCopies(s->updateCopies_, s->stagingBytes_));
  // Arena sizes are at most 2^42 bytes (Program.cpp): no overflow here.
  uint64_t arenaBytes =
      std::max<uint64_t>(static_cast<uint64_t>(fn.arenaSize), 1);
  arenaBytes =
      (arenaBytes + kArenaAlignment - 1) / kArenaAlignment * kArenaAlignment;
  // From here on the destructor gives back what checkFits reserved.
  AMPC_RETURN_IF_ERROR(checkFits(fn.name, arenaBytes, s->stagingBytes_,
                                 options.memoryLimit, s->heldBytes_));
  void *mem = std::aligned_alloc(kArenaAlignment, arenaBytes);
  if (!mem)
    return Status::error("function '" + fn.name + "': cannot allocate its " +
                         describeBytes(arenaBytes) +
                         " arena: the allocation failed");
  // Zeroed so a kernel bug reading unwritten bytes is deterministic.
  std::memset(mem, 0, arenaBytes);
  s->arena_ = {static_cast<uint8_t *>(mem), std::free};
  if (s->stagingBytes_) {
    s->staging_.reset(new (std::nothrow) uint8_t[s->stagingBytes_]);
    if (!s->staging_)
      return Status::error("function '" + fn.name + "': cannot allocate " +
                           describeBytes(s->stagingBytes_) +
                           " to stage its parameter updates: the allocation "
                           "failed");
  }
  for (BindingInfo &p : s->fn_.params) {
    std::memcpy(s->arena_.get() + s->fn_.values[p.value].offset, p.init.data(),
                p.init.size());
    std::string().swap(p.init); // the arena holds the value now
  }
  s->pool_ = std::make_unique<cpu::ThreadPool>(options.threads);
  s->collective_ = options.collective;
  AMPC_RETURN_IF_ERROR(s->pool_->status());
  AMPC_RETURN_IF_ERROR(s->buildCalls());
  // oneDNN primitives are built here, once, never in run(), for the team
  // they will run on.
  cpu::setDnnlThreads(static_cast<int>(s->pool_->size()));
  for (size_t k = 0; k < s->calls_.size(); ++k)
    AMPC_RETURN_IF_ERROR(cpu::prepareKernel(s->calls_[k])
                             .withContext("function '" + fn.name +
                                          "': " + fn.kernels[k].describe(k)));
  out = std::move(s);
  return Status::ok();
}

Status CpuSession::setInput(const std::string &name, const TensorView &value) {
  size_t i = 0;
  AMPC_RETURN_IF_ERROR(findInput(name, i));
  TensorView dst = view(fn_.inputs[i].value);
  if (value.dtype != dst.dtype || value.shape != dst.shape)
    return Status::error("input '" + name + "' must be " + dst.typeStr() +
                         ", got " + value.typeStr());
  // A zero-element input may come with no buffer at all, and memcpy from
  // null is undefined even for zero bytes.
  if (size_t bytes = dst.byteSize())
    std::memcpy(dst.data, value.data, bytes);
  inputSet_[i] = true;
  return Status::ok();
}

Status CpuSession::run() {
  nonFinite_.reset();
  AMPC_RETURN_IF_ERROR(checkInputsSet());
  cpu::CpuContext ctx{pool_.get(), collective_.get()};
  // oneDNN's OpenMP team takes the cores the pool's threads take between
  // contractions: the same count.
  cpu::setDnnlThreads(static_cast<int>(pool_->size()));
  for (size_t k = 0; k < calls_.size(); ++k) {
    calls_[k].rngCounter = runs_;
    bool probe = probing();
    // Inputs the kernel writes over (in place) can only be read before.
    bool inputsBad = probe && inputsNonFinite(k, /*overwritten=*/true);
    // The context string is built only for an error: this loop is the step.
    if (Status st = cpu::runKernel(calls_[k], ctx); !st) {
      // An exchange started before the failure still writes into the
      // arena: it ends before run() returns.
      if (collective_)
        collective_->finishAll();
      return st.withContext("function '" + fn_.name +
                            "': " + fn_.kernels[k].describe(k));
    }
    if (probe)
      probeOutputs(k, inputsBad);
  }
  for (const UpdateCopy &c : updateCopies_)
    if (c.staged) {
      TensorView src = view(fn_.params[c.param].update);
      std::memcpy(staging_.get() + c.stageOffset, src.data, src.byteSize());
    }
  for (const UpdateCopy &c : updateCopies_) {
    const BindingInfo &p = fn_.params[c.param];
    TensorView dst = view(p.value), src = view(p.update);
    std::memmove(dst.data, c.staged ? staging_.get() + c.stageOffset : src.data,
                 dst.byteSize());
  }
  ++runs_;
  // The plan may reuse an input's bytes once it is read: inputs are given
  // again for every run.
  inputSet_.assign(inputSet_.size(), false);
  return Status::ok();
}

Status CpuSession::param(const std::string &name, TensorView &out) const {
  const BindingInfo *b = findParam(name);
  if (!b)
    return Status::error("the model has no parameter '" + name + "'");
  out = view(b->value);
  return Status::ok();
}

Status CpuSession::setParam(const std::string &name, const TensorView &value) {
  const BindingInfo *b = findParam(name);
  if (!b)
    return Status::error("the model has no parameter '" + name + "'");
  TensorView dst = view(b->value);
  if (value.dtype != dst.dtype || value.shape != dst.shape)
    return Status::error("parameter '" + name + "' must be " + dst.typeStr() +
                         ", got " + value.typeStr());
  if (size_t bytes = dst.byteSize())
    std::memcpy(dst.data, value.data, bytes);
  return Status::ok();
}

Status CpuSession::output(const std::string &name, TensorView &out) const {
  for (const BindingInfo &b : fn_.outputs)
    if (b.name == name) {
      out = view(b.value);
      return Status::ok();
    }
  return Status::error("the model has no output '" + name + "'");
}

} // namespace ampc::rt
