//===- ShapeInference.h - static shape rules of graph ops -------*- C++ -*-===//
//
// The shape arithmetic of the graph ops (broadcasting, contractions,
// convolution and pooling windows, reductions, data movement) as plain
// functions, shared by the op verifiers and by convert-onnx-to-graph. Each
// returns the result shape, or std::nullopt with a message in `error` that
// names the mismatch.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_SHAPEINFERENCE_H
#define AMPC_DIALECTS_GRAPH_SHAPEINFERENCE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"

#include <cstdint>
#include <optional>
#include <string>

namespace ampc::shape {

using Shape = llvm::SmallVector<int64_t, 4>;

/// Formats a shape as "[2, 3, 4]".
std::string str(llvm::ArrayRef<int64_t> shape);

/// Number of elements, or std::nullopt if it overflows int64.
std::optional<int64_t> numElements(llvm::ArrayRef<int64_t> shape);

/// The multi-index of row-major element `flat` of `shape`.
Shape unravel(int64_t flat, llvm::ArrayRef<int64_t> shape);

/// The extent (window - 1) * dilation + 1 of a dilated window, or
/// std::nullopt if it overflows int64.
std::optional<int64_t> dilatedSpan(int64_t window, int64_t dilation);

/// Maps an axis in [-rank, rank) to [0, rank).
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank,
                                     std::string &error);

/// Numpy (multidirectional) broadcasting.
std::optional<Shape> broadcast(llvm::ArrayRef<int64_t> a,
                               llvm::ArrayRef<int64_t> b, std::string &error);

/// True if `from` broadcasts to exactly `to` (unidirectional).
bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to);

/// Numpy matmul: 1-D operands are promoted and the promoted dim dropped,
/// batch dimensions broadcast.
std::optional<Shape> matmul(llvm::ArrayRef<int64_t> a,
                            llvm::ArrayRef<int64_t> b, std::string &error);

/// Gemm: 2-D A and B (optionally transposed); C must broadcast to [M, N].
std::optional<Shape> gemm(llvm::ArrayRef<int64_t> a, llvm::ArrayRef<int64_t> b,
                          std::optional<llvm::ArrayRef<int64_t>> c, bool transA,
                          bool transB, std::string &error);

/// 2-D convolution, NCHW input and OIHW filter (I = C / group).
/// pads are [top, left, bottom, right].
std::optional<Shape>
conv2d(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> filter,
       llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
       llvm::ArrayRef<int64_t> dilations, int64_t group, std::string &error);

/// 2-D pooling window over NCHW; ceil mode drops a last window that would
/// start in the end padding (ONNX and PyTorch rule).
std::optional<Shape>
pool2d(llvm::ArrayRef<int64_t> input, llvm::ArrayRef<int64_t> kernel,
       llvm::ArrayRef<int64_t> strides, llvm::ArrayRef<int64_t> pads,
       llvm::ArrayRef<int64_t> dilations, bool ceilMode, std::string &error);

/// Reduction over `axes` (each in [0, rank), unique).
std::optional<Shape> reduce(llvm::ArrayRef<int64_t> input,
                            llvm::ArrayRef<int64_t> axes, bool keepDims,
                            std::string &error);

std::optional<Shape> transpose(llvm::ArrayRef<int64_t> input,
                               llvm::ArrayRef<int64_t> perm,
                               std::string &error);

std::optional<Shape>
concat(llvm::ArrayRef<llvm::SmallVector<int64_t, 4>> inputs, int64_t axis,
       std::string &error);

/// Slice with one normalized (start, end, step) per dimension: step != 0;
/// for step > 0, 0 <= start <= end <= dim; for step < 0,
/// -1 <= end <= start <= dim - 1.
std::optional<Shape> slice(llvm::ArrayRef<int64_t> input,
                           llvm::ArrayRef<int64_t> starts,
                           llvm::ArrayRef<int64_t> ends,
                           llvm::ArrayRef<int64_t> steps, std::string &error);

/// Gather along `axis` (normalized): data[:axis] + indices + data[axis+1:].
std::optional<Shape> gather(llvm::ArrayRef<int64_t> data,
                            llvm::ArrayRef<int64_t> indices, int64_t axis,
                            std::string &error);

} // namespace ampc::shape

#endif // AMPC_DIALECTS_GRAPH_SHAPEINFERENCE_H
