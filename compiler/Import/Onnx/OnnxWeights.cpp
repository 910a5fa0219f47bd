//===- OnnxWeights.cpp - trained weights written back into an ONNX model --===//
//
// The model goes through ONNX's protobuf classes unchanged except for the
// named initializers; protobuf keeps unknown fields, so even parts of the
// model this version of ONNX does not know survive the round trip.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxWeights.h"

#include "onnx/onnx_pb.h"

#include <climits>
#include <filesystem>
#include <map>
#include <set>

namespace pb = ::onnx;

namespace ampc {
namespace {

std::string onnxTypeName(int32_t dtype) {
  if (pb::TensorProto_DataType_IsValid(dtype))
    return pb::TensorProto_DataType_Name(
        static_cast<pb::TensorProto_DataType>(dtype));
  return "data type " + std::to_string(dtype);
}

template <typename Dims> std::string dimsStr(const Dims &dims) {
  std::string s = "[";
  bool first = true;
  for (int64_t d : dims) {
    s += (first ? "" : ", ") + std::to_string(d);
    first = false;
  }
  return s + "]";
}

bool fail(std::string &error, std::string message) {
  error = std::move(message);
  return false;
}

// Replaces the data of `t` by `w`, after checking that they agree.
bool replaceData(pb::TensorProto &t, const rt::HostTensor &w,
                 const std::string &where, std::string &error) {
  std::string what = where + ": initializer '" + w.name + "'";
  int32_t wType = rt::onnxDataTypeOf(w.dtype);
  bool sameDims = t.dims_size() == static_cast<int>(w.shape.size());
  for (int i = 0; sameDims && i < t.dims_size(); ++i)
    sameDims = t.dims(i) == w.shape[i];
  if (t.data_type() != wType || !sameDims)
    return fail(error, what + " is " + onnxTypeName(t.data_type()) + " " +
                           dimsStr(t.dims()) + " but its new value is " +
                           onnxTypeName(wType) + " " + dimsStr(w.shape));
  for (int64_t d : w.shape)
    if (d < 0)
      return fail(error, what + ": the new value has a negative dimension");
  size_t want = size_t(w.numElements()) * rt::sizeOf(w.dtype);
  if (w.bytes.size() != want)
    return fail(error, what + ": the new value holds " +
                           std::to_string(w.bytes.size()) + " bytes, " +
                           std::to_string(want) + " expected for " +
                           w.typeStr());
  t.clear_float_data();
  t.clear_int32_data();
  t.clear_string_data();
  t.clear_int64_data();
  t.clear_double_data();
  t.clear_uint64_data();
  t.clear_external_data();
  t.clear_data_location();
  t.set_raw_data(w.bytes.data(), w.bytes.size());
  return true;
}

constexpr const char *kTooLarge =
    " bytes, over protobuf's 2 GB limit for one message; models that large "
    "keep their weights in external data files, which ampc does not write";

// Parses `modelBytes` into `model`, which must have a graph.
bool parseModel(llvm::StringRef modelBytes, const std::string &modelPath,
                pb::ModelProto &model, std::string &error) {
  if (modelBytes.size() > size_t(INT_MAX))
    return fail(error, modelPath + ": the model is " +
                           std::to_string(modelBytes.size()) + kTooLarge);
  if (modelBytes.empty() ||
      !model.ParseFromArray(modelBytes.data(),
                            static_cast<int>(modelBytes.size())) ||
      !model.has_graph())
    return fail(error,
                modelPath + ": not an ONNX model (" +
                    (modelBytes.empty() ? std::string("the file is empty")
                                        : "the protobuf does not parse or "
                                          "has no graph") +
                    ")");
  return true;
}

} // namespace

bool readOnnxModel(const std::string &modelPath, std::vector<uint8_t> &bytes,
                   std::string &error) {
  error.clear();
  std::error_code ec;
  uintmax_t size = std::filesystem::file_size(modelPath, ec);
  if (ec)
    return fail(error, modelPath + ": cannot read the model: " + ec.message());
  if (size > uintmax_t(INT_MAX))
    return fail(error, modelPath + ": the model is " + std::to_string(size) +
                           kTooLarge);
  if (rt::Status s = rt::readFileBytes(modelPath, bytes); !s)
    return fail(error, s.message());
  return true;
}

bool writeOnnxWithWeights(const std::string &modelPath,
                          const std::string &outPath,
                          const std::vector<rt::HostTensor> &weights,
                          std::string &error) {
  std::vector<uint8_t> bytes;
  if (!readOnnxModel(modelPath, bytes, error))
    return false;
  return writeOnnxWithWeights(
      llvm::StringRef(reinterpret_cast<const char *>(bytes.data()),
                      bytes.size()),
      modelPath, outPath, weights, error);
}

bool writeOnnxWithWeights(llvm::StringRef modelBytes,
                          const std::string &modelPath,
                          const std::string &outPath,
                          const std::vector<rt::HostTensor> &weights,
                          std::string &error) {
  error.clear();
  pb::ModelProto model;
  if (!parseModel(modelBytes, modelPath, model, error))
    return false;

  pb::GraphProto &graph = *model.mutable_graph();
  std::map<std::string, pb::TensorProto *> byName;
  std::set<std::string> definedTwice;
  for (pb::TensorProto &t : *graph.mutable_initializer())
    if (!byName.emplace(t.name(), &t).second)
      definedTwice.insert(t.name());
  std::set<std::string> done;
  for (const rt::HostTensor &w : weights) {
    auto it = byName.find(w.name);
    if (it == byName.end())
      return fail(error, modelPath + ": the model has no initializer named '" +
                             w.name + "' to write a weight into");
    if (definedTwice.count(w.name))
      return fail(error, modelPath + ": initializer '" + w.name +
                             "' is defined twice in the model");
    if (!done.insert(w.name).second)
      return fail(error, modelPath +
                             ": two weights are given for "
                             "initializer '" +
                             w.name + "'");
    if (!replaceData(*it->second, w, modelPath, error))
      return false;
  }

  size_t outSize = model.ByteSizeLong();
  if (outSize > size_t(INT_MAX))
    return fail(error, outPath + ": the model with the new weights is " +
                           std::to_string(outSize) + kTooLarge);
  std::string out;
  if (!model.SerializeToString(&out))
    return fail(error, outPath + ": cannot serialize the model");
  if (rt::Status s = rt::writeFileAtomically(outPath, out.data(), out.size());
      !s)
    return fail(error, s.message());
  return true;
}

bool listInitializers(llvm::StringRef modelBytes, const std::string &modelPath,
                      std::vector<OnnxInitializer> &out, std::string &error) {
  error.clear();
  out.clear();
  pb::ModelProto model;
  if (!parseModel(modelBytes, modelPath, model, error))
    return false;
  for (const pb::TensorProto &t : model.graph().initializer()) {
    int32_t d = t.data_type();
    out.push_back({t.name(), d == pb::TensorProto::FLOAT ||
                                 d == pb::TensorProto::FLOAT16 ||
                                 d == pb::TensorProto::BFLOAT16 ||
                                 d == pb::TensorProto::DOUBLE});
  }
  return true;
}

} // namespace ampc
