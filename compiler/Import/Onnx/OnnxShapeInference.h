//===- OnnxShapeInference.h - ONNX's shape inference, guarded ---*- C++ -*-===//
//
// Types node results with ONNX's own inference functions, one node at a
// time and only where libonnx 1.12 is known not to crash (see the .cpp).
// The types are a cross-check for convert-onnx-to-graph, which computes
// every result type itself, so a node left untyped costs nothing else.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXSHAPEINFERENCE_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXSHAPEINFERENCE_H

#include "llvm/ADT/StringMap.h"

#include "onnx/onnx_pb.h"

#include <cstdint>

namespace ampc {

/// Runs ONNX's type and shape inference over the nodes of `graph`, as
/// onnx::shape_inference::InferShapes does (merging into the declared
/// value_info and outputs, adding value_info for the rest), but skips every
/// node whose inference function is not known to be safe on its inputs.
/// `opsets` is keyed by domain ("" for ai.onnx). Never fails.
void inferOnnxShapes(::onnx::GraphProto &graph,
                     const llvm::StringMap<int64_t> &opsets);

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXSHAPEINFERENCE_H
