//===- PoolingChecks.cpp - what pooling calls must be ---------------------===//
//
// max_pool2d, avg_pool2d and global_avg_pool, and the gradients of the
// first two. Window geometry (ceil mode, pads, the output size) is
// WindowGeometry.h's planPool, the one every backend runs with; a
// gradient's grad must have the shape its forward op gives.
//
//===----------------------------------------------------------------------===//
#include "runtime/ops/Check.h"

#include "runtime/ops/CallChecks.h"
#include "runtime/ops/Shapes.h"
#include "runtime/ops/WindowGeometry.h"

#include <algorithm>

namespace ampc::rt::ops {
namespace {

Status checkPool(const OpCall &call, bool isMax) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(*call.attrs, x.shape, isMax, p));
  return checkOutput(call, 0, "output", Shape{p.n, p.c, p.oh, p.ow}, x.dtype);
}

Status checkGradShape(const TensorView &grad, const PoolPlan &p,
                      const char *forward, const char *of) {
  Shape fwd{p.n, p.c, p.oh, p.ow};
  if (grad.shape != fwd)
    return Status::error("grad has shape " + shapeStr(grad.shape) + " but " +
                         forward + " of " + of + " gives " + shapeStr(fwd));
  return Status::ok();
}

} // namespace

Status checkMaxPool(const OpCall &call) { return checkPool(call, true); }
Status checkAvgPool(const OpCall &call) { return checkPool(call, false); }

Status checkGlobalAvgPool(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &x = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(x, "input"));
  if (x.rank() < 3)
    return Status::error("input must be [N, C, spatial...] of rank >= 3, got " +
                         shapeStr(x.shape));
  Shape out = x.shape;
  std::fill(out.begin() + 2, out.end(), 1);
  return checkOutput(call, 0, "output", out, x.dtype);
}

Status checkMaxPoolGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 2, 2, 1));
  const TensorView &g = call.inputs[0], &x = call.inputs[1];
  AMPC_RETURN_IF_ERROR(checkFloat(g, "grad"));
  AMPC_RETURN_IF_ERROR(checkSameDType(x, "input", g.dtype, "grad"));
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planPool(*call.attrs, x.shape, /*isMax=*/true, p));
  AMPC_RETURN_IF_ERROR(checkGradShape(g, p, "max_pool2d", "the input"));
  return checkOutput(call, 0, "output", x.shape, g.dtype);
}

Status checkAvgPoolGrad(const OpCall &call) {
  AMPC_RETURN_IF_ERROR(checkArity(call, 1, 1, 1));
  const TensorView &g = call.inputs[0];
  AMPC_RETURN_IF_ERROR(checkFloat(g, "grad"));
  AMPC_RETURN_IF_ERROR(
      checkSameDType(call.outputs[0], "output", g.dtype, "grad"));
  PoolPlan p;
  AMPC_RETURN_IF_ERROR(planAvgPoolGrad(*call.attrs, call.outputs[0].shape, p));
  return checkGradShape(g, p, "avg_pool2d", "the output shape");
}

} // namespace ampc::rt::ops
