//===- Session.cpp - the executor -----------------------------------------===//
//
// Kernel calls are built once, when the Session is created (the arena does
// not move), so a run is a loop of launches with nothing to look up.
//
//===----------------------------------------------------------------------===//
#include "runtime/Session.h"

#include "runtime/cpu/Parallel.h"

#include <cstdlib>
#include <cstring>

namespace ampc::rt {

Session::Session(FunctionInfo fn) : fn_(std::move(fn)) {}
Session::~Session() = default;

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
  size_t bytes = static_cast<size_t>((fn.arenaSize + kArenaAlignment - 1) /
                                     kArenaAlignment * kArenaAlignment);
  void *mem =
      std::aligned_alloc(kArenaAlignment, bytes ? bytes : kArenaAlignment);
  if (!mem)
    return Status::error("function '" + fn.name + "': cannot allocate its " +
                         std::to_string(fn.arenaSize) + "-byte arena");
  // Zeroed so a kernel bug reading unwritten bytes is deterministic.
  std::memset(mem, 0, bytes ? bytes : kArenaAlignment);
  s->arena_ = {static_cast<uint8_t *>(mem), std::free};
  for (BindingInfo &p : s->fn_.params) {
    std::memcpy(s->arena_.get() + s->fn_.values[p.value].offset, p.init.data(),
                p.init.size());
    std::string().swap(p.init); // the arena holds the value now
  }
  s->pool_ = std::make_unique<cpu::ThreadPool>(options.threads);
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
  // State whose new value is not planned in the parameter's bytes is
  // copied after each run. A new value that is itself a parameter (state
  // that keeps the previous weights) is staged first: all updates happen at
  // once.
  std::vector<bool> isParam(s->fn_.values.size(), false);
  for (const BindingInfo &p : s->fn_.params)
    isParam[p.value] = true;
  for (size_t i = 0; i < s->fn_.params.size(); ++i) {
    const BindingInfo &p = s->fn_.params[i];
    if (p.update < 0 || s->view(p.update).data == s->view(p.value).data)
      continue;
    UpdateCopy c{static_cast<int>(i), isParam[p.update], s->stagingBytes_};
    if (c.staged)
      s->stagingBytes_ += static_cast<size_t>(s->view(p.update).byteSize());
    s->updateCopies_.push_back(c);
  }
  s->staging_.resize(s->stagingBytes_);
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
    std::memcpy(dst.data, value.data, dst.byteSize());
    inputSet_[i] = true;
    return Status::ok();
  }
  TensorView unused;
  return inputType(name, unused);
}

Status Session::run() {
  for (size_t i = 0; i < fn_.inputs.size(); ++i)
    if (!inputSet_[i])
      return Status::error("input '" + fn_.inputs[i].name + "' was not given");
  cpu::CpuContext ctx{pool_.get()};
  for (size_t k = 0; k < calls_.size(); ++k) {
    calls_[k].rngCounter = runs_;
    // The context string is built only for an error: this loop is the step.
    if (Status st = cpu::runKernel(calls_[k], ctx); !st)
      return st.withContext("function '" + fn_.name +
                            "': " + fn_.kernels[k].describe(k));
  }
  for (const UpdateCopy &c : updateCopies_)
    if (c.staged) {
      TensorView src = view(fn_.params[c.param].update);
      std::memcpy(staging_.data() + c.stageOffset, src.data, src.byteSize());
    }
  for (const UpdateCopy &c : updateCopies_) {
    const BindingInfo &p = fn_.params[c.param];
    TensorView dst = view(p.value), src = view(p.update);
    std::memmove(dst.data,
                 c.staged ? staging_.data() + c.stageOffset : src.data,
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
  std::memcpy(dst.data, value.data, dst.byteSize());
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
