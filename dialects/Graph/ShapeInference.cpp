//===- ShapeInference.cpp - static shape rules of graph ops ---------------===//
//
// See ShapeInference.h. Every rule checks its inputs fully: these functions
// run on user models, so a bad shape is a message, never an assert.
//
//===----------------------------------------------------------------------===//

#include "dialects/Graph/ShapeInference.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using llvm::ArrayRef;

namespace ampc::shape {

std::string str(ArrayRef<int64_t> shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      s += ", ";
    s += shape[i] < 0 ? "?" : std::to_string(shape[i]);
  }
  return s + "]";
}

std::optional<int64_t> numElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0)
      return std::nullopt;
    if (d != 0 && n > INT64_MAX / d)
      return std::nullopt;
    n *= d;
  }
  return n;
}

Shape unravel(int64_t flat, ArrayRef<int64_t> shape) {
  Shape idx(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = shape[i] ? flat % shape[i] : 0;
    flat = shape[i] ? flat / shape[i] : 0;
  }
  return idx;
}

std::optional<int64_t> dilatedSpan(int64_t window, int64_t dilation) {
  int64_t scaled, span;
  if (llvm::MulOverflow(dilation, window - 1, scaled) ||
      llvm::AddOverflow(scaled, int64_t(1), span))
    return std::nullopt;
  return span;
}

std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                     std::string &error) {
  if (axis < -rank || axis >= rank) {
    error = "axis " + std::to_string(axis) + " is out of range for rank " +
            std::to_string(rank);
    return std::nullopt;
  }
  return axis < 0 ? axis + rank : axis;
}

std::optional<Shape> broadcast(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                               std::string &error) {
  size_t rank = std::max(a.size(), b.size());
  Shape out(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) {
      error = "shapes " + str(a) + " and " + str(b) +
              " do not broadcast (dimension " + std::to_string(i) + ": " +
              std::to_string(da) + " vs " + std::to_string(db) + ")";
      return std::nullopt;
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

bool broadcastsTo(ArrayRef<int64_t> from, ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t off = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i)
    if (from[i] != 1 && from[i] != to[off + i])
      return false;
  return true;
}

std::optional<Shape> matmul(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                            std::string &error) {
  if (a.empty() || b.empty()) {
    error =
        "matmul operands must have rank >= 1, got " + str(a) + " and " + str(b);
    return std::nullopt;
  }
  Shape pa(a.begin(), a.end()), pb(b.begin(), b.end());
  bool aVec = pa.size() == 1, bVec = pb.size() == 1;
  if (aVec)
    pa.insert(pa.begin(), 1);
  if (bVec)
    pb.push_back(1);
  int64_t k1 = pa.back(), k2 = pb[pb.size() - 2];
  if (k1 != k2) {
    error = "contracting dimensions differ: " + str(a) + " has " +
            std::to_string(k1) + ", " + str(b) + " has " + std::to_string(k2);
    return std::nullopt;
  }
  auto batch = broadcast(ArrayRef<int64_t>(pa).drop_back(2),
                         ArrayRef<int64_t>(pb).drop_back(2), error);
  if (!batch) {
    error = "batch dimensions: " + error;
    return std::nullopt;
  }
  Shape out = *batch;
  if (!aVec)
    out.push_back(pa[pa.size() - 2]);
  if (!bVec)
    out.push_back(pb.back());
  return out;
}

std::optional<Shape> gemm(ArrayRef<int64_t> a, ArrayRef<int64_t> b,
                          std::optional<ArrayRef<int64_t>> c, bool transA,
                          bool transB, std::string &error) {
  if (a.size() != 2 || b.size() != 2) {
    error = "gemm operands must be 2-D, got " + str(a) + " and " + str(b);
    return std::nullopt;
  }
  int64_t m = transA ? a[1] : a[0], k1 = transA ? a[0] : a[1];
  int64_t k2 = transB ? b[1] : b[0], n = transB ? b[0] : b[1];
  if (k1 != k2) {
    error = "contracting dimensions differ: A " + str(a) +
            (transA ? " (transposed)" : "") + " has " + std::to_string(k1) +
            ", B " + str(b) + (transB ? " (transposed)" : "") + " has " +
            std::to_string(k2);
    return std::nullopt;
  }
  Shape out{m, n};
  if (c && !broadcastsTo(*c, out)) {
    error = "C of shape " + str(*c) + " does not broadcast to " + str(out);
    return std::nullopt;
  }
  return out;
}

static bool checkWindowAttrs(ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                             ArrayRef<int64_t> dilations, std::string &error) {
  if (strides.size() != 2 || pads.size() != 4 || dilations.size() != 2) {
    error = "expected 2 strides, 4 pads and 2 dilations, got " +
            std::to_string(strides.size()) + ", " +
            std::to_string(pads.size()) + " and " +
            std::to_string(dilations.size());
    return false;
  }
  for (int64_t s : strides)
    if (s < 1) {
      error = "strides must be >= 1, got " + str(strides);
      return false;
    }
  for (int64_t d : dilations)
    if (d < 1) {
      error = "dilations must be >= 1, got " + str(dilations);
      return false;
    }
  for (int64_t p : pads)
    if (p < 0) {
      error = "pads must be >= 0, got " + str(pads);
      return false;
    }
  return true;
}

/// The extent of a dilated window and of the padded input in one spatial
/// dimension, or false with `error` set when either overflows int64
/// (attributes come from the model: pads and dilations may be anything).
static bool windowExtents(int64_t size, int64_t window, int64_t padBegin,
                          int64_t padEnd, int64_t dilation, int dim,
                          int64_t &span, int64_t &padded, std::string &error) {
  std::optional<int64_t> dilated = dilatedSpan(window, dilation);
  if (!dilated) {
    error = "the window of size " + std::to_string(window) + " dilated by " +
            std::to_string(dilation) + " in spatial dimension " +
            std::to_string(dim) + " is not a size int64 can count";
    return false;
  }
  span = *dilated;
  if (llvm::AddOverflow(size, padBegin, padded) ||
      llvm::AddOverflow(padded, padEnd, padded)) {
    error = "the input of size " + std::to_string(size) + " padded by " +
            std::to_string(padBegin) + " and " + std::to_string(padEnd) +
            " in spatial dimension " + std::to_string(dim) +
            " is not a size int64 can count";
    return false;
  }
  return true;
}

std::optional<Shape> conv2d(ArrayRef<int64_t> input, ArrayRef<int64_t> filter,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations, int64_t group,
                            std::string &error) {
  if (input.size() != 4 || filter.size() != 4) {
    error = "conv2d expects a 4-D NCHW input and OIHW filter, got " +
            str(input) + " and " + str(filter);
    return std::nullopt;
  }
  if (!checkWindowAttrs(strides, pads, dilations, error))
    return std::nullopt;
  if (group < 1 || input[1] % group != 0 || filter[0] % group != 0) {
    error = "group " + std::to_string(group) + " must divide input channels " +
            std::to_string(input[1]) + " and output channels " +
            std::to_string(filter[0]);
    return std::nullopt;
  }
  int64_t channels;
  if (llvm::MulOverflow(filter[1], group, channels)) {
    error = "filter " + str(filter) + " with group " + std::to_string(group) +
            " expects more input channels than int64 can count";
    return std::nullopt;
  }
  if (channels != input[1]) {
    error = "filter " + str(filter) + " expects " + std::to_string(channels) +
            " input channels (group " + std::to_string(group) + "), input " +
            str(input) + " has " + std::to_string(input[1]);
    return std::nullopt;
  }
  Shape out{input[0], filter[0], 0, 0};
  for (int i = 0; i < 2; ++i) {
    int64_t span, padded;
    if (!windowExtents(input[2 + i], filter[2 + i], pads[i], pads[i + 2],
                       dilations[i], i, span, padded, error))
      return std::nullopt;
    if (padded < span) {
      error = "kernel extent " + std::to_string(span) +
              " is larger than the padded input " + std::to_string(padded) +
              " in spatial dimension " + std::to_string(i);
      return std::nullopt;
    }
    out[2 + i] = (padded - span) / strides[i] + 1;
  }
  return out;
}

std::optional<Shape> pool2d(ArrayRef<int64_t> input, ArrayRef<int64_t> kernel,
                            ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                            ArrayRef<int64_t> dilations, bool ceilMode,
                            std::string &error) {
  if (input.size() != 4) {
    error = "pooling expects a 4-D NCHW input, got " + str(input);
    return std::nullopt;
  }
  if (kernel.size() != 2 || kernel[0] < 1 || kernel[1] < 1) {
    error = "expected 2 kernel sizes >= 1, got " + str(kernel);
    return std::nullopt;
  }
  if (!checkWindowAttrs(strides, pads, dilations, error))
    return std::nullopt;
  Shape out{input[0], input[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    if (pads[i] >= kernel[i] || pads[i + 2] >= kernel[i]) {
      error = "pads " + str(pads) + " must be smaller than the kernel " +
              str(kernel);
      return std::nullopt;
    }
    int64_t span, padded;
    if (!windowExtents(input[2 + i], kernel[i], pads[i], pads[i + 2],
                       dilations[i], i, span, padded, error))
      return std::nullopt;
    if (padded < span) {
      error = "kernel extent " + std::to_string(span) +
              " is larger than the padded input " + std::to_string(padded) +
              " in spatial dimension " + std::to_string(i);
      return std::nullopt;
    }
    int64_t n = padded - span;
    int64_t o =
        (ceilMode ? llvm::divideCeil(n, strides[i]) : n / strides[i]) + 1;
    // The last window must start inside the input or its leading pad (a
    // start past int64 is past it too).
    int64_t start;
    if (ceilMode && (llvm::MulOverflow(o - 1, strides[i], start) ||
                     start >= input[2 + i] + pads[i]))
      --o;
    out[2 + i] = o;
  }
  return out;
}

std::optional<Shape> reduce(ArrayRef<int64_t> input, ArrayRef<int64_t> axes,
                            bool keepDims, std::string &error) {
  llvm::SmallVector<bool, 8> reduced(input.size(), false);
  for (int64_t a : axes) {
    if (a < 0 || a >= static_cast<int64_t>(input.size())) {
      error = "reduction axis " + std::to_string(a) +
              " is out of range for rank " + std::to_string(input.size());
      return std::nullopt;
    }
    if (reduced[a]) {
      error = "reduction axis " + std::to_string(a) + " is repeated";
      return std::nullopt;
    }
    reduced[a] = true;
  }
  Shape out;
  for (size_t i = 0; i < input.size(); ++i) {
    if (!reduced[i])
      out.push_back(input[i]);
    else if (keepDims)
      out.push_back(1);
  }
  return out;
}

std::optional<Shape> transpose(ArrayRef<int64_t> input, ArrayRef<int64_t> perm,
                               std::string &error) {
  if (perm.size() != input.size()) {
    error = "permutation " + str(perm) + " has " + std::to_string(perm.size()) +
            " entries for a rank-" + std::to_string(input.size()) + " input";
    return std::nullopt;
  }
  llvm::SmallVector<bool, 8> seen(perm.size(), false);
  Shape out;
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(perm.size()) || seen[p]) {
      error = str(perm) + " is not a permutation of [0, " +
              std::to_string(perm.size()) + ")";
      return std::nullopt;
    }
    seen[p] = true;
    out.push_back(input[p]);
  }
  return out;
}

std::optional<Shape> concat(ArrayRef<llvm::SmallVector<int64_t, 4>> inputs,
                            int64_t axis, std::string &error) {
  if (inputs.empty()) {
    error = "concat needs at least one input";
    return std::nullopt;
  }
  Shape out(inputs[0].begin(), inputs[0].end());
  if (axis < 0 || axis >= static_cast<int64_t>(out.size())) {
    error = "concat axis " + std::to_string(axis) +
            " is out of range for rank " + std::to_string(out.size());
    return std::nullopt;
  }
  for (size_t k = 1; k < inputs.size(); ++k) {
    ArrayRef<int64_t> s = inputs[k];
    if (s.size() != out.size()) {
      error = "input " + std::to_string(k) + " " + str(s) +
              " has a different rank from input 0 " + str(inputs[0]);
      return std::nullopt;
    }
    for (size_t i = 0; i < s.size(); ++i) {
      if (static_cast<int64_t>(i) == axis)
        continue;
      if (s[i] != out[i]) {
        error = "input " + std::to_string(k) + " " + str(s) +
                " differs from input 0 " + str(inputs[0]) + " in dimension " +
                std::to_string(i) + " (not the axis)";
        return std::nullopt;
      }
    }
    if (llvm::AddOverflow(out[axis], s[axis], out[axis])) {
      error = "the inputs' sizes along axis " + std::to_string(axis) +
              " add up to more than int64 can count";
      return std::nullopt;
    }
  }
  return out;
}

std::optional<Shape> slice(ArrayRef<int64_t> input, ArrayRef<int64_t> starts,
                           ArrayRef<int64_t> ends, ArrayRef<int64_t> steps,
                           std::string &error) {
  if (starts.size() != input.size() || ends.size() != input.size() ||
      steps.size() != input.size()) {
    error =
        "slice needs one start, end and step per dimension of " + str(input);
    return std::nullopt;
  }
  Shape out;
  for (size_t i = 0; i < input.size(); ++i) {
    int64_t d = input[i], s = starts[i], e = ends[i], st = steps[i];
    bool ok = st > 0 ? (0 <= s && s <= e && e <= d)
                     : (st < 0 && -1 <= e && e <= s && s <= d - 1);
    if (!ok) {
      error = "slice of dimension " + std::to_string(i) + " (size " +
              std::to_string(d) + ") has start " + std::to_string(s) +
              ", end " + std::to_string(e) + ", step " + std::to_string(st) +
              ", which are not normalized";
      return std::nullopt;
    }
    out.push_back(st > 0 ? llvm::divideCeil(e - s, st)
                         : llvm::divideCeil(s - e, -st));
  }
  return out;
}

std::optional<Shape> gather(ArrayRef<int64_t> data, ArrayRef<int64_t> indices,
                            int64_t axis, std::string &error) {
  if (axis < 0 || axis >= static_cast<int64_t>(data.size())) {
    error = "gather axis " + std::to_string(axis) +
            " is out of range for data of rank " + std::to_string(data.size());
    return std::nullopt;
  }
  Shape out(data.begin(), data.begin() + axis);
  out.append(indices.begin(), indices.end());
  out.append(data.begin() + axis + 1, data.end());
  return out;
}

} // namespace ampc::shape
