//===- OnnxMetadata.cpp - a model's metadata_props ------------------------===//

#include "compiler/Import/Onnx/OnnxMetadata.h"

#include "runtime/io/TensorFile.h"

#include "onnx/onnx_pb.h"

#include <climits>
#include <set>

namespace ampc {

bool readOnnxMetadata(const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out,
                      std::string &error) {
  std::vector<uint8_t> bytes;
  if (rt::Status s = rt::readFileBytes(modelPath, bytes); !s) {
    error = s.message();
    return false;
  }
  return readOnnxMetadata(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                      bytes.size()),
      modelPath, out, error);
}

bool readOnnxMetadata(llvm::StringRef bytes, const std::string &modelPath,
                      std::vector<std::pair<std::string, std::string>> &out,
                      std::string &error) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    // The importer's words: this reader runs first, on the same bytes.
    error = modelPath + ": not a valid ONNX model: the protobuf does not "
                        "parse (is the file truncated, corrupt or not ONNX?)";
    return false;
  }
  std::set<std::string> seen;
  std::vector<std::pair<std::string, std::string>> props;
  for (const onnx::StringStringEntryProto &p : model.metadata_props()) {
    if (p.key().empty() || !seen.insert(p.key()).second) {
      error = modelPath + ": metadata_props key '" + p.key() + "' is " +
              (p.key().empty() ? "empty" : "given twice");
      return false;
    }
    props.emplace_back(p.key(), p.value());
  }
  out = std::move(props);
  return true;
}

} // namespace ampc
