//===- ElementwisePlan.h - an elementwise call checked and planned --------===//
//
// The elementwise ops of Elementwise.def and "fused" chains of them, as
// every backend reads a call: the type rules of each op, its attributes
// parsed, and the plan of steps (operands, dtypes) a kernel walks. A
// call passes the check exactly when its plan builds, and both backends run
// from the plan, so they cannot read a call differently.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_ELEMENTWISEPLAN_H
#define AMPC_RUNTIME_OPS_ELEMENTWISEPLAN_H

#include "runtime/Status.h"
#include "runtime/ops/ElementwiseValue.h"
#include "runtime/ops/OpCall.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace ampc::rt::ops::ew {

enum class Kind {
#define AMPC_EW(name, kind, sig, expr) kind,
#include "runtime/ops/Elementwise.def"
};

// How an op's operand and result dtypes relate.
// Grad: (grad, input) -> d loss / d input, all one float dtype.
// Compare: (lhs, rhs) of one dtype, any -> i1.
// BoolUnary, BoolBinary: i1 operands -> i1.
enum class Sig {
  FloatUnary,
  NumUnary,
  NumBinary,
  FloatBinary,
  Where,
  Cast,
  Grad,
  Compare,
  BoolUnary,
  BoolBinary
};

// Whether `s` is a predicate: its value is a bool, stored as i1.
inline bool isPredicate(Sig s) {
  return s == Sig::Compare || s == Sig::BoolUnary || s == Sig::BoolBinary;
}

struct OpInfo {
  const char *name;
  Kind kind;
  Sig sig;
};

// Null when `name` is not an elementwise op ("fused" is not one).
const OpInfo *findOp(std::string_view name);

// The ops of Elementwise.def, in its order.
const std::vector<OpInfo> &allOps();

int arity(Sig s);
const char *operandName(Sig s, int k);

// Checks and reads `op`'s attributes into Params (ElementwiseValue.h) (gelu's
// approximate, leaky_relu's alpha, clip's bounds, hard_sigmoid's alpha and
// beta).
Status parseAttrs(const OpInfo &op, const Attrs &attrs, Params &p);

// `op` as an activation (a FloatUnary op) or an activation gradient (a Grad
// op) that a kernel applies to values it holds (the GEMM epilogues), with
// its attributes read from `attrs`.
Status readActivation(std::string_view op, const Attrs &attrs,
                      const OpInfo *&info, Params &p);

struct PlanStep {
  const OpInfo *op = nullptr;
  Params params;
  std::vector<int> operands; // >= 0: kernel input; < 0: step -k-1
  DType dtype = DType::F32;
};

struct Plan {
  std::vector<PlanStep> steps;
};

// Checks a standalone elementwise call (one step) or a "fused" one (its
// steps, FusedStep's operand rules) and plans it.
Status buildPlan(const OpCall &call, Plan &plan);

// A bound of clip for an integer dtype: the nearest value of the dtype
// inside [min, max], so an integer result never leaves the bounds.
inline int64_t intBound(double v, bool lower, DType t) {
  double lo = t == DType::I32 ? -2147483648.0 : -9223372036854775808.0;
  double hi = t == DType::I32 ? 2147483647.0 : 9223372036854775807.0;
  v = lower ? std::ceil(v) : std::floor(v);
  if (v <= lo)
    return t == DType::I32 ? std::numeric_limits<int32_t>::min()
                           : std::numeric_limits<int64_t>::min();
  if (v >= hi)
    return t == DType::I32 ? std::numeric_limits<int32_t>::max()
                           : std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(v);
}

} // namespace ampc::rt::ops::ew

#endif // AMPC_RUNTIME_OPS_ELEMENTWISEPLAN_H
