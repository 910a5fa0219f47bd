//===- ElementwisePlan.cpp - elementwise type rules, attributes, plans ----===//
#include "runtime/ops/ElementwisePlan.h"

#include "runtime/ops/AttrReaders.h"

#include <cmath>
#include <iterator>

namespace ampc::rt::ops::ew {
namespace {

constexpr OpInfo kOps[] = {
#define AMPC_EW(name, kind, sig, expr) {#name, Kind::kind, Sig::sig},
#include "runtime/ops/Elementwise.def"
};

std::string dt(DType t) { return std::string(name(t)); }

Status checkTypes(const OpInfo &op, const std::vector<DType> &in, DType out) {
  auto mismatch = [&](const char *what, DType got, DType want) {
    return Status::error(std::string(what) + " has dtype " + dt(got) + " but " +
                         dt(want) + " was expected");
  };
  switch (op.sig) {
  case Sig::FloatUnary:
  case Sig::NumUnary:
    if (op.sig == Sig::FloatUnary ? !isFloat(in[0]) : in[0] == DType::I1)
      return Status::error(std::string("input has dtype ") + dt(in[0]) +
                           ", which the op does not accept (" +
                           (op.sig == Sig::FloatUnary ? "float types only"
                                                      : "numeric types only") +
                           ")");
    if (out != in[0])
      return mismatch("output", out, in[0]);
    return Status::ok();
  case Sig::NumBinary:
  case Sig::FloatBinary:
  case Sig::Grad: {
    bool floatOnly = op.sig != Sig::NumBinary;
    for (int k = 0; k < 2; ++k)
      if (floatOnly ? !isFloat(in[k]) : in[k] == DType::I1)
        return Status::error(
            std::string(operandName(op.sig, k)) + " has dtype " + dt(in[k]) +
            ", which the op does not accept (" +
            (floatOnly ? "float types only" : "numeric types only") + ")");
    if (in[1] != in[0])
      return Status::error(std::string(operandName(op.sig, 0)) + " has dtype " +
                           dt(in[0]) + " but " + operandName(op.sig, 1) +
                           " has " + dt(in[1]));
    if (out != in[0])
      return mismatch("output", out, in[0]);
    return Status::ok();
  }
  case Sig::Where:
    if (in[0] != DType::I1)
      return mismatch("condition", in[0], DType::I1);
    if (in[2] != in[1])
      return Status::error("x has dtype " + dt(in[1]) + " but y has " +
                           dt(in[2]));
    if (out != in[1])
      return mismatch("output", out, in[1]);
    return Status::ok();
  case Sig::Compare:
    if (in[1] != in[0])
      return Status::error("lhs has dtype " + dt(in[0]) + " but rhs has " +
                           dt(in[1]));
    if (out != DType::I1)
      return mismatch("output", out, DType::I1);
    return Status::ok();
  case Sig::BoolUnary:
  case Sig::BoolBinary:
    for (int k = 0; k < arity(op.sig); ++k)
      if (in[k] != DType::I1)
        return mismatch(operandName(op.sig, k), in[k], DType::I1);
    if (out != DType::I1)
      return mismatch("output", out, DType::I1);
    return Status::ok();
  case Sig::Cast:
    return Status::ok();
  }
  return Status::ok();
}

Status floatAttr(const Attrs &attrs, const char *key, int32_t &has, double &v) {
  const AttrValue *a = attrs.find(key);
  has = a != nullptr;
  if (!a)
    return Status::ok();
  if (a->kind != AttrValue::Kind::Float)
    return Status::error(std::string("attribute '") + key +
                         "' must be a float");
  v = a->f;
  return Status::ok();
}

} // namespace

const OpInfo *findOp(std::string_view name) {
  for (const OpInfo &o : kOps)
    if (name == o.name)
      return &o;
  return nullptr;
}

const std::vector<OpInfo> &allOps() {
  static const std::vector<OpInfo> ops(std::begin(kOps), std::end(kOps));
  return ops;
}

int arity(Sig s) {
  switch (s) {
  case Sig::NumBinary:
  case Sig::FloatBinary:
  case Sig::Grad:
  case Sig::Compare:
  case Sig::BoolBinary:
    return 2;
  case Sig::Where:
    return 3;
  default:
    return 1;
  }
}

const char *operandName(Sig s, int k) {
  static const char *binary[] = {"lhs", "rhs"};
  static const char *where[] = {"condition", "x", "y"};
  static const char *grad[] = {"grad", "input"};
  switch (s) {
  case Sig::Grad:
    return grad[k];
  case Sig::NumBinary:
  case Sig::FloatBinary:
  case Sig::Compare:
  case Sig::BoolBinary:
    return binary[k];
  case Sig::Where:
    return where[k];
  default:
    return "input";
  }
}

Status parseAttrs(const OpInfo &op, const Attrs &attrs, Params &p) {
  switch (op.kind) {
  case Kind::Gelu:
  case Kind::GeluGrad: {
    std::string approximate;
    AMPC_RETURN_IF_ERROR(getString(attrs, "approximate", approximate));
    if (approximate != "none" && approximate != "tanh")
      return Status::error("attribute 'approximate' must be \"none\" or "
                           "\"tanh\", got \"" +
                           approximate + "\"");
    p.geluTanh = approximate == "tanh";
    return Status::ok();
  }
  case Kind::LeakyRelu:
  case Kind::LeakyReluGrad:
    return getFloat(attrs, "alpha", p.alpha);
  case Kind::HardSigmoid:
  case Kind::HardSigmoidGrad:
    AMPC_RETURN_IF_ERROR(getFloat(attrs, "alpha", p.alpha));
    return getFloat(attrs, "beta", p.beta);
  case Kind::Clip:
  case Kind::ClipGrad: {
    AMPC_RETURN_IF_ERROR(floatAttr(attrs, "min", p.hasMin, p.min));
    AMPC_RETURN_IF_ERROR(floatAttr(attrs, "max", p.hasMax, p.max));
    if ((p.hasMin && std::isnan(p.min)) || (p.hasMax && std::isnan(p.max)))
      return Status::error("clip bounds must not be NaN");
    if (p.hasMin && p.hasMax && p.min > p.max)
      return Status::error("attribute 'min' (" + std::to_string(p.min) +
                           ") is greater than 'max' (" + std::to_string(p.max) +
                           ")");
    return Status::ok();
  }
  default:
    return Status::ok();
  }
}

Status readActivation(std::string_view op, const Attrs &attrs,
                      const OpInfo *&info, Params &p) {
  info = findOp(op);
  if (!info || (info->sig != Sig::FloatUnary && info->sig != Sig::Grad))
    return Status::error("'" + std::string(op) +
                         "' is not a float activation or activation gradient");
  return parseAttrs(*info, attrs, p);
}

namespace {

// Validates one step against the dtypes and shapes of what it reads.
// `stepIndex` < 0 for a standalone op. Operand shapes and dtypes of earlier
// steps are the output shape and the step dtype.
Status checkStep(const OpCall &call, const std::string &opName,
                 const Attrs &attrs, const std::vector<int> &operands,
                 DType dtype, int stepIndex, const Plan &plan, PlanStep &out) {
  const OpInfo *op = findOp(opName);
  if (!op)
    return Status::error("'" + opName + "' is not an elementwise op");
  int n = arity(op->sig);
  if (static_cast<int>(operands.size()) != n)
    return Status::error("takes " + std::to_string(n) + " operand" +
                         (n == 1 ? "" : "s") + ", got " +
                         std::to_string(operands.size()));
  const Shape &outShape = call.outputs[0].shape;
  std::vector<DType> types;
  Shape computed;
  for (int k = 0; k < n; ++k) {
    int ref = operands[k];
    DType t;
    Shape s;
    if (ref >= 0) {
      if (ref >= static_cast<int>(call.inputs.size()))
        return Status::error(std::string(operandName(op->sig, k)) +
                             " refers to kernel input " + std::to_string(ref) +
                             " but there are " +
                             std::to_string(call.inputs.size()) + " inputs");
      if (!call.present[ref])
        return Status::error(std::string(operandName(op->sig, k)) +
                             " refers to kernel input " + std::to_string(ref) +
                             ", which is absent");
      t = call.inputs[ref].dtype;
      s = call.inputs[ref].shape;
    } else {
      int src = -ref - 1;
      if (stepIndex < 0 || src >= stepIndex)
        return Status::error(std::string(operandName(op->sig, k)) +
                             " refers to step " + std::to_string(src) +
                             ", which is not computed before this step");
      t = plan.steps[src].dtype;
      s = outShape;
    }
    types.push_back(t);
    if (k == 0) {
      computed = s;
    } else if (!broadcastShapes(computed, s, computed)) {
      std::string names;
      for (int j = 0; j <= k; ++j)
        names += std::string(j ? ", " : "") + operandName(op->sig, j);
      return Status::error("operand shapes do not broadcast (" + names + "; " +
                           operandName(op->sig, k) + " has shape " + str(s) +
                           ")");
    }
  }
  AMPC_RETURN_IF_ERROR(checkTypes(*op, types, dtype));
  if (computed != outShape)
    return Status::error(
        stepIndex < 0 ? "output 0 has shape " + str(outShape) +
                            " but the op computes " + str(computed)
                      : "computes shape " + str(computed) +
                            " but every step must have the output shape " +
                            str(outShape));
  out.op = op;
  out.operands = operands;
  out.dtype = dtype;
  return parseAttrs(*op, attrs, out.params);
}

} // namespace

Status buildPlan(const OpCall &call, Plan &plan) {
  if (call.outputs.size() != 1)
    return Status::error("expects 1 output, got " +
                         std::to_string(call.outputs.size()));
  if (call.op != "fused") {
    const OpInfo *op = findOp(call.op);
    int n = op ? arity(op->sig) : 0;
    if (op && static_cast<int>(call.inputs.size()) != n)
      return Status::error("expects " + std::to_string(n) + " input" +
                           (n == 1 ? "" : "s") + ", got " +
                           std::to_string(call.inputs.size()));
    std::vector<int> operands;
    for (int k = 0; k < n; ++k)
      operands.push_back(k);
    plan.steps.emplace_back();
    return checkStep(call, call.op, *call.attrs, operands,
                     call.outputs[0].dtype, -1, plan, plan.steps.back());
  }
  if (!call.steps || call.steps->empty())
    return Status::error("has no steps");
  const Shape &outShape = call.outputs[0].shape;
  for (size_t k = 0; k < call.inputs.size(); ++k)
    if (call.present[k] && !broadcastsTo(call.inputs[k].shape, outShape))
      return Status::error("input " + std::to_string(k) + " of shape " +
                           str(call.inputs[k].shape) +
                           " does not broadcast to the output shape " +
                           str(outShape));
  const std::vector<FusedStep> &steps = *call.steps;
  plan.steps.resize(steps.size());
  for (size_t s = 0; s < steps.size(); ++s)
    AMPC_RETURN_IF_ERROR(checkStep(call, steps[s].op, steps[s].attrs,
                                   steps[s].operands, steps[s].dtype,
                                   static_cast<int>(s), plan, plan.steps[s])
                             .withContext("step " + std::to_string(s) + " ('" +
                                          steps[s].op + "')"));
  if (steps.back().dtype != call.outputs[0].dtype)
    return Status::error("the last step has dtype " + dt(steps.back().dtype) +
                         " but output 0 has " + dt(call.outputs[0].dtype));
  return Status::ok();
}

} // namespace ampc::rt::ops::ew
