//===- OnnxSchemas.h - the schemas the importer checks by ----*- C++ -*-===//
//
// libonnx 1.12 knows opsets up to 17. PyTorch 2 exports opset 18 by
// default, where the reductions take their axes as an input, Split takes
// num_outputs, Pad takes axes and Resize gains axes, antialias and
// keep_aspect_ratio_policy, and Mish is new. This registry answers with
// ampc's own schemas for those ops at opset 18 and with libonnx's for
// everything else, so the model checker, the node checks and shape
// inference judge an opset-18 node by the rules it was written to.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXSCHEMAS_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXSCHEMAS_H

#include "onnx/defs/schema.h"

namespace ampc {

/// libonnx's schemas, with ampc's for the default-domain ops that changed at
/// opset 18. An op that changed at 18 and has no schema here (LpPool,
/// ScatterElements, ...) has none at 18: libonnx's older schema would judge
/// it by rules it no longer follows.
const ::onnx::ISchemaRegistry &onnxSchemas();

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXSCHEMAS_H
