//===- OnnxNodeCheck.h - one ONNX node against its schema -------*- C++ -*-===//
//
// What ONNX's operator schemas say about a node, checked whether or not
// ONNX's model checker ran (--no-onnx-check skips the checker, not this):
// how many inputs and outputs it has, the kind of each attribute, the
// attributes it must have. convert-onnx-to-graph reads inputs by position
// and attributes by name, so a node that breaks its schema would otherwise
// be converted as something it is not.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXNODECHECK_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXNODECHECK_H

#include "llvm/ADT/StringMap.h"

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

#include <cstdint>
#include <string>

namespace ampc {

/// The key of `domain` in an opsets map: "" for the default domain, which a
/// model may also name "ai.onnx".
inline std::string onnxDomainKey(const std::string &domain) {
  return domain == "ai.onnx" ? "" : domain;
}

/// The schema ONNX defines for `node` at the opset the model imports for its
/// domain (`opsets` is keyed by domain, "" for ai.onnx), from onnxSchemas(),
/// or null: an op ONNX does not know, or a domain the model does not import.
const ::onnx::OpSchema *onnxSchemaOf(const ::onnx::NodeProto &node,
                                     const llvm::StringMap<int64_t> &opsets);

/// Empty when `node` fits `schema`; otherwise what is wrong, worded to
/// follow "node 'NAME' (OpType, opset N): ".
std::string checkOnnxNode(const ::onnx::NodeProto &node,
                          const ::onnx::OpSchema &schema);

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXNODECHECK_H
