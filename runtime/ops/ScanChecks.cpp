//===- ScanChecks.cpp - what arg_max, cumsum and top_k calls must be ------===//
//
// Ops along one axis (AxisPlan.h): an index of the maximum, a running sum,
// the k largest or smallest elements.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/ReducePlan.h"
#include "runtime/ops/Shapes.h"

namespace ampc::rt::ops {

Status checkArgMax(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkNumeric(x, "input"));
  int64_t axis = 0;
  bool keep = true, last = false;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(getBool(*call.attrs, "keepdims", keep));
  AMPC_RETURN_IF_ERROR(getBool(*call.attrs, "select_last_index", last));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  if (x.shape[axis] == 0)
    return Status::error("axis " + std::to_string(axis) + " of " +
                         shapeStr(x.shape) + " is empty: it has no maximum");
  return checkOutput(call, 0, "output", reducedShape(x.shape, {axis}, keep),
                     DType::I64);
}

Status checkCumSum(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkNumeric(x, "input"));
  int64_t axis = 0;
  bool exclusive = false, reverse = false;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(getBool(*call.attrs, "exclusive", exclusive));
  AMPC_RETURN_IF_ERROR(getBool(*call.attrs, "reverse", reverse));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  return checkOutput(call, 0, "output", x.shape, x.dtype);
}

Status checkTopK(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 2));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkNumeric(x, "input"));
  int64_t axis = 0, k = 0;
  bool largest = true;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "k", k));
  AMPC_RETURN_IF_ERROR(getBool(*call.attrs, "largest", largest));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  if (k < 0 || k > x.shape[axis])
    return Status::error("k = " + std::to_string(k) + " is not in [0, " +
                         std::to_string(x.shape[axis]) +
                         "], the size of axis " + std::to_string(axis));
  Shape out = x.shape;
  out[axis] = k;
  AMPC_RETURN_IF_ERROR(checkOutput(call, 0, "values", out, x.dtype));
  return checkOutput(call, 1, "indices", out, DType::I64);
}

} // namespace ampc::rt::ops
