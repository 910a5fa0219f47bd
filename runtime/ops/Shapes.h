//===- Shapes.h - shape arithmetic the ops share --------------------------===//
//
// Products of dimensions, dense strides, slices' strided views and numpy
// broadcasting, as the checks, the geometry plans and both backends compute
// them.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_SHAPES_H
#define AMPC_RUNTIME_OPS_SHAPES_H

#include "runtime/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ampc::rt::ops {

inline std::string shapeStr(const Shape &s) { return rt::str(s); }

inline int64_t product(const Shape &s, size_t begin, size_t end) {
  int64_t n = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i)
    n *= s[i];
  return n;
}

// Row-major element strides of a dense tensor of shape `s`.
inline std::vector<int64_t> contiguousStrides(const Shape &s) {
  std::vector<int64_t> st(s.size());
  int64_t acc = 1;
  for (size_t i = s.size(); i-- > 0;) {
    st[i] = acc;
    acc *= s[i];
  }
  return st;
}

// The elements a slice with `starts` and `steps` (checked attributes) takes
// from a dense tensor of shape `full`, which slice_grad writes back: the
// first one's offset and the stride along each dim, in elements.
struct SlicedView {
  int64_t offset = 0;
  std::vector<int64_t> strides;
};
inline SlicedView slicedView(const Shape &full,
                             const std::vector<int64_t> &starts,
                             const std::vector<int64_t> &steps) {
  SlicedView v;
  std::vector<int64_t> dense = contiguousStrides(full);
  for (size_t i = 0; i < full.size(); ++i) {
    v.strides.push_back(dense[i] * steps[i]);
    v.offset += starts[i] * dense[i];
  }
  return v;
}

// For each element of `to` (row-major), the element of a tensor of shape
// `from` that numpy broadcasting (right-aligned) reads.
inline std::vector<int64_t> broadcastIndex(const Shape &from, const Shape &to) {
  int64_t total = numElements(to);
  std::vector<int64_t> out(static_cast<size_t>(total));
  size_t off = to.size() - from.size();
  std::vector<int64_t> strides(to.size(), 0), idx(to.size(), 0);
  int64_t s = 1;
  for (size_t i = to.size(); i-- > off;) {
    int64_t d = from[i - off];
    strides[i] = d == 1 ? 0 : s;
    s *= d;
  }
  for (int64_t flat = 0; flat < total; ++flat) {
    int64_t si = 0;
    for (size_t i = 0; i < to.size(); ++i)
      si += idx[i] * strides[i];
    out[flat] = si;
    for (size_t i = to.size(); i-- > 0;) {
      if (++idx[i] < to[i])
        break;
      idx[i] = 0;
    }
  }
  return out;
}

} // namespace ampc::rt::ops

#endif // AMPC_RUNTIME_OPS_SHAPES_H
