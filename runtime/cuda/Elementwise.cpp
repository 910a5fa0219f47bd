//===- Elementwise.cpp - elementwise ops and fused chains on the GPU -----===//
//
// The ops of runtime/ops/Elementwise.def, from the plan ops::ew::buildPlan
// makes of a call (as the CPU's loops run it). Every call, a standalone op
// or a "fused" chain, becomes one step table
// (kernels/ElementwiseProgram.h) built and uploaded at prepare time: step
// op codes and attributes, operands (kernel inputs or slots of earlier
// results, assigned by liveness so long chains stay in a few slots), and
// how each input reaches an output element (contiguous, one element, or
// strides over the output's dims with contiguous runs merged). When every
// input has the output's shape and every address is aligned, the _vec8
// kernel moves 8 elements per thread in 16-byte words.
//
//===----------------------------------------------------------------------===//
#include "runtime/cuda/CudaKernels.h"
#include "runtime/cuda/KernelNames.h"
#include "runtime/cuda/Launch.h"
#include "runtime/cuda/kernels/ElementwiseProgram.h"
#include "runtime/ops/ElementwisePlan.h"

#include <cstring>
#include <limits>

namespace ampc::rt::cuda {
namespace {

using namespace ampc_cuda;

static_assert(sizeof(EwHeader) % 8 == 0 && sizeof(EwInput) % 8 == 0 &&
                  sizeof(EwStep) % 8 == 0,
              "the kernel copies the table in 8-byte words");

EwDom domOf(DType t) {
  switch (t) {
  case DType::F32:
  case DType::F16:
  case DType::BF16:
    return kDomF;
  case DType::F64:
    return kDomD;
  default:
    return kDomI;
  }
}

// A step's attributes, as ops::ew::parseAttrs read them, into a
// zero-initialized step.
void setParams(const ops::ew::Params &p, EwStep &st) {
  st.alpha = p.alpha;
  st.beta = p.beta;
  st.imin = std::numeric_limits<int64_t>::min();
  st.imax = std::numeric_limits<int64_t>::max();
  st.geluTanh = p.geluTanh;
  st.hasMin = p.hasMin;
  st.min = p.min;
  st.hasMax = p.hasMax;
  st.max = p.max;
  DType t = static_cast<DType>(st.dtype);
  if (st.op == kEwClip && domOf(t) == kDomI) {
    if (st.hasMin)
      st.imin = ops::ew::intBound(st.min, true, t);
    if (st.hasMax)
      st.imax = ops::ew::intBound(st.max, false, t);
  }
}

// Turns the steps into EwSteps, giving each result a slot that is free
// again after the last step reading it.
Status assignSlots(const ops::OpCall &call,
                   const std::vector<ops::ew::PlanStep> &ps,
                   std::vector<EwStep> &steps, int &resultSlot) {
  const int n = static_cast<int>(ps.size());
  std::vector<int> lastUse(n, -1), slotOf(n, -1);
  for (int s = 0; s < n; ++s)
    for (int ref : ps[s].operands)
      if (ref < 0)
        lastUse[-ref - 1] = s;
  lastUse[n - 1] = n; // the output
  std::vector<bool> busy(kEwMaxSlots, false);
  steps.assign(n, EwStep{});
  for (int s = 0; s < n; ++s) {
    const ops::ew::PlanStep &p = ps[s];
    EwStep &st = steps[s];
    st.op = static_cast<EwOp>(p.op->kind);
    st.arity = ops::ew::arity(p.op->sig);
    st.dtype = static_cast<int32_t>(p.dtype);
    st.dom = domOf(p.dtype);
    for (int j = 0; j < st.arity; ++j) {
      int ref = p.operands[j];
      st.operand[j] = ref >= 0 ? ref : -slotOf[-ref - 1] - 1;
    }
    if (st.op == kEwCast || ops::ew::isPredicate(p.op->sig)) {
      int ref = p.operands[0];
      st.srcDom = domOf(ref >= 0 ? call.inputs[ref].dtype : ps[-ref - 1].dtype);
    }
    setParams(p.params, st);
    // Operands are read before the result is written: their slots may be
    // reused by it.
    for (int ref : p.operands)
      if (ref < 0 && lastUse[-ref - 1] == s)
        busy[slotOf[-ref - 1]] = false;
    int slot = 0;
    while (slot < kEwMaxSlots && busy[slot])
      ++slot;
    if (slot == kEwMaxSlots)
      return Status::error("step " + std::to_string(s) + " ('" + p.op->name +
                           "') needs more than " + std::to_string(kEwMaxSlots) +
                           " earlier results alive at once, the most the "
                           "CUDA elementwise kernel holds");
    busy[slot] = true;
    slotOf[s] = slot;
    st.result = slot;
  }
  resultSlot = slotOf[n - 1];
  return Status::ok();
}

// Element strides of `in` over the output dims (0 where it broadcasts).
std::vector<int64_t> stridesOver(const Shape &in, const Shape &out) {
  size_t r = out.size(), off = r - in.size();
  std::vector<int64_t> st(r, 0);
  int64_t s = 1;
  for (size_t i = r; i-- > off;) {
    int64_t d = in[i - off];
    st[i] = d == 1 ? 0 : s;
    s *= d;
  }
  return st;
}

bool aligned(const void *p, DType t) {
  size_t need = std::min<size_t>(16, 8 * sizeOf(t));
  return reinterpret_cast<uintptr_t>(p) % need == 0;
}

class PreparedElementwise : public PreparedKernel {
public:
  CUfunction fn = nullptr;
  DeviceBuffer table;
  LaunchDims dims;
  int64_t n = 0;
  std::string name;

  Status launch(const LaunchContext &ctx) override {
    if (n == 0)
      return Status::ok();
    CUdeviceptr t = table.get();
    void *args[] = {&t};
    return launchKernel(ctx, fn, dims, args, name.c_str());
  }
  size_t deviceBytes() const override { return table.size(); }
};

Status buildProgram(const ops::OpCall &call, std::vector<EwStep> &steps,
                    int &resultSlot) {
  ops::ew::Plan plan;
  AMPC_RETURN_IF_ERROR(ops::ew::buildPlan(call, plan));
  return assignSlots(call, plan.steps, steps, resultSlot);
}

Status prepareElementwise(const std::vector<const ops::OpCall *> &calls,
                          PrepareContext &ctx,
                          std::unique_ptr<PreparedKernel> &out) {
  if (calls.size() != 1)
    return Status::error("elementwise kernels are not grouped, got " +
                         std::to_string(calls.size()) + " calls");
  const ops::OpCall &call = *calls[0];
  auto fail = [&](const Status &s) {
    return s.withContext("CUDA elementwise kernel '" + call.op + "'");
  };
  const TensorView &o = call.outputs[0];

  std::vector<EwStep> steps;
  EwHeader h{};
  AMPC_RETURN_IF_ERROR(fail(buildProgram(call, steps, h.resultSlot)));
  h.n = o.numElements();
  h.out = o.data;
  h.outDtype = static_cast<int32_t>(o.dtype);
  h.numInputs = static_cast<int32_t>(call.inputs.size());
  h.numSteps = static_cast<int32_t>(steps.size());

  // Which inputs the steps read, and how each reaches output element i.
  std::vector<bool> used(call.inputs.size(), false);
  for (const EwStep &st : steps)
    for (int j = 0; j < st.arity; ++j)
      if (st.operand[j] >= 0)
        used[st.operand[j]] = true;
  std::vector<EwInput> inputs(call.inputs.size(), EwInput{});
  std::vector<std::vector<int64_t>> full(call.inputs.size());
  bool vec =
      call.inputs.size() <= size_t(kEwMaxVecInputs) && aligned(o.data, o.dtype);
  for (size_t k = 0; k < call.inputs.size(); ++k) {
    const TensorView &in = call.inputs[k];
    EwInput &e = inputs[k];
    e.mode = kModeUnused;
    if (!used[k])
      continue;
    e.ptr = in.data;
    e.dtype = static_cast<int32_t>(in.dtype);
    if (in.shape == o.shape) {
      e.mode = kModeContig;
      vec = vec && aligned(in.data, in.dtype);
    } else if (in.numElements() == 1) {
      e.mode = kModeScalar;
      vec = false;
    } else {
      e.mode = kModeStrided;
      full[k] = stridesOver(in.shape, o.shape);
      h.strided = 1;
      vec = false;
    }
  }

  // The output dims the strided inputs index, size-1 dims dropped and a
  // dim merged into the one before it where every strided input is
  // contiguous across the two.
  if (h.strided) {
    std::vector<int64_t> dims;
    std::vector<std::vector<int64_t>> strides(inputs.size());
    for (size_t d = 0; d < o.shape.size(); ++d) {
      if (o.shape[d] == 1)
        continue;
      bool merge = !dims.empty();
      for (size_t k = 0; merge && k < inputs.size(); ++k)
        if (inputs[k].mode == kModeStrided)
          merge = strides[k].back() == full[k][d] * o.shape[d];
      if (merge) {
        dims.back() *= o.shape[d];
        for (size_t k = 0; k < inputs.size(); ++k)
          if (inputs[k].mode == kModeStrided)
            strides[k].back() = full[k][d];
        continue;
      }
      dims.push_back(o.shape[d]);
      for (size_t k = 0; k < inputs.size(); ++k)
        if (inputs[k].mode == kModeStrided)
          strides[k].push_back(full[k][d]);
    }
    if (dims.size() > size_t(kEwMaxRank))
      return fail(Status::error(
          "output " + str(o.shape) + " has " + std::to_string(dims.size()) +
          " dims after merging contiguous ones; the kernel indexes at most " +
          std::to_string(kEwMaxRank)));
    h.rank = static_cast<int32_t>(dims.size());
    for (size_t d = 0; d < dims.size(); ++d)
      h.dims[d] = dims[d];
    for (size_t k = 0; k < inputs.size(); ++k)
      for (size_t d = 0; d < strides[k].size(); ++d)
        inputs[k].strides[d] = strides[k][d];
  }

  auto p = std::make_unique<PreparedElementwise>();
  p->n = h.n;
  const size_t shared =
      inputs.size() * sizeof(EwInput) + steps.size() * sizeof(EwStep);
  if (shared > 48 * 1024)
    return fail(Status::error(
        "its " + std::to_string(steps.size()) + " steps and " +
        std::to_string(inputs.size()) + " inputs need " +
        std::to_string(shared) +
        " bytes of shared memory, more than the 48 KiB the kernel may use"));
  if (h.n > 0) {
    std::vector<char> bytes(sizeof(EwHeader) + shared);
    std::memcpy(bytes.data(), &h, sizeof(h));
    if (!inputs.empty())
      std::memcpy(bytes.data() + sizeof(h), inputs.data(),
                  inputs.size() * sizeof(EwInput));
    std::memcpy(bytes.data() + sizeof(h) + inputs.size() * sizeof(EwInput),
                steps.data(), steps.size() * sizeof(EwStep));
    AMPC_RETURN_IF_ERROR(fail(kernelFunction(
        ctx.device, vec ? CudaKernel::ElementwiseVec8 : CudaKernel::Elementwise,
        {}, p->fn, &p->name)));
    AMPC_RETURN_IF_ERROR(
        fail(p->table.upload(ctx.device, bytes.data(), bytes.size(),
                             "elementwise step table (" + call.op + ")")));
    const int64_t work = vec ? std::max<int64_t>(1, h.n / kEwVec) : h.n;
    p->dims = gridFor(ctx.device, work, 256);
    p->dims.sharedBytes = static_cast<unsigned>(shared);
  }
  out = std::move(p);
  return Status::ok();
}

} // namespace

void addElementwiseKernels(std::vector<KernelEntry> &out) {
  for (const ops::ew::OpInfo &o : ops::ew::allOps())
    out.push_back({o.name, prepareElementwise});
  out.push_back({"fused", prepareElementwise});
}

} // namespace ampc::rt::cuda
