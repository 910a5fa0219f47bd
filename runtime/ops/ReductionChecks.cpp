//===- ReductionChecks.cpp - what reduction and softmax calls must be -----===//
//
// reduce_sum/mean/max and reduce_max_grad (the 'axes'/'keepdims' rules of
// ReducePlan.h), softmax and log_softmax and their gradients.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/CallChecks.h"
#include "runtime/ops/ReducePlan.h"
#include "runtime/ops/Shapes.h"

#include <optional>
#include <vector>

namespace ampc::rt::ops {

//===----------------------------------------------------------------------===//
// reduce_sum / reduce_mean / reduce_max
//===----------------------------------------------------------------------===//

Status checkReduce(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkNumeric(x, "input"));
  std::vector<int64_t> axes;
  bool keep;
  AMPC_RETURN_IF_ERROR(readReduceAttrs(*call.attrs, x.rank(), axes, keep));
  return checkOutput(call, 0, "output", reducedShape(x.shape, axes, keep),
                     x.dtype);
}

//===----------------------------------------------------------------------===//
// reduce_max_grad
//===----------------------------------------------------------------------===//

// (grad, input, output_value) -> d input: each group's grad shared evenly by
// the elements equal to its maximum (NaN counts as equal to a NaN maximum,
// the element the forward propagated).
Status checkReduceMaxGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 3, 3, 1));
  const TensorView &g = call.inputs[0], &x = call.inputs[1],
                   &m = call.inputs[2];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  AMPC_RETURN_IF_ERROR(checkSameDType(g, "grad", x.dtype, "input"));
  AMPC_RETURN_IF_ERROR(checkSameDType(m, "output_value", x.dtype, "input"));
  std::vector<int64_t> axes;
  bool keep = true;
  AMPC_RETURN_IF_ERROR(readReduceAttrs(*call.attrs, x.rank(), axes, keep));
  Shape reduced = reducedShape(x.shape, axes, keep);
  if (g.shape != reduced)
    return Status::error("grad has shape " + shapeStr(g.shape) +
                         " but reduce_max of the input gives " +
                         shapeStr(reduced));
  if (m.shape != reduced)
    return Status::error("output_value has shape " + shapeStr(m.shape) +
                         " but reduce_max of the input gives " +
                         shapeStr(reduced));
  return checkOutput(call, 0, "output", x.shape, x.dtype);
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax
//===----------------------------------------------------------------------===//

Status checkSoftmax(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, x.rank()));
  return checkOutput(call, 0, "output", x.shape, x.dtype);
}

//===----------------------------------------------------------------------===//
// softmax_grad / log_softmax_grad
//===----------------------------------------------------------------------===//

Status checkSoftmaxGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 2, 1));
  const TensorView &g = call.inputs[0], &y = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkFloat(g, "grad"));
  AMPC_RETURN_IF_ERROR(checkSameDType(y, "output", g.dtype, "grad"));
  if (y.shape != g.shape)
    return Status::error("output has shape " + shapeStr(y.shape) +
                         " but grad has " + shapeStr(g.shape));
  int64_t axis = 0;
  AMPC_RETURN_IF_ERROR(getInt(*call.attrs, "axis", axis));
  AMPC_RETURN_IF_ERROR(checkAxis(axis, g.rank()));
  return checkOutput(call, 0, "input_grad", g.shape, g.dtype);
}

} // namespace ampc::rt::ops
