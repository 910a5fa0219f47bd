//===- Optimizers.cpp - multi-tensor updates and loss scaling on CUDA -----===//
//
// sgd_update, momentum_update, adam_update, adagrad_update, lr_schedule,
// check_finite and update_scale, as runtime/cpu/Optimizers.cpp and
// LossScaling.cpp define them (kernels/Optimizers.cu). Consecutive updates
// of one op with the same attributes and the same parameter and
// working-copy dtypes form one group (canGroup), prepared as one launch over
// all their parameters through a device table (each entry with its own
// gradient dtype and scalar set), as check_finite is over all its
// gradients. The scalars a step computes (lr, step, skip, loss scale) stay
// on the device: launch() only enqueues.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/kernels/OptimizerTables.h"
#include "runtime/ops/OptimizerRules.h"

#include <cmath>
#include <cstring>

namespace ampc::rt::cuda {
namespace {
using namespace ampc_cuda;
using ops::OpCall;

bool aligned16(const TensorView &t) { return devicePtr(t) % 16 == 0; }

// Whether two tensors share a byte (empty ones share none).
bool overlap(const TensorView &a, const TensorView &b) {
  if (a.byteSize() == 0 || b.byteSize() == 0)
    return false;
  uint64_t a0 = devicePtr(a), b0 = devicePtr(b);
  return a0 < b0 + b.byteSize() && b0 < a0 + a.byteSize();
}

// The update kernels' dtype suffix: name(d) for a float dtype, else f32's.
std::string dtypeSuffix(DType d) {
  return std::string(name(isFloat(d) ? d : DType::F32));
}

int64_t chunksOf(int64_t n) { return (n + kOptChunk - 1) / kOptChunk; }

LaunchDims chunkGrid(const CudaDevice &device, int64_t chunks) {
  return gridFor(device, chunks * kOptThreads, kOptThreads);
}

Status uploadTable(CudaDevice &device, const void *data, size_t bytes,
                   const std::string &what, DeviceBuffer &out) {
  if (bytes == 0)
    return Status::ok();
  return out.upload(device, data, bytes, what);
}

bool sameAttrs(const Attrs &a, const Attrs &b) {
  const auto &x = a.all(), &y = b.all();
  if (x.size() != y.size())
    return false;
  for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
    const AttrValue &u = i->second, &v = j->second;
    if (i->first != j->first || u.kind != v.kind || u.i != v.i || u.s != v.s ||
        u.ints != v.ints)
      return false;
    // Bitwise, so that NaN equals NaN and 0 differs from -0.
    if (std::memcmp(&u.f, &v.f, sizeof(double)) != 0)
      return false;
  }
  return true;
}

//===----------------------------------------------------------------------===//
// The updates
//===----------------------------------------------------------------------===//

// Each update's operand layout (ops::UpdateLayout) and attributes, read by
// runtime/ops/OptimizerRules.h as the check and the CPU kernel read them,
// into the kernel's parameter table.
template <typename P> struct UpdateOp;

template <> struct UpdateOp<SgdParams> {
  static constexpr ops::UpdateLayout kLayout = ops::kSgdLayout;
  static constexpr CudaKernel kKernel = CudaKernel::SgdUpdate;
  static Status read(const Attrs &attrs, SgdParams &p) {
    ops::SgdAttrs a;
    AMPC_RETURN_IF_ERROR(ops::readSgdAttrs(attrs, a));
    p.weightDecay = a.weightDecay;
    return Status::ok();
  }
};

template <> struct UpdateOp<MomentumParams> {
  static constexpr ops::UpdateLayout kLayout = ops::kMomentumLayout;
  static constexpr CudaKernel kKernel = CudaKernel::MomentumUpdate;
  static Status read(const Attrs &attrs, MomentumParams &p) {
    ops::MomentumAttrs a;
    AMPC_RETURN_IF_ERROR(ops::readMomentumAttrs(attrs, a));
    p.alpha = a.alpha;
    p.beta = a.beta;
    p.normCoefficient = a.normCoefficient;
    p.nesterov = a.nesterov;
    return Status::ok();
  }
};

template <> struct UpdateOp<AdamParams> {
  static constexpr ops::UpdateLayout kLayout = ops::kAdamLayout;
  static constexpr CudaKernel kKernel = CudaKernel::AdamUpdate;
  static Status read(const Attrs &attrs, AdamParams &p) {
    ops::AdamAttrs a;
    AMPC_RETURN_IF_ERROR(ops::readAdamAttrs(attrs, a));
    p.alpha = a.alpha;
    p.beta = a.beta;
    p.epsilon = a.epsilon;
    p.normCoefficient = a.normCoefficient;
    p.normCoefficientPost = a.normCoefficientPost;
    p.weightDecay = a.weightDecay;
    p.pytorch = a.pytorch;
    // Formed in double and rounded by the kernel, as the CPU does.
    p.oneMinusAlpha = 1 - p.alpha;
    p.oneMinusBeta = 1 - p.beta;
    return Status::ok();
  }
};

template <> struct UpdateOp<AdagradParams> {
  static constexpr ops::UpdateLayout kLayout = ops::kAdagradLayout;
  static constexpr CudaKernel kKernel = CudaKernel::AdagradUpdate;
  static Status read(const Attrs &attrs, AdagradParams &p) {
    ops::AdagradAttrs a;
    AMPC_RETURN_IF_ERROR(ops::readAdagradAttrs(attrs, a));
    p.decayFactor = a.decayFactor;
    p.epsilon = a.epsilon;
    p.normCoefficient = a.normCoefficient;
    return Status::ok();
  }
};

// The dtype of an update's working copy, or -1 without one.
int workingCopyDtype(const OpCall &call, const ops::UpdateLayout &s) {
  return call.outputs.size() > s.outputs
             ? static_cast<int>(call.outputs[s.outputs].dtype)
             : -1;
}

template <typename P>
bool canGroupUpdate(const OpCall &first, const OpCall &next) {
  constexpr ops::UpdateLayout s = UpdateOp<P>::kLayout;
  if (next.op != first.op || next.inputs.size() != first.inputs.size() ||
      next.outputs.size() != first.outputs.size() ||
      next.present != first.present || !sameAttrs(*first.attrs, *next.attrs))
    return false;
  // Each call keeps its own lr, step and skip (a ScalarSet); one kernel
  // takes one param dtype and one working-copy dtype.
  return next.inputs[s.first].dtype == first.inputs[s.first].dtype &&
         workingCopyDtype(next, s) == workingCopyDtype(first, s);
}

// The tensors a call reads (param, grad, state) and writes.
struct CallTensors {
  std::vector<const TensorView *> reads, writes;
};

CallTensors tensorsOf(const OpCall &call, const ops::UpdateLayout &s) {
  CallTensors t;
  for (size_t i = s.first; i < s.inputs; ++i)
    t.reads.push_back(&call.inputs[i]);
  for (const TensorView &o : call.outputs)
    t.writes.push_back(&o);
  return t;
}

// Whether `b` may run in the same launch as `a`, whose elements it then
// touches in any order: neither writes what the other reads or writes.
bool independent(const CallTensors &a, const CallTensors &b) {
  for (const TensorView *w : a.writes) {
    for (const TensorView *r : b.reads)
      if (overlap(*w, *r))
        return false;
    for (const TensorView *w2 : b.writes)
      if (overlap(*w, *w2))
        return false;
  }
  for (const TensorView *w : b.writes)
    for (const TensorView *r : a.reads)
      if (overlap(*w, *r))
        return false;
  return true;
}

// The index of `call`'s lr, step, skip and loss_scale in `sets`, added if
// new.
int32_t scalarSetOf(const OpCall &call, const ops::UpdateLayout &s,
                    std::vector<ScalarSet> &sets) {
  ScalarSet set{};
  set.lr = devicePtr(call.inputs[0]);
  set.lrDtype = static_cast<int32_t>(call.inputs[0].dtype);
  if (s.first == 2)
    set.step = devicePtr(call.inputs[1]);
  if (ops::hasInput(call, s.inputs))
    set.skip = devicePtr(call.inputs[s.inputs]);
  if (ops::hasInput(call, s.inputs + 1))
    set.lossScale = devicePtr(call.inputs[s.inputs + 1]);
  for (size_t i = 0; i < sets.size(); ++i)
    if (sets[i].lr == set.lr && sets[i].step == set.step &&
        sets[i].skip == set.skip && sets[i].lossScale == set.lossScale &&
        sets[i].lrDtype == set.lrDtype)
      return static_cast<int32_t>(i);
  sets.push_back(set);
  return static_cast<int32_t>(sets.size() - 1);
}

struct Segment {
  size_t first = 0, count = 0; // entries in the table
  int64_t chunks = 0;
  LaunchDims dims; // chunkGrid of chunks
};

template <typename P> class PreparedUpdate final : public PreparedKernel {
public:
  CUfunction fn = nullptr;
  DeviceBuffer table;
  std::vector<Segment> segments;
  CUdeviceptr sets = 0; // in `table`, after the entries
  int wcDtype = -1;
  P params{};
  std::string name;

  Status launch(const LaunchContext &ctx) override {
    for (const Segment &seg : segments) {
      CUdeviceptr entries = table.get() + seg.first * sizeof(UpdateEntry);
      int count = static_cast<int>(seg.count);
      int64_t chunks = seg.chunks;
      void *args[] = {&entries, &count, &chunks, &sets, &wcDtype, &params};
      AMPC_RETURN_IF_ERROR(launchKernel(ctx, fn, seg.dims, args, name.c_str()));
    }
    return Status::ok();
  }
  size_t deviceBytes() const override { return table.size(); }
};

template <typename P>
Status prepareUpdate(const std::vector<const OpCall *> &calls,
                     PrepareContext &ctx,
                     std::unique_ptr<PreparedKernel> &out) {
  constexpr ops::UpdateLayout s = UpdateOp<P>::kLayout;
  const OpCall &first = *calls.front();
  auto k = std::make_unique<PreparedUpdate<P>>();
  AMPC_RETURN_IF_ERROR(UpdateOp<P>::read(*first.attrs, k->params));
  AMPC_RETURN_IF_ERROR(kernelFunction(
      ctx.device, UpdateOp<P>::kKernel,
      {dtypeSuffix(first.inputs[s.first].dtype)}, k->fn, &k->name));
  k->wcDtype = workingCopyDtype(first, s);

  // A call that touches what an earlier call of the current segment
  // touches (a write against a read or write) starts a new segment, so
  // launches in stream order keep the calls' order where it matters.
  std::vector<UpdateEntry> entries;
  std::vector<ScalarSet> sets;
  std::vector<CallTensors> inSegment;
  Segment seg;
  auto close = [&] {
    if (seg.count != 0) {
      seg.dims = chunkGrid(ctx.device, seg.chunks);
      k->segments.push_back(seg);
    }
    seg = Segment{entries.size(), 0, 0, {}};
    inSegment.clear();
  };
  for (const OpCall *call : calls) {
    const int64_t n = call->inputs[s.first].numElements();
    if (n == 0)
      continue;
    CallTensors t = tensorsOf(*call, s);
    for (const CallTensors &prev : inSegment)
      if (!independent(prev, t)) {
        close();
        break;
      }
    UpdateEntry e{};
    bool vec = true;
    for (size_t i = 0; i < s.inputs - s.first; ++i) {
      e.in[i] = devicePtr(call->inputs[s.first + i]);
      vec &= aligned16(call->inputs[s.first + i]);
    }
    for (size_t i = 0; i < s.outputs; ++i) {
      e.out[i] = devicePtr(call->outputs[i]);
      vec &= aligned16(call->outputs[i]);
    }
    if (call->outputs.size() > s.outputs) {
      e.workingCopy = devicePtr(call->outputs[s.outputs]);
      vec &= aligned16(call->outputs[s.outputs]);
    }
    e.n = n;
    e.firstChunk = seg.chunks;
    e.vec = vec;
    e.scalars = scalarSetOf(*call, s, sets);
    e.gradDtype = static_cast<int32_t>(call->inputs[s.first + 1].dtype);
    seg.chunks += chunksOf(n);
    ++seg.count;
    entries.push_back(e);
    inSegment.push_back(std::move(t));
  }
  close();
  // One allocation: the entries, then the scalar sets.
  std::vector<uint8_t> bytes(entries.size() * sizeof(UpdateEntry) +
                             sets.size() * sizeof(ScalarSet));
  if (!entries.empty()) {
    std::memcpy(bytes.data(), entries.data(),
                entries.size() * sizeof(UpdateEntry));
    std::memcpy(bytes.data() + entries.size() * sizeof(UpdateEntry),
                sets.data(), sets.size() * sizeof(ScalarSet));
  }
  AMPC_RETURN_IF_ERROR(uploadTable(ctx.device, bytes.data(), bytes.size(),
                                   first.op + " tensor table", k->table));
  k->sets = k->table.get() + entries.size() * sizeof(UpdateEntry);
  out = std::move(k);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// lr_schedule
//===----------------------------------------------------------------------===//

class PreparedSchedule final : public PreparedKernel {
public:
  CUfunction fn = nullptr;
  CUdeviceptr step = 0, lr = 0;
  int lrDtype = 0;
  ScheduleParams params{};

  Status launch(const LaunchContext &ctx) override {
    void *args[] = {&step, &lr, &lrDtype, &params};
    LaunchDims d;
    d.block[0] = 1;
    return launchKernel(ctx, fn, d, args, "ampc_lr_schedule");
  }
};

Status prepareSchedule(const std::vector<const OpCall *> &calls,
                       PrepareContext &ctx,
                       std::unique_ptr<PreparedKernel> &out) {
  const OpCall &call = *calls.front();
  auto k = std::make_unique<PreparedSchedule>();
  ScheduleParams &p = k->params;
  ops::ScheduleAttrs a;
  AMPC_RETURN_IF_ERROR(ops::readScheduleAttrs(*call.attrs, a));
  p.baseLr = a.baseLr;
  p.gamma = a.gamma;
  p.minLr = a.minLr;
  p.stepSize = a.stepSize;
  p.totalSteps = a.totalSteps;
  p.kind = a.kind == "step" ? 1 : a.kind == "cosine" ? 2 : 0;
  AMPC_RETURN_IF_ERROR(
      kernelFunction(ctx.device, CudaKernel::LrSchedule, {}, k->fn));
  k->step = devicePtr(call.inputs[0]);
  k->lr = devicePtr(call.outputs[0]);
  k->lrDtype = static_cast<int>(call.outputs[0].dtype);
  out = std::move(k);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// check_finite
//===----------------------------------------------------------------------===//

class PreparedCheckFinite final : public PreparedKernel {
public:
  CUfunction fn = nullptr;
  DeviceBuffer table;
  int count = 0;
  int64_t chunks = 0;
  LaunchDims dims; // chunkGrid of chunks
  CUdeviceptr scale = 0, skip = 0, foundInf = 0;

  Status launch(const LaunchContext &ctx) override {
    // Zeroed first: the kernel only ever stores 1 (a skipped or clean step
    // leaves the 0).
    AMPC_CU_CHECK(ctx.device.api(),
                  cuMemsetD8Async(foundInf, 0, 1, ctx.stream));
    if (chunks == 0)
      return Status::ok();
    CUdeviceptr entries = table.get();
    void *args[] = {&entries, &count, &chunks, &scale, &skip, &foundInf};
    return launchKernel(ctx, fn, dims, args, "ampc_check_finite");
  }
  size_t deviceBytes() const override { return table.size(); }
};

// The inputs are the gradients, scale, then skip (ops::endsWithSkip).
Status prepareCheckFinite(const std::vector<const OpCall *> &calls,
                          PrepareContext &ctx,
                          std::unique_ptr<PreparedKernel> &out) {
  const OpCall &call = *calls.front();
  const bool hasSkip = ops::endsWithSkip(call);
  const size_t n = call.inputs.size() - (hasSkip ? 2 : 1);
  auto k = std::make_unique<PreparedCheckFinite>();
  AMPC_RETURN_IF_ERROR(
      kernelFunction(ctx.device, CudaKernel::CheckFinite, {}, k->fn));
  std::vector<FiniteEntry> entries;
  for (size_t i = 0; i < n; ++i) {
    const TensorView &g = call.inputs[i];
    int64_t count = g.numElements();
    if (count == 0)
      continue;
    FiniteEntry e{};
    e.g = devicePtr(g);
    e.n = count;
    e.firstChunk = k->chunks;
    e.dtype = static_cast<int32_t>(g.dtype);
    e.vec = aligned16(g);
    k->chunks += chunksOf(count);
    entries.push_back(e);
  }
  k->count = static_cast<int>(entries.size());
  k->dims = chunkGrid(ctx.device, k->chunks);
  k->scale = devicePtr(call.inputs[n]);
  if (hasSkip)
    k->skip = devicePtr(call.inputs[n + 1]);
  k->foundInf = devicePtr(call.outputs[0]);
  AMPC_RETURN_IF_ERROR(uploadTable(
      ctx.device, entries.data(), entries.size() * sizeof(FiniteEntry),
      "check_finite gradient table", k->table));
  out = std::move(k);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// update_scale
//===----------------------------------------------------------------------===//

class PreparedUpdateScale final : public PreparedKernel {
public:
  CUfunction fn = nullptr;
  CUdeviceptr in[4] = {}, out[3] = {};
  ScaleParams params{};

  Status launch(const LaunchContext &ctx) override {
    void *args[] = {&in[0],  &in[1],  &in[2],  &in[3],
                    &out[0], &out[1], &out[2], &params};
    LaunchDims d;
    d.block[0] = 1;
    return launchKernel(ctx, fn, d, args, "ampc_update_scale");
  }
};

Status prepareUpdateScale(const std::vector<const OpCall *> &calls,
                          PrepareContext &ctx,
                          std::unique_ptr<PreparedKernel> &out) {
  const OpCall &call = *calls.front();
  auto k = std::make_unique<PreparedUpdateScale>();
  ScaleParams &p = k->params;
  ops::ScaleAttrs a;
  AMPC_RETURN_IF_ERROR(ops::readScaleAttrs(*call.attrs, a));
  p.growth = a.growth;
  p.backoff = a.backoff;
  p.minScale = a.minScale;
  p.maxScale = a.maxScale;
  p.growthInterval = a.growthInterval;
  p.decrEveryN = a.decrEveryN;
  AMPC_RETURN_IF_ERROR(
      kernelFunction(ctx.device, CudaKernel::UpdateScale, {}, k->fn));
  for (size_t i = 0; i < 4; ++i)
    k->in[i] = devicePtr(call.inputs[i]);
  for (size_t i = 0; i < 3; ++i)
    k->out[i] = devicePtr(call.outputs[i]);
  out = std::move(k);
  return Status::ok();
}

} // namespace

void addOptimizerKernels(std::vector<KernelEntry> &out) {
  out.push_back(
      {"sgd_update", prepareUpdate<SgdParams>, canGroupUpdate<SgdParams>});
  out.push_back({"momentum_update", prepareUpdate<MomentumParams>,
                 canGroupUpdate<MomentumParams>});
  out.push_back(
      {"adam_update", prepareUpdate<AdamParams>, canGroupUpdate<AdamParams>});
  out.push_back({"adagrad_update", prepareUpdate<AdagradParams>,
                 canGroupUpdate<AdagradParams>});
  out.push_back({"lr_schedule", prepareSchedule});
  out.push_back({"check_finite", prepareCheckFinite});
  out.push_back({"update_scale", prepareUpdateScale});
}

} // namespace ampc::rt::cuda
