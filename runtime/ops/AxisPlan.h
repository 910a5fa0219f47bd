//===- AxisPlan.h - a tensor viewed as [outer, axis, inner] ---------------===//
//
// The ops that work along one axis (arg_max, cumsum, top_k) see their input
// as `outer` rows of `len` elements `inner` apart. The checks read the
// attributes and both backends walk the same view.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_AXISPLAN_H
#define AMPC_RUNTIME_OPS_AXISPLAN_H

#include "runtime/ops/Shapes.h"

namespace ampc::rt::ops {

struct AxisView {
  int64_t outer = 1, len = 1, inner = 1;
};

// `axis` must be in [0, shape.size()) (the checks see to it).
inline AxisView axisView(const Shape &shape, int64_t axis) {
  auto a = static_cast<size_t>(axis);
  return {product(shape, 0, a), shape[a], product(shape, a + 1, shape.size())};
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_AXISPLAN_H
