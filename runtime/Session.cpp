//===- Session.cpp - what every executor shares ---------------------------===//
//
// Device choice, binding lookups, the update-copy plan and the non-finite
// probe, which reads around each kernel and never writes.
//
//===----------------------------------------------------------------------===//
#include "runtime/Session.h"

#include "runtime/CpuSession.h"
#include "runtime/HostMemory.h"
#include "runtime/TypedIO.h"
#include "runtime/ops/Check.h"
#if AMPC_HAVE_CUDA
#include "runtime/cuda/CudaSession.h"
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

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
    return countChunks<double>(t, loadF64);
  return countChunks<float>(t, loadF32);
}

bool overlaps(const TensorView &a, const TensorView &b) {
  auto lo = [](const TensorView &t) {
    return reinterpret_cast<uintptr_t>(t.data);
  };
  return lo(a) < lo(b) + b.byteSize() && lo(b) < lo(a) + a.byteSize();
}

// "cuda" is GPU 0; "cuda:N" GPU N.
bool parseCudaDevice(const std::string &device, int &ordinal) {
  if (device == "cuda") {
    ordinal = 0;
    return true;
  }
  if (device.rfind("cuda:", 0) != 0 || device.size() == 5 || device.size() > 9)
    return false;
  ordinal = 0;
  for (char c : device.substr(5)) {
    if (c < '0' || c > '9')
      return false;
    ordinal = ordinal * 10 + (c - '0');
  }
  return true;
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

Session::Session(FunctionInfo fn) : fn_(std::move(fn)) {
  inputSet_.assign(fn_.inputs.size(), false);
}
Session::~Session() = default;

Status Session::create(FunctionInfo function, const SessionOptions &options,
                       std::unique_ptr<Session> &out) {
  if (options.device == "cpu")
    return CpuSession::create(std::move(function), options, out);
  int ordinal = 0;
  if (!parseCudaDevice(options.device, ordinal))
    return Status::error("unknown device '" + options.device +
                         "' (devices: cpu, cuda, cuda:N)");
#if AMPC_HAVE_CUDA
  return cuda::CudaSession::create(std::move(function), ordinal, options, out);
#else
  return Status::error("device '" + options.device +
                       "': this build of ampc has no CUDA backend (it was "
                       "configured with AMPC_ENABLE_CUDA=OFF)");
#endif
}

Status Session::openDevice(const std::string &device, uint64_t &memoryBytes) {
  memoryBytes = 0;
  if (device == "cpu") {
    memoryBytes = hostMemory().bytes;
    return Status::ok();
  }
  int ordinal = 0;
  if (!parseCudaDevice(device, ordinal))
    return Status::error("unknown device '" + device +
                         "' (devices: cpu, cuda, cuda:N)");
#if AMPC_HAVE_CUDA
  std::shared_ptr<cuda::CudaDevice> d;
  AMPC_RETURN_IF_ERROR(cuda::CudaDevice::open(ordinal, d)
                           .withContext("device '" + device + "'"));
  memoryBytes = d->totalBytes();
  return Status::ok();
#else
  return Status::error("device '" + device +
                       "': this build of ampc has no CUDA backend (it was "
                       "configured with AMPC_ENABLE_CUDA=OFF)");
#endif
}

Status Session::findInput(const std::string &name, size_t &index) const {
  for (size_t i = 0; i < fn_.inputs.size(); ++i)
    if (fn_.inputs[i].name == name) {
      index = i;
      return Status::ok();
    }
  std::string known;
  for (const BindingInfo &b : fn_.inputs)
    known += (known.empty() ? "" : ", ") + b.name;
  return Status::error("the model has no input '" + name +
                       "' (inputs: " + (known.empty() ? "none" : known) + ")");
}

Status Session::inputType(const std::string &name, TensorView &type) const {
  size_t i = 0;
  AMPC_RETURN_IF_ERROR(findInput(name, i));
  const ValueInfo &v = fn_.values[fn_.inputs[i].value];
  type = TensorView{};
  type.dtype = v.dtype;
  type.shape = v.shape;
  return Status::ok();
}

Status Session::checkInputsSet() const {
  for (size_t i = 0; i < fn_.inputs.size(); ++i)
    if (!inputSet_[i])
      return Status::error("input '" + fn_.inputs[i].name + "' was not given");
  return Status::ok();
}

const BindingInfo *Session::findParam(const std::string &name) const {
  for (const BindingInfo &b : fn_.params)
    if (b.name == name)
      return &b;
  return nullptr;
}

Status Session::planUpdateCopies(std::vector<UpdateCopy> &copies,
                                 size_t &stagingBytes) const {
  copies.clear();
  stagingBytes = 0;
  std::vector<bool> isParam(fn_.values.size(), false);
  for (const BindingInfo &p : fn_.params)
    isParam[p.value] = true;
  for (size_t i = 0; i < fn_.params.size(); ++i) {
    const BindingInfo &p = fn_.params[i];
    if (p.update < 0)
      continue;
    const ValueInfo &u = fn_.values[p.update], &v = fn_.values[p.value];
    if (u.inArena && u.offset == v.offset)
      continue;
    UpdateCopy c{static_cast<int>(i), isParam[p.update], stagingBytes};
    if (c.staged &&
        __builtin_add_overflow(stagingBytes, static_cast<size_t>(u.byteSize()),
                               &stagingBytes))
      return Status::error("function '" + fn_.name +
                           "': the staging of its parameter updates "
                           "overflows size_t");
    copies.push_back(c);
  }
  return Status::ok();
}

Status Session::buildCalls() {
  for (size_t k = 0; k < fn_.kernels.size(); ++k) {
    const KernelInfo &kern = fn_.kernels[k];
    ops::OpCall call;
    call.op = kern.kind;
    call.attrs = &kern.attrs;
    call.steps = &kern.steps;
    for (int id : kern.inputs) {
      call.present.push_back(id >= 0);
      call.inputs.push_back(id >= 0 ? view(id) : TensorView{});
    }
    for (int id : kern.outputs)
      call.outputs.push_back(view(id));
    AMPC_RETURN_IF_ERROR(ops::checkKernel(call).withContext(
        "function '" + fn_.name + "': " + kern.describe(k)));
    calls_.push_back(std::move(call));
  }
  return Status::ok();
}

bool Session::inputsNonFinite(size_t k, bool overwritten) const {
  const ops::OpCall &call = calls_[k];
  for (size_t i = 0; i < call.inputs.size(); ++i) {
    if (!call.present[i])
      continue;
    const TensorView &in = call.inputs[i];
    bool overwrite =
        std::any_of(call.outputs.begin(), call.outputs.end(),
                    [&](const TensorView &out) { return overlaps(in, out); });
    if (overwrite != overwritten)
      continue;
    TensorView host;
    if (hostView(in, host) && countNonFinite(host).any())
      return true;
  }
  return false;
}

void Session::probeOutputs(size_t k, bool inputsBad) {
  const ops::OpCall &call = calls_[k];
  // The ranks are still summing into the exchange buffer; its wait's
  // outputs are probed.
  if (call.op == "all_reduce_start")
    return;
  for (size_t o = 0; o < call.outputs.size(); ++o) {
    const TensorView &out = call.outputs[o];
    TensorView host;
    if (!hostView(out, host))
      continue;
    NonFiniteCount c = countNonFinite(host);
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
    r.elements = out.numElements();
    r.infs = c.infs;
    r.nans = c.nans;
    r.inputsNonFinite = inputsBad;
    nonFinite_ = std::move(r);
    return;
  }
}

} // namespace ampc::rt
