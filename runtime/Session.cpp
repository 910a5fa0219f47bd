//===- Session.cpp - the executor -----------------------------------------===//
//
// Kernel calls are built once, when the Session is created (the arena does
// not move), so a run is a loop of launches with nothing to look up. The
// non-finite probe reads around each launch and never writes.
//
//===----------------------------------------------------------------------===//
#include "runtime/Session.h"

#include "runtime/ByteSize.h"
#include "runtime/HostMemory.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/cpu/TypedIO.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ampc::rt {
namespace {

struct NonFiniteCount {
  int64_t infs = 0, nans = 0;
  bool any() const { return infs + nans != 0; }
};

// Through the loaders in chunks: f16, bf16 and f32 widen to f32 exactly, so
// inf and NaN survive; f64 is read as f64 (a large finite f64 is no f32).
template <typename T>
NonFiniteCount countChunks(const TensorView &t,
                           void (*load)(const TensorView &, int64_t, int64_t,
                                        T *)) {
  constexpr int64_t kChunk = 1024;
  T buf[kChunk];
  NonFiniteCount c;
  const int64_t n = t.numElements();
  for (int64_t i = 0; i < n; i += kChunk) {
    int64_t m = std::min(kChunk, n - i);
    load(t, i, m, buf);
    for (int64_t j = 0; j < m; ++j) {
      c.infs += std::isinf(buf[j]);
      c.nans += std::isnan(buf[j]);
    }
  }
  return c;
}

NonFiniteCount countNonFinite(const TensorView &t) {
  if (!isFloat(t.dtype))
    return {};
  if (t.dtype == DType::F64)
    return countChunks<double>(t, cpu::loadF64);
  return countChunks<float>(t, cpu::loadF32);
}

// Bytes the arenas and staging of this process's live Sessions hold: a
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

bool overlaps(const TensorView &a, const TensorView &b) {
  auto lo = [](const TensorView &t) {
    return reinterpret_cast<uintptr_t>(t.data);
  };
  return lo(a) < lo(b) + b.byteSize() && lo(b) < lo(a) + a.byteSize();
}

} // namespace

std::string NonFiniteReport::message() const {
  std::string what = infs && nans
                         ? "inf or NaN (" + std::to_string(infs) + " inf, " +
                               std::to_string(nans) + " NaN)"
                     : infs ? "inf"
                            : "NaN";
  std::string m = where + " output " + std::to_string(output) + ": " +
                  std::to_string(infs + nans) + " of " +
                  std::to_string(elements) + " elements are " + what;
  if (inputsNonFinite)
    m += "; its inputs already held inf or NaN, which no kernel made: they "
         "came in with the function's inputs, parameters or constants";
  return m;
}

Session::Session(FunctionInfo fn) : fn_(std::move(fn)) {}
Session::~Session() { gHeldBytes -= heldBytes_; }

TensorView Session::view(int value) const {
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

Status Session::create(FunctionInfo function, const SessionOptions &options,
                       std::unique_ptr<Session> &out) {
  if (options.device != "cpu")
    return Status::error("device '" + options.device +
                         "' is not available in this build (devices: cpu)");
  std::unique_ptr<Session> s(new Session(std::move(function)));
  const FunctionInfo &fn = s->fn_;
  // State whose new value is not planned in the parameter's bytes is
  // copied after each run. A new value that is itself a parameter (state
  // that keeps the previous weights) is staged first: all updates happen at
  // once. Known before any allocation: the staging counts toward the
  // memory the session needs.
  std::vector<bool> isParam(fn.values.size(), false);
  for (const BindingInfo &p : fn.params)
    isParam[p.value] = true;
  for (size_t i = 0; i < fn.params.size(); ++i) {
    const BindingInfo &p = fn.params[i];
    if (p.update < 0)
      continue;
    const ValueInfo &u = fn.values[p.update], &v = fn.values[p.value];
    if (u.inArena && u.offset == v.offset)
      continue;
    UpdateCopy c{static_cast<int>(i), isParam[p.update], s->stagingBytes_};
    if (c.staged && __builtin_add_overflow(s->stagingBytes_,
                                           static_cast<size_t>(u.byteSize()),
                                           &s->stagingBytes_))
      return Status::error("function '" + fn.name +
                           "': the staging of its parameter updates "
                           "overflows size_t");
    s->updateCopies_.push_back(c);
  }
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
  AMPC_RETURN_IF_ERROR(s->pool_->status());
  for (size_t k = 0; k < s->fn_.kernels.size(); ++k) {
    const KernelInfo &kern = s->fn_.kernels[k];
    cpu::OpCall call;
    call.op = kern.kind;
    call.attrs = &kern.attrs;
    call.steps = &kern.steps;
    for (int id : kern.inputs) {
      call.present.push_back(id >= 0);
      call.inputs.push_back(id >= 0 ? s->view(id) : TensorView{});
    }
    for (int id : kern.outputs)
      call.outputs.push_back(s->view(id));
    AMPC_RETURN_IF_ERROR(cpu::checkKernel(call).withContext(
        "function '" + fn.name + "': " + kern.describe(k)));
    s->calls_.push_back(std::move(call));
  }
  s->inputSet_.assign(s->fn_.inputs.size(), false);
  out = std::move(s);
  return Status::ok();
}

Status Session::inputType(const std::string &name, TensorView &type) const {
  for (const BindingInfo &b : fn_.inputs)
    if (b.name == name) {
      type = view(b.value);
      type.data = nullptr;
      return Status::ok();
    }
  std::string known;
  for (const BindingInfo &b : fn_.inputs)
    known += (known.empty() ? "" : ", ") + b.name;
  return Status::error("the model has no input '" + name +
                       "' (inputs: " + (known.empty() ? "none" : known) + ")");
}

Status Session::setInput(const std::string &name, const TensorView &value) {
  for (size_t i = 0; i < fn_.inputs.size(); ++i) {
    if (fn_.inputs[i].name != name)
      continue;
    TensorView dst = view(fn_.inputs[i].value);
    if (value.dtype != dst.dtype || value.shape != dst.shape)
      return Status::error("input '" + name + "' must be " + dst.typeStr() +
                           ", got " + value.typeStr());
    // A zero-element input may come with no buffer at all, and memcpy
    // from null is undefined even for zero bytes.
    if (size_t bytes = dst.byteSize())
      std::memcpy(dst.data, value.data, bytes);
    inputSet_[i] = true;
    return Status::ok();
  }
  TensorView unused;
  return inputType(name, unused);
}

bool Session::inputsNonFinite(size_t k, bool overwritten) const {
  const cpu::OpCall &call = calls_[k];
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.present[i])
      continue;
    const TensorView &in = call.inputs[i];
    bool overwrite =
        std::any_of(call.outputs.begin(), call.outputs.end(),
                    [&](const TensorView &out) { return overlaps(in, out); });
    if (overwrite == overwritten && countNonFinite(in).any())
      return true;
  }
  return false;
}

void Session::probeOutputs(size_t k, bool inputsBad) {
  const cpu::OpCall &call = calls_[k];
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    NonFiniteCount c = countNonFinite(call.outputs[o]);
    if (!c.any())
      continue;
    inputsBad = inputsBad || inputsNonFinite(k, /*overwritten=*/false);
    // An origin replaces the first propagation; run() stops probing after
    // an origin.
    if (nonFinite_ && inputsBad)
      return;
    NonFiniteReport r;
    r.kernel = k;
    r.where = fn_.kernels[k].describe(k);
    r.output = o;
    r.elements = call.outputs[o].numElements();
    r.infs = c.infs;
    r.nans = c.nans;
    r.inputsNonFinite = inputsBad;
    nonFinite_ = std::move(r);
    return;
  }
}

Status Session::run() {
  nonFinite_.reset();
  for (size_t i = 0; i < fn_.inputs.size(); ++i)
    if (!inputSet_[i])
      return Status::error("input '" + fn_.inputs[i].name + "' was not given");
  cpu::CpuContext ctx{pool_.get()};
  for (size_t k = 0; k < calls_.size(); ++k) {
    calls_[k].rngCounter = runs_;
    bool probing = probe_ && (!nonFinite_ || nonFinite_->inputsNonFinite);
    // Inputs the kernel writes over (in place) can only be read before.
    bool inputsBad = probing && inputsNonFinite(k, /*overwritten=*/true);
    // The context string is built only for an error: this loop is the step.
    if (Status st = cpu::runKernel(calls_[k], ctx); !st)
      return st.withContext("function '" + fn_.name +
                            "': " + fn_.kernels[k].describe(k));
    if (probing)
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

const BindingInfo *Session::findParam(const std::string &name) const {
  for (const BindingInfo &b : fn_.params)
    if (b.name == name)
      return &b;
  return nullptr;
}

Status Session::param(const std::string &name, TensorView &out) const {
  const BindingInfo *b = findParam(name);
  if (!b)
    return Status::error("the model has no parameter '" + name + "'");
  out = view(b->value);
  return Status::ok();
}

Status Session::setParam(const std::string &name, const TensorView &value) {
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

Status Session::output(const std::string &name, TensorView &out) const {
  for (const BindingInfo &b : fn_.outputs)
    if (b.name == name) {
      out = view(b.value);
      return Status::ok();
    }
  return Status::error("the model has no output '" + name + "'");
}

} // namespace ampc::rt
