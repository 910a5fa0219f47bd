//===- ContractionChecks.cpp - what matmul, gemm and conv2d calls must be -===//
#include "runtime/ops/Check.h"

#include "runtime/ops/CallChecks.h"
#include "runtime/ops/ContractionPlan.h"
#include "runtime/ops/EpilogueChecks.h"
#include "runtime/ops/Shapes.h"
#include "runtime/ops/WindowGeometry.h"

#include <string>

namespace ampc::rt::ops {
namespace {

// The forward output shape the plan gives must be grad's shape.
Status checkGradShape(const TensorView &grad, const ConvPlan &p,
                      const std::string &what) {
  Shape fwd{p.n, p.o, p.oh, p.ow};
  if (grad.shape != fwd)
    return Status::error("grad has shape " + shapeStr(grad.shape) +
                         " but conv2d of " + what + " gives " + shapeStr(fwd));
  return Status::ok();
}

// `other` is the filter (backward data) or the input (backward filter).
Status checkOperands(const OpCall &call, const char *other) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 2, 1));
  const TensorView &g = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(g, "grad"));
  AMPC_RETURN_IF_ERROR(checkSameDType(call.inputs[1], other, g.dtype, "grad"));
  const TensorView &out = call.outputs[0];
  return checkSameDType(out, "output", g.dtype, "grad");
}

} // namespace

Status checkMatmul(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 2, 1));
  const TensorView &a = call.inputs[0], &b = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkNumeric(a, "lhs"));
  AMPC_RETURN_IF_ERROR(checkSameDType(b, "rhs", a.dtype, "lhs"));
  MatmulPlan p;
  AMPC_RETURN_IF_ERROR(planMatmul(a.shape, b.shape, p));
  return checkOutput(call, 0, "output", p.out, a.dtype);
}

Status checkGemm(const OpCall &call) {
  const EpilogueInfo *epi = nullptr;
  if (call.attrs)
    AMPC_RETURN_IF_ERROR(readEpilogue(*call.attrs, epi));
  // With an epilogue, c keeps its slot (-1 when absent) before the
  // epilogue's input.
  size_t inputs = 3 + (epi && epi->hasExtraInput() ? 1 : 0);
  size_t outputs = 1 + (epi && epi->hasExtraOutput() ? 1 : 0);
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, inputs, outputs));
  if (epi && call.inputs.size() != inputs)
    return Status::error("with epilogue '" + std::string(epi->name) +
                         "' expects " + std::to_string(inputs) +
                         " inputs (c absent or not), got " +
                         std::to_string(call.inputs.size()));
  GemmAttrs g;
  AMPC_RETURN_IF_ERROR(readGemmAttrs(*call.attrs, g));
  const TensorView &a = call.inputs[0], &b = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkNumeric(a, "a"));
  AMPC_RETURN_IF_ERROR(checkSameDType(b, "b", a.dtype, "a"));
  if (a.rank() != 2 || b.rank() != 2)
    return Status::error("a and b must be 2-D, got " + shapeStr(a.shape) +
                         " and " + shapeStr(b.shape));
  int64_t m = g.transA ? a.shape[1] : a.shape[0];
  int64_t k1 = g.transA ? a.shape[0] : a.shape[1];
  int64_t k2 = g.transB ? b.shape[1] : b.shape[0];
  int64_t n = g.transB ? b.shape[0] : b.shape[1];
  if (k1 != k2)
    return Status::error("contracting dimensions differ: a " +
                         shapeStr(a.shape) + (g.transA ? " (transposed)" : "") +
                         " has " + std::to_string(k1) + ", b " +
                         shapeStr(b.shape) + (g.transB ? " (transposed)" : "") +
                         " has " + std::to_string(k2));
  Shape out{m, n};
  if (hasInput(call, 2)) {
    const TensorView &c = call.inputs[2];
    AMPC_RETURN_IF_ERROR(checkSameDType(c, "c", a.dtype, "a"));
    if (!broadcastsTo(c.shape, out))
      return Status::error("c of shape " + shapeStr(c.shape) +
                           " does not broadcast to " + shapeStr(out));
  }
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "output", out, a.dtype));
  return epi ? checkEpilogue(call, *epi, m, n, g.transA) : Status::ok();
}

Status checkConv(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 3, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  AMPC_RETURN_IF_ERROR(
      checkSameDType(call.inputs[1], "filter", x.dtype, "input"));
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConv(*call.attrs, x.shape, call.inputs[1].shape, p));
  if (hasInput(call, 2)) {
    const TensorView &bias = call.inputs[2];
    AMPC_RETURN_IF_ERROR(checkSameDType(bias, "bias", x.dtype, "input"));
    if (bias.shape != Shape{p.o})
      return Status::error("bias must have shape [" + std::to_string(p.o) +
                           "], got " + shapeStr(bias.shape));
  }
  return checkOutput(call, 0, "output", Shape{p.n, p.o, p.oh, p.ow}, x.dtype);
}

Status checkConvBackwardData(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkOperands(call, "filter"));
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardData(call, p));
  return checkGradShape(call.inputs[0], p, "the output shape and the filter");
}

Status checkConvBackwardFilter(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkOperands(call, "input"));
  ConvPlan p;
  AMPC_RETURN_IF_ERROR(planConvBackwardFilter(call, p));
  return checkGradShape(call.inputs[0], p, "the input and the output shape");
}

} // namespace ampc::rt::ops
