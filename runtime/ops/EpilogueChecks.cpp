//===- EpilogueChecks.cpp - what a gemm call's epilogue must be -----------===//
#include "runtime/ops/EpilogueChecks.h"

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/ElementwisePlan.h"
#include "runtime/ops/Shapes.h"

#include <string>

namespace ampc::rt::ops {

Status readEpilogue(const Attrs &attrs, const EpilogueInfo *&out) {
  out = nullptr;
  const AttrValue *a;
  AMPC_RETURN_IF_ERROR(attrOfKind(attrs, "epilogue", AttrValue::Kind::String,
                                  /*required=*/false, a));
  if (!a)
    return Status::ok();
  out = findEpilogue(a->s);
  if (!out)
    return Status::error("attribute 'epilogue' is '" + a->s +
                         "', which is none of " + epilogueNames());
  return Status::ok();
}

Status checkEpilogue(const OpCall &call, const EpilogueInfo &e, int64_t m,
                     int64_t n, bool transA) {
  const std::string what = "epilogue '" + std::string(e.name) + "'";
  const TensorView &a = call.inputs[0];
  if (!isFloat(a.dtype))
    return Status::error(what + " needs float operands, got " +
                         std::string(name(a.dtype)));
  if (hasInput(call, 2) && !e.takesBias())
    return Status::error(what + " adds no c, but c is present");
  Shape mn{m, n};
  if (e.hasExtraInput()) {
    const std::string in3 = "input 3 (the forward value " + what + " reads)";
    if (!hasInput(call, 3))
      return Status::error(in3 + " is absent");
    AMPC_RETURN_IF_ERROR(checkSameDType(call.inputs[3], in3, a.dtype, "a"));
    if (call.inputs[3].shape != mn)
      return Status::error(in3 + " has shape " +
                           shapeStr(call.inputs[3].shape) +
                           " but the gemm's output is " + shapeStr(mn));
  }
  switch (e.role) {
  case EpilogueRole::ActivationAux:
    AMPC_RETURN_IF_ERROR(
        checkOutput(call, 1, "output 1 (the pre-activation)", mn, a.dtype));
    break;
  case EpilogueRole::BiasGradient: {
    // Summing a's rows is a reduction over the GEMM's k only when a is
    // transposed (dW = dY^T X): the form cuBLASLt's BGRAD epilogues have.
    if (!transA)
      return Status::error(what + " sums a over axis 0, which is the "
                                  "contracted dim only with trans_a");
    const TensorView &db = call.outputs[1];
    if (db.shape != Shape{1, m} && db.shape != Shape{m})
      return Status::error("output 1 (the column sums of a) has shape " +
                           shapeStr(db.shape) + " but " + what + " computes " +
                           shapeStr(Shape{1, m}) + " (or " +
                           shapeStr(Shape{m}) + ")");
    if (db.dtype != a.dtype)
      return Status::error("output 1 (the column sums of a) has element "
                           "type " +
                           std::string(name(db.dtype)) + " but a has " +
                           std::string(name(a.dtype)));
    return Status::ok();
  }
  default:
    break;
  }
  // The op the epilogue applies, as the CPU's Activation::make (and the
  // standalone elementwise op) reads it: a float activation or activation
  // gradient, with its attributes (gelu's `approximate`) on the gemm call.
  const ew::OpInfo *info;
  ew::Params params;
  return ew::readActivation(e.op, *call.attrs, info, params).withContext(what);
}

} // namespace ampc::rt::ops
