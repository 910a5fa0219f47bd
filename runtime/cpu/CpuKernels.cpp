//===- CpuKernels.cpp - dispatch of CPU kernels by op name ----------------===//
//
// Looks a call's op up in the table the kernel families build, and puts the
// op's name in front of every error its kernel reports.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Registry.h"

#include "runtime/KernelTable.h"

namespace ampc::rt::cpu {
namespace {

const std::vector<KernelEntry> &table() {
  static const std::vector<KernelEntry> entries = [] {
    std::vector<KernelEntry> v;
    addElementwiseKernels(v);
    addMovementKernels(v);
    addContractionKernels(v);
    addNormalizationKernels(v);
    addReductionKernels(v);
    addConvolutionGradKernels(v);
    addPoolingGradKernels(v);
    addMovementGradKernels(v);
    addNormalizationGradKernels(v);
    addLossGradKernels(v);
    addOptimizerKernels(v);
    addLossScalingKernels(v);
    sortByName(v);
    return v;
  }();
  return entries;
}

const KernelEntry *find(const std::string &op) {
  return findByName(table(), op);
}

// The compiler's graph.accumulate: the type a low-precision contraction or
// reduction accumulates in. Every kernel here computes f16/bf16 in f32
// (TypedIO.h), so f32 is the only value this backend can honour; anything
// else is refused at load time rather than silently run in f32.
Status checkAccumulate(const Attrs &attrs) {
  const AttrValue *a = attrs.find("graph.accumulate");
  if (!a)
    return Status::ok();
  if (a->kind != AttrValue::Kind::String || a->s != "f32")
    return Status::error("graph.accumulate is " +
                         (a->kind == AttrValue::Kind::String
                              ? "'" + a->s + "'"
                              : std::string("not a type name")) +
                         ", but the CPU backend accumulates in f32 only");
  return Status::ok();
}

} // namespace

Status checkKernel(const OpCall &call) {
  const KernelEntry *e = find(call.op);
  if (!e)
    return Status::error("the CPU backend has no kernel for op '" + call.op +
                         "'");
  if (call.present.size() != call.inputs.size())
    return Status::error("op '" + call.op + "': input presence list has " +
                         std::to_string(call.present.size()) + " entries for " +
                         std::to_string(call.inputs.size()) + " inputs");
  Status s = checkAccumulate(*call.attrs);
  if (s)
    s = e->check(call);
  return s.withContext("op '" + call.op + "'");
}

Status prepareKernel(OpCall &call) {
  const KernelEntry *e = find(call.op);
  if (!e || !e->prepare)
    return Status::ok();
  return e->prepare(call, call.prepared).withContext("op '" + call.op + "'");
}

Status runKernel(const OpCall &call, CpuContext &ctx) {
  const KernelEntry *e = find(call.op);
  if (!e)
    return Status::error("the CPU backend has no kernel for op '" + call.op +
                         "'");
  if (Status s = e->run(call, ctx); !s)
    return s.withContext("op '" + call.op + "'");
  return Status::ok();
}

bool isInPlaceUpdateKernel(const std::string &op) {
  return op == "sgd_update" || op == "momentum_update" || op == "adam_update" ||
         op == "adagrad_update";
}

std::vector<std::string> kernelNames() { return namesOf(table()); }

} // namespace ampc::rt::cpu
