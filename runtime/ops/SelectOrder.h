//===- SelectOrder.h - the order arg_max and top_k select in -------------===//
//
// One definition for both backends (AMPC_HOST_DEVICE): which of two values
// a selection of the largest (or smallest) takes first. A NaN is larger
// than every number, as in PyTorch's max and topk; two NaNs are equal.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_SELECTORDER_H
#define AMPC_RUNTIME_OPS_SELECTORDER_H

#include "runtime/ops/HostDevice.h"

namespace ampc::rt::ops {

template <typename T>
AMPC_HOST_DEVICE bool selectsBefore(T a, T b, bool largest) {
  bool nanA = a != a, nanB = b != b;
  if (nanA || nanB)
    return nanA != nanB && (nanA ? largest : !largest);
  return largest ? a > b : a < b;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_SELECTORDER_H
