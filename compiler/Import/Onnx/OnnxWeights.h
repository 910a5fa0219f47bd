//===- OnnxWeights.h - trained weights written back into an ONNX model ----===//
//
// After training, the new values of the parameters replace the data of the
// initializers they came from, so the result is the input model with trained
// weights: same graph, names, opsets and metadata.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_IMPORT_ONNX_ONNXWEIGHTS_H
#define AMPC_COMPILER_IMPORT_ONNX_ONNXWEIGHTS_H

#include "runtime/io/TensorFile.h"

#include "llvm/ADT/StringRef.h"

#include <string>
#include <vector>

namespace ampc {

/// Reads the ONNX model at `modelPath`, replaces the data of each main-graph
/// initializer named by a weight's `name` and writes the model to `outPath`
/// atomically (through OUTPATH.tmp and a rename, so `outPath` may be
/// `modelPath` itself). Each weight must match its initializer's data type
/// and dims exactly (no conversion). Its bytes are stored as raw_data; the
/// typed data fields (float_data, int64_data, ...) and any external data
/// reference of that initializer are cleared: an initializer stored as
/// external data gets its new data inline, and nothing is read from the
/// external file. Everything else, including initializers no weight names,
/// is left as it was; so initializers that stay external still point at
/// their file relative to the model, which must be next to `outPath` for
/// the result to load.
///
/// Errors (returns false with `error` set, writes nothing): the model cannot
/// be read or parsed, it or the result exceeds protobuf's 2 GB limit, a
/// weight names no initializer or names one twice, or its type, dims or byte
/// count do not match.
bool writeOnnxWithWeights(const std::string &modelPath,
                          const std::string &outPath,
                          const std::vector<rt::HostTensor> &weights,
                          std::string &error);

/// The same for a model held in memory (`modelBytes`); `modelPath` names it
/// in messages.
bool writeOnnxWithWeights(llvm::StringRef modelBytes,
                          const std::string &modelPath,
                          const std::string &outPath,
                          const std::vector<rt::HostTensor> &weights,
                          std::string &error);

/// Reads the model file at `modelPath` whole, refusing one over protobuf's
/// 2 GB limit before reading it. (writeOnnxWithWeights's own read.)
bool readOnnxModel(const std::string &modelPath, std::vector<uint8_t> &bytes,
                   std::string &error);

/// An initializer of a model's main graph.
struct OnnxInitializer {
  std::string name;
  bool floating = false; // FLOAT, FLOAT16, BFLOAT16 or DOUBLE
};

/// The main graph's initializers of the model in `modelBytes` (named by
/// `modelPath`), in the model's order. Fails as writeOnnxWithWeights does on
/// a model that does not parse.
bool listInitializers(llvm::StringRef modelBytes, const std::string &modelPath,
                      std::vector<OnnxInitializer> &out, std::string &error);

} // namespace ampc

#endif // AMPC_COMPILER_IMPORT_ONNX_ONNXWEIGHTS_H
