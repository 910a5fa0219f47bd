//===- Check.cpp - the kernel-op table and the check of a call ------------===//
#include "runtime/ops/Check.h"

#include "runtime/KernelTable.h"
#include "runtime/ops/ElementwisePlan.h"

namespace ampc::rt::ops {
namespace {

// The compiler's graph.accumulate: the type a low-precision contraction or
// reduction accumulates in. Every kernel of both backends computes
// f16/bf16 in f32 (TypedIO.h, cuda/kernels/ComputeType.cuh), so f32 is the
// only value the runtime can honour; anything else is refused at load time
// rather than silently run in f32.
Status checkAccumulate(const Attrs &attrs) {
  const AttrValue *a = attrs.find("graph.accumulate");
  if (!a)
    return Status::ok();
  if (a->kind != AttrValue::Kind::String || a->s != "f32")
    return Status::error("graph.accumulate is " +
                         (a->kind == AttrValue::Kind::String
                              ? "'" + a->s + "'"
                              : std::string("not a type name")) +
                         ", but the runtime accumulates in f32 only");
  return Status::ok();
}

} // namespace

const std::vector<KernelOp> &kernelOps() {
  static const std::vector<KernelOp> table = [] {
    std::vector<KernelOp> v = {
#define AMPC_EW(name, kind, sig, expr)                                         \
  {#name, checkElementwise, Aliasing::Elementwise},
#include "runtime/ops/Elementwise.def"
#define AMPC_OP(name, check, aliasing) {#name, check, Aliasing::aliasing},
#include "runtime/ops/Ops.def"
    };
    sortByName(v);
    return v;
  }();
  return table;
}

const KernelOp *findKernelOp(const std::string &name) {
  return findByName(kernelOps(), name);
}

Status checkKernel(const OpCall &call) {
  const KernelOp *op = findKernelOp(call.op);
  if (!op)
    return Status::error("the runtime has no kernel for op '" + call.op + "'");
  if (call.present.size() != call.inputs.size())
    return Status::error("op '" + call.op + "': input presence list has " +
                         std::to_string(call.present.size()) + " entries for " +
                         std::to_string(call.inputs.size()) + " inputs");
  Status s = checkAccumulate(*call.attrs);
  if (s)
    s = op->check(call);
  return s.withContext("op '" + call.op + "'");
}

Aliasing aliasingOf(const std::string &op) {
  const KernelOp *k = findKernelOp(op);
  return k ? k->aliasing : Aliasing::None;
}

Status checkElementwise(const OpCall &call) {
  ew::Plan plan;
  return ew::buildPlan(call, plan);
}

} // namespace ampc::rt::ops
