//===- OnnxImporter.h - ONNX protobuf -> onnx dialect -----------*- C++ -*-===//
//
// The thin protobuf walker: reads an ONNX ModelProto and emits @forward in
// the onnx dialect. It applies no op semantics (convert-onnx-to-graph does);
// it validates the file, fixes dynamic input dimensions from --shape, runs
// ONNX's own shape inference to type the node results, and carries
// initializer data as dense resources.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ampc {

/// The metadata_props key naming (comma-separated) the initializers that are
/// buffers, not weights: the importer marks each argument with
/// onnx::kFrozenArgAttr and convert-onnx-to-graph leaves it untrained.
inline constexpr llvm::StringLiteral kFrozenMetadataKey = "ampc.frozen";

/// A graph input whose value is known when compiling: it becomes a Constant
/// node, so ops that need static values (shapes, axes, bounds) can use it.
struct OnnxBoundInput {
  std::string name;
  int32_t onnxDtype = 0; // TensorProto.DataType
  std::vector<int64_t> dims;
  std::string rawData; // little-endian, as TensorProto.raw_data
};

struct OnnxImportOptions {
  /// Input shapes given by the user, by graph input name.
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  /// Run ONNX's checker on the model before importing it.
  bool checkModel = true;
  /// Graph inputs to compile as constants (--bind).
  std::vector<OnnxBoundInput> bindings;
  /// Directory that external tensor data is relative to.
  std::string modelDir = ".";
};

/// Parses "name=d0,d1,..." into `out`; on failure returns false with a
/// message in `error`.
bool parseShapeSpec(llvm::StringRef spec,
                    std::pair<std::string, std::vector<int64_t>> &out,
                    std::string &error);

/// Parses a --shape spec and adds it to `shapes`. The same input given two
/// different shapes is an error naming both (a spec repeated as it was is
/// accepted once): the last would otherwise silently win.
bool addShapeSpec(
    llvm::StringRef spec,
    std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
    std::string &error);

/// Imports a serialized ModelProto. On failure emits one error (at a
/// location naming `fileName`) and returns null.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxModel(llvm::StringRef bytes, llvm::StringRef fileName,
                mlir::MLIRContext *context, const OnnxImportOptions &options);

/// Registers the `--import-onnx` translation and its options.
void registerOnnxImportTranslation();

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXIMPORTER_H
