//===- ReducePlan.h - the reduced and kept dimensions of a reduction ------===//
//
// The 'axes'/'keepdims' checks, the output shape and the dimension plan that
// reduce_sum/mean/max and reduce_max_grad share (ReductionChecks.cpp, the
// CPU kernels, and the CUDA kernels' merged dims), so the gradient walks
// exactly the groups its forward reduced. The plan drops size-1 dims and
// merges adjacent dims of the same kind (reduced or kept): a group is then
// whole contiguous rows (the last dim reduced) or one column across rows
// (the last dim kept).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_REDUCEPLAN_H
#define AMPC_RUNTIME_OPS_REDUCEPLAN_H

#include "runtime/ops/AttrReaders.h"
#include "runtime/ops/Shapes.h"

#include <algorithm>
#include <vector>

namespace ampc::rt::ops {

inline bool isReducedAxis(const std::vector<int64_t> &axes, size_t dim) {
  return std::find(axes.begin(), axes.end(), static_cast<int64_t>(dim)) !=
         axes.end();
}

// 'axes' must list dims of a rank-`rank` input, each once (an empty list is
// not "all of them": the op spells that out); 'keepdims' defaults to true.
inline Status readReduceAttrs(const Attrs &attrs, int64_t rank,
                              std::vector<int64_t> &axes, bool &keepdims) {
  AMPC_RETURN_IF_ERROR(getInts(attrs, "axes", axes));
  AMPC_RETURN_IF_ERROR(getBool(attrs, "keepdims", keepdims));
  if (axes.empty())
    return Status::error("attribute 'axes' is empty (list every axis to "
                         "reduce over all of them)");
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= rank)
      return Status::error("reduction axis " + std::to_string(a) +
                           " is out of range for rank " + std::to_string(rank));
    if (seen[a])
      return Status::error("reduction axis " + std::to_string(a) +
                           " is repeated");
    seen[a] = true;
  }
  return Status::ok();
}

// The output shape: reduced dims dropped, or kept as 1 with keepdims.
inline Shape reducedShape(const Shape &in, const std::vector<int64_t> &axes,
                          bool keepdims) {
  Shape out;
  for (size_t i = 0; i < in.size(); ++i)
    if (!isReducedAxis(axes, i))
      out.push_back(in[i]);
    else if (keepdims)
      out.push_back(1);
  return out;
}

// The input's dims merged: size-1 dims dropped, adjacent reduced (or kept)
// dims made one. An input with no dim above 1 is one reduced dim of 1.
struct ReduceDims {
  std::vector<int64_t> dims, strides; // merged dims, row-major strides
  std::vector<bool> reduced;
  int64_t count = 1; // input elements reduced into each output
};

inline ReduceDims mergeReduceDims(const Shape &shape,
                                  const std::vector<int64_t> &axes) {
  ReduceDims p;
  for (size_t i = 0; i < shape.size(); ++i) {
    bool red = isReducedAxis(axes, i);
    if (red)
      p.count *= shape[i];
    if (shape[i] == 1)
      continue;
    if (!p.dims.empty() && p.reduced.back() == red) {
      p.dims.back() *= shape[i];
    } else {
      p.dims.push_back(shape[i]);
      p.reduced.push_back(red);
    }
  }
  if (p.dims.empty()) {
    p.dims.push_back(1);
    p.reduced.push_back(true);
  }
  p.strides.assign(p.dims.size(), 1);
  for (size_t i = p.dims.size() - 1; i-- > 0;)
    p.strides[i] = p.strides[i + 1] * p.dims[i + 1];
  return p;
}

// The merged dims and the walk the CPU kernels take over them.
struct ReducePlan : ReduceDims {
  // The kept dims but the last, and the offsets of every combination of the
  // reduced dims but the last (row-major order).
  std::vector<size_t> keptDims;
  std::vector<int64_t> redOffs;

  size_t last() const { return dims.size() - 1; }
  // Input offset where kept-dims combination `idx` (row-major) starts.
  int64_t keptBase(int64_t idx) const {
    int64_t off = 0;
    for (size_t i = keptDims.size(); i-- > 0;) {
      size_t d = keptDims[i];
      off += (idx % dims[d]) * strides[d];
      idx /= dims[d];
    }
    return off;
  }
};

inline ReducePlan planReduce(const Shape &shape,
                             const std::vector<int64_t> &axes) {
  ReducePlan p{mergeReduceDims(shape, axes)};
  p.redOffs = {0};
  for (size_t d = 0; d < p.last(); ++d) {
    if (!p.reduced[d]) {
      p.keptDims.push_back(d);
      continue;
    }
    std::vector<int64_t> next;
    next.reserve(p.redOffs.size() * p.dims[d]);
    for (int64_t o : p.redOffs)
      for (int64_t i = 0; i < p.dims[d]; ++i)
        next.push_back(o + i * p.strides[d]);
    p.redOffs.swap(next);
  }
  return p;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_REDUCEPLAN_H
