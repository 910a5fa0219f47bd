//===- Window.h - Conv and pooling windows, and 3-D ones as 2-D ops -*- C++
//-*-===//
//
// The window attributes of Conv and the pools resolved to explicit values
// (Contraction.cpp), and the 3-D convolution and pooling that ampc writes
// as 2-D ops (Volume.cpp): the graph dialect has 2-D ones only.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_WINDOW_H
#define AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_WINDOW_H

#include "compiler/Conversion/OnnxToGraph/NodeBinder.h"

namespace ampc::onnx_to_graph {

/// A window over `spatial` dimensions; `pads` holds the begins, then the
/// ends.
struct Window {
  llvm::SmallVector<int64_t> kernel, strides, pads, dilations;
  size_t spatial = 2;
};

/// Creates one 2-D pool (max or average, with the node's other attributes)
/// of `input` over `window`.
using Pool2d = llvm::function_ref<mlir::FailureOr<mlir::Value>(
    mlir::Value input, const Window &window)>;

/// Y = Conv(X, W, B) over three spatial dimensions, as one conv2d: the
/// depth taps of each output depth are gathered into the channels.
mlir::FailureOr<mlir::Value> conv3d(NodeBinder &n, mlir::Value x, mlir::Value w,
                                    mlir::Value bias, const Window &window,
                                    int64_t group);

/// A 3-D max or average pool as two 2-D ones: over height and width, then
/// over depth. Both take their window's maximum, or mean over the valid
/// (or padded) box, which is a product of one range per axis.
mlir::FailureOr<mlir::Value> pool3d(NodeBinder &n, mlir::Value x,
                                    const Window &window, Pool2d pool2d);

} // namespace ampc::onnx_to_graph

#endif // AMPC_COMPILER_CONVERSION_ONNXTOGRAPH_WINDOW_H
