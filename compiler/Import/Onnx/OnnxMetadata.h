//===- OnnxMetadata.h - a model's metadata_props ----------------*- C++ -*-===//
//
// ONNX models carry free-form key/value metadata. ampc's examples use it for
// the training recipe they were tuned with (`ampc.train.<option>`), which
// amp-run takes as the defaults of options the user did not give.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXMETADATA_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXMETADATA_H

#include "llvm/ADT/StringRef.h"

#include <string>
#include <utility>
#include <vector>

namespace ampc {

/// Reads the model at `modelPath` and returns its metadata_props in file
/// order. Returns false with `error` set when the file cannot be read or
/// parsed, or a key is empty or given twice.
bool readOnnxMetadata(const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out,
                      std::string &error);

/// The same for a model held in memory; `modelPath` names it in messages.
bool readOnnxMetadata(llvm::StringRef bytes, const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out,
                      std::string &error);

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXMETADATA_H
