//===- Check.h - what a kernel call must be, on every backend -------------===//
//
// The kernel ops (Elementwise.def and Ops.def) and the check of a call of
// one, made without data when a Program is loaded: arity, dtypes, shapes
// and attributes, with a message that names the op and the mismatch. Every
// backend runs only calls that passed it, so a backend's own code checks
// nothing the op's semantics decide.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_CHECK_H
#define AMPC_RUNTIME_OPS_CHECK_H

#include "runtime/Status.h"
#include "runtime/ops/OpCall.h"

#include <string>
#include <vector>

namespace ampc::rt::ops {

// Which outputs of a kernel may be the memory of an input.
enum class Aliasing {
  // None: outputs never overlay inputs.
  None,
  // Reads element i of each input before writing element i, so its output
  // may be exactly one of its inputs ("fused" and the elementwise ops).
  Elementwise,
  // Reads element i of every input before writing element i of any output,
  // so every output may overlay the input it replaces (same address, shape
  // and dtype): the optimizer updates.
  InPlaceUpdate,
};

struct KernelOp {
  const char *name;
  Status (*check)(const OpCall &);
  Aliasing aliasing;
};

// Null when no kernel op has that name.
const KernelOp *findKernelOp(const std::string &name);

// Every kernel op, sorted by name.
const std::vector<KernelOp> &kernelOps();

// Checks that the op exists and that its inputs, outputs, dtypes, shapes and
// attributes are consistent. Data pointers are not looked at.
Status checkKernel(const OpCall &call);

// Aliasing::None for an op that is not a kernel op.
Aliasing aliasingOf(const std::string &op);

// The checks of Ops.def's rows, one family per file (<Family>Checks.cpp).
#define AMPC_OP(name, check, aliasing) Status check(const OpCall &call);
#include "runtime/ops/Ops.def"

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_CHECK_H
