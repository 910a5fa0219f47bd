//===- OnnxImporter.cpp - ONNX protobuf -> onnx dialect -------------------===//
//
// Walks a ModelProto and emits the onnx dialect. With OnnxNodeCheck.cpp and
// OnnxShapeInference.cpp, the only code that includes ONNX's headers and
// is built with exceptions: ONNX's checker throws, and every exception is
// caught and turned into a diagnostic.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Conversion/TensorSize.h"
#include "compiler/Import/Onnx/OnnxNodeCheck.h"
#include "compiler/Import/Onnx/OnnxSchemas.h"
#include "compiler/Import/Onnx/OnnxShapeInference.h"
#include "dialects/Onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

#include <algorithm>
#include <climits>
#include <exception>
#include <optional>

using namespace mlir;
namespace pb = ::onnx;

namespace ampc {
namespace {

/// Above this many bytes, tensor data becomes a dense resource (not uniqued,
/// printed once at the end of the module) instead of an inline attribute.
constexpr size_t kInlineTensorBytes = 256;
/// The most elements a tensor with data (an initializer or a constant) may
/// have: 4 TiB of f32, more than any machine ampc runs on holds.
constexpr int64_t kMaxTensorElements = int64_t(1) << 40;

/// "x=2,3", as --shape is written.
std::string shapeSpec(StringRef name, ArrayRef<int64_t> dims) {
  std::string s = name.str() + "=";
  for (auto [i, d] : llvm::enumerate(dims))
    s += (i ? "," : "") + std::to_string(d);
  return s;
}

/// "[4, ?]": a declared shape, its dynamic dimensions as ?.
std::string declaredShape(const pb::TensorShapeProto &shape) {
  std::string s = "[";
  for (int i = 0; i < shape.dim_size(); ++i) {
    const auto &d = shape.dim(i);
    s += (i ? ", " : "") + (d.has_dim_value() && d.dim_value() >= 0
                                ? std::to_string(d.dim_value())
                                : std::string("?"));
  }
  return s + "]";
}

const char *dtypeName(int dtype) {
  if (pb::TensorProto_DataType_IsValid(dtype))
    return pb::TensorProto_DataType_Name(
               static_cast<pb::TensorProto_DataType>(dtype))
        .c_str();
  return "UNKNOWN";
}

class Importer {
public:
  Importer(MLIRContext *ctx, StringRef fileName,
           const OnnxImportOptions &options)
      : ctx(ctx), b(ctx), options(options), fileName(fileName.str()),
        fileLoc(FileLineColLoc::get(ctx, fileName, 0, 0)) {}

  OwningOpRef<ModuleOp> run(StringRef bytes);

private:
  InFlightDiagnostic error() { return emitError(fileLoc); }
  Location nodeLoc(const pb::NodeProto &node, size_t index);
  /// "node 'NAME' (OpType, opset N)", as convert-onnx-to-graph names nodes.
  std::string nodeDesc(const pb::NodeProto &node, size_t index,
                       std::optional<int64_t> opset);
  LogicalResult checkNodes(const pb::GraphProto &graph);
  /// ONNX's model checker, judging nodes by onnxSchemas().
  LogicalResult checkWithOnnx(const pb::ModelProto &model);

  LogicalResult applyShapeOverrides(pb::GraphProto &graph);
  Type valueType(const pb::TypeProto &type);
  FailureOr<Type> inputType(const pb::ValueInfoProto &info);
  FailureOr<ElementsAttr> tensorAttr(const pb::TensorProto &t, StringRef what);
  FailureOr<std::string> tensorBytes(const pb::TensorProto &t, StringRef what,
                                     size_t elemBytes, int64_t count);
  FailureOr<NamedAttribute> attribute(const pb::AttributeProto &a,
                                      StringRef where);
  LogicalResult emitGraph(const pb::ModelProto &model, ModuleOp module);
  LogicalResult checkShadowedInput(const pb::ValueInfoProto &input,
                                   const pb::TensorProto &init);
  LogicalResult applyBindings(pb::GraphProto &graph);

  MLIRContext *ctx;
  Builder b;
  const OnnxImportOptions &options;
  std::string fileName;
  Location fileLoc;
  /// The opset the model imports for each domain ("" for ai.onnx).
  llvm::StringMap<int64_t> opsets;
  llvm::StringMap<Type> valueInfo;
  /// External data files by path: exporters put every tensor in one file.
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> externalFiles;
  unsigned blobCounter = 0;
};

Location Importer::nodeLoc(const pb::NodeProto &node, size_t index) {
  std::string name = node.name().empty()
                         ? node.op_type() + "#" + std::to_string(index)
                         : node.name();
  return NameLoc::get(b.getStringAttr(name), fileLoc);
}

std::string Importer::nodeDesc(const pb::NodeProto &node, size_t index,
                               std::optional<int64_t> opset) {
  std::string s = "node ";
  s += node.name().empty() ? "#" + std::to_string(index)
                           : "'" + node.name() + "'";
  s += " (";
  if (!node.domain().empty() && node.domain() != "ai.onnx")
    s += node.domain() + "::";
  s += node.op_type();
  if (opset)
    s += ", opset " + std::to_string(*opset);
  return s + ")";
}

LogicalResult Importer::checkWithOnnx(const pb::ModelProto &model) {
  // What pb::checker::check_model does around check_graph, with another
  // schema registry (it has no parameter for one) and external data found
  // next to the model whether it was read from a file or from memory.
  if (model.ir_version() > pb::IR_VERSION)
    return error() << "the model's IR version is " << model.ir_version()
                   << "; ampc reads IR versions up to " << int(pb::IR_VERSION)
                   << " (ONNX 1.12)",
           failure();
  llvm::StringSet<> keys;
  for (const pb::StringStringEntryProto &kv : model.metadata_props())
    if (!keys.insert(kv.key()).second)
      return error() << "ONNX checker rejected the model: metadata key '"
                     << kv.key() << "' appears twice",
             failure();
  pb::checker::CheckerContext ctx;
  ctx.set_ir_version(static_cast<int>(model.ir_version()));
  std::unordered_map<std::string, int> imports;
  for (const pb::OperatorSetIdProto &o : model.opset_import())
    imports[o.domain()] =
        static_cast<int>(std::clamp<int64_t>(o.version(), INT_MIN, INT_MAX));
  ctx.set_opset_imports(std::move(imports));
  ctx.set_schema_registry(&onnxSchemas());
  ctx.set_model_dir(options.modelDir);
  try {
    pb::checker::LexicalScopeContext scope;
    pb::checker::check_graph(model.graph(), ctx, scope);
    if (model.ir_version() >= 8)
      pb::checker::check_model_local_functions(model, ctx, scope);
  } catch (const std::exception &e) {
    std::string msg = e.what();
    while (!msg.empty() && (msg.back() == '\n' || msg.back() == ' '))
      msg.pop_back();
    return error() << "ONNX checker rejected the model: " << msg, failure();
  }
  return success();
}

LogicalResult Importer::checkNodes(const pb::GraphProto &graph) {
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    const pb::OpSchema *schema = onnxSchemaOf(node, opsets);
    if (!schema)
      continue; // Unknown ops and domains are reported by name later.
    std::string problem = checkOnnxNode(node, *schema);
    if (!problem.empty())
      return error() << nodeDesc(node, index,
                                 opsets.lookup(onnxDomainKey(node.domain())))
                     << ": " << problem;
  }
  return success();
}

Type Importer::valueType(const pb::TypeProto &type) {
  if (!type.has_tensor_type())
    return onnx::UnknownType::get(ctx);
  const auto &tt = type.tensor_type();
  Type elem = onnx::elementTypeOf(tt.elem_type(), ctx);
  if (!elem)
    return onnx::UnknownType::get(ctx);
  if (!tt.has_shape())
    return UnrankedTensorType::get(elem);
  SmallVector<int64_t> dims;
  for (const auto &d : tt.shape().dim())
    dims.push_back(d.has_dim_value() && d.dim_value() >= 0
                       ? d.dim_value()
                       : ShapedType::kDynamic);
  return RankedTensorType::get(dims, elem);
}

FailureOr<Type> Importer::inputType(const pb::ValueInfoProto &info) {
  if (info.type().value_case() == pb::TypeProto::VALUE_NOT_SET)
    return error() << "graph input '" << info.name()
                   << "' has no type; ampc needs its dtype and shape",
           failure();
  if (!info.type().has_tensor_type())
    return error() << "graph input '" << info.name()
                   << "' is not a tensor (sequences, maps and optionals are "
                      "not supported)",
           failure();
  const auto &tt = info.type().tensor_type();
  if (!onnx::elementTypeOf(tt.elem_type(), ctx))
    return error() << "graph input '" << info.name() << "' has dtype "
                   << dtypeName(tt.elem_type())
                   << ", which ampc does not support (supported: "
                   << onnx::kSupportedDtypes << ")",
           failure();
  if (!tt.has_shape())
    return error() << "graph input '" << info.name()
                   << "' has no shape; give it with --shape " << info.name()
                   << "=d0,d1,...",
           failure();
  for (auto [i, d] : llvm::enumerate(tt.shape().dim())) {
    if (d.has_dim_value() && d.dim_value() >= 0)
      continue;
    std::string sym = d.has_dim_param() ? " ('" + d.dim_param() + "')" : "";
    return error() << "graph input '" << info.name()
                   << "' has dynamic dimension " << i << sym
                   << "; ampc compiles static shapes: give it with --shape "
                   << info.name() << "=d0,d1,...",
           failure();
  }
  // Checked above: a tensor of a supported dtype with static dimensions.
  auto type = cast<RankedTensorType>(valueType(info.type()));
  if (std::string overflow = sizeOverflow(type); !overflow.empty()) {
    bool given = llvm::any_of(
        options.shapes, [&](const auto &s) { return s.first == info.name(); });
    return error() << "graph input '" << info.name() << "' of type " << type
                   << (given ? " (given with --shape) " : " ") << overflow,
           failure();
  }
  return type;
}

LogicalResult Importer::applyShapeOverrides(pb::GraphProto &graph) {
  for (const auto &[name, dims] : options.shapes) {
    pb::ValueInfoProto *found = nullptr;
    for (auto &in : *graph.mutable_input())
      if (in.name() == name)
        found = &in;
    if (!found) {
      std::string names;
      for (const auto &in : graph.input())
        names += (names.empty() ? "'" : ", '") + in.name() + "'";
      return error() << "--shape names '" << name
                     << "', which is not a graph input (inputs: " << names
                     << ")";
    }
    auto *tt = found->mutable_type()->mutable_tensor_type();
    if (tt->has_shape() &&
        tt->shape().dim_size() != static_cast<int>(dims.size()))
      return error() << "--shape gives " << dims.size()
                     << " dimensions for input '" << name
                     << "', which has rank " << tt->shape().dim_size();
    // --shape fixes dynamic dimensions; a static one it changed would
    // break the first node whose declared type depends on it.
    for (int i = 0; tt->has_shape() && i < tt->shape().dim_size(); ++i) {
      const auto &d = tt->shape().dim(i);
      if (d.has_dim_value() && d.dim_value() >= 0 && d.dim_value() != dims[i])
        return error() << "--shape " << shapeSpec(name, dims)
                       << " changes dimension " << i << " of graph input '"
                       << name << "' from " << d.dim_value() << " to "
                       << dims[i] << ", but the model declares it "
                       << declaredShape(tt->shape())
                       << ": --shape gives dynamic dimensions only";
    }
    tt->mutable_shape()->clear_dim();
    for (int64_t d : dims)
      tt->mutable_shape()->add_dim()->set_dim_value(d);
  }
  return success();
}

LogicalResult Importer::applyBindings(pb::GraphProto &graph) {
  for (const OnnxBoundInput &bound : options.bindings) {
    auto *inputs = graph.mutable_input();
    auto it = llvm::find_if(*inputs, [&](const pb::ValueInfoProto &in) {
      return in.name() == bound.name;
    });
    if (it == inputs->end()) {
      std::string names;
      for (const auto &in : graph.input())
        names += (names.empty() ? "'" : ", '") + in.name() + "'";
      return error() << "--bind names '" << bound.name
                     << "', which is not a graph input (inputs: " << names
                     << ")";
    }
    const auto &tt = it->type().tensor_type();
    if (tt.elem_type() != bound.onnxDtype)
      return error() << "--bind gives input '" << bound.name << "' dtype "
                     << dtypeName(bound.onnxDtype) << ", but the model "
                     << "declares " << dtypeName(tt.elem_type());
    if (tt.has_shape()) {
      bool ok = tt.shape().dim_size() == static_cast<int>(bound.dims.size());
      for (int i = 0; ok && i < tt.shape().dim_size(); ++i)
        ok = !tt.shape().dim(i).has_dim_value() ||
             tt.shape().dim(i).dim_value() == bound.dims[i];
      if (!ok)
        return error() << "--bind gives input '" << bound.name
                       << "' a value whose shape does not match the "
                       << "model's declaration";
    }
    // A Constant node, not an initializer: initializers of older IR
    // versions are also inputs, and float ones would become parameters.
    pb::NodeProto node;
    node.set_op_type("Constant");
    node.set_name("bind:" + bound.name);
    node.add_output(bound.name);
    pb::AttributeProto *value = node.add_attribute();
    value->set_name("value");
    value->set_type(pb::AttributeProto::TENSOR);
    pb::TensorProto *t = value->mutable_t();
    t->set_data_type(bound.onnxDtype);
    for (int64_t d : bound.dims)
      t->add_dims(d);
    t->set_raw_data(bound.rawData);
    inputs->erase(it);
    auto *nodes = graph.mutable_node();
    nodes->Add(std::move(node));
    std::rotate(nodes->begin(), nodes->end() - 1, nodes->end());
  }
  return success();
}

FailureOr<std::string> Importer::tensorBytes(const pb::TensorProto &t,
                                             StringRef what, size_t elemBytes,
                                             int64_t count) {
  size_t want = static_cast<size_t>(count) * elemBytes;
  auto wrongSize = [&](uint64_t have) {
    error() << what << ": holds " << have << " bytes of data, "
            << "expected " << want << " for " << count << " elements of "
            << dtypeName(t.data_type());
    return failure();
  };
  std::string out;
  if (t.data_location() == pb::TensorProto::EXTERNAL) {
    std::string location;
    int64_t offset = 0, length = -1;
    for (const auto &kv : t.external_data()) {
      if (kv.key() == "location")
        location = kv.value();
      else if (kv.key() == "offset")
        offset = std::atoll(kv.value().c_str());
      else if (kv.key() == "length")
        length = std::atoll(kv.value().c_str());
    }
    if (location.empty() || llvm::sys::path::is_absolute(location) ||
        StringRef(location).contains(".."))
      return error() << what << ": external data location '" << location
                     << "' must be a relative path inside the model's "
                        "directory",
             failure();
    SmallString<256> path(options.modelDir);
    llvm::sys::path::append(path, location);
    std::unique_ptr<llvm::MemoryBuffer> &buf = externalFiles[path];
    if (!buf) {
      // Only a regular file: a device or a pipe (a link to /dev/zero, a
      // FIFO beside the model) would be read forever.
      llvm::sys::fs::file_status status;
      if (!llvm::sys::fs::status(path, status) &&
          status.type() != llvm::sys::fs::file_type::regular_file)
        return error() << what << ": external data file '" << path
                       << "' is not a regular file",
               failure();
      auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
      if (!file)
        return error() << what << ": cannot read external data file '" << path
                       << "': " << file.getError().message(),
               failure();
      buf = std::move(*file);
    }
    // Offset and length come from the model: compared, never added.
    const int64_t size = static_cast<int64_t>(buf->getBufferSize());
    if (length < 0 && offset >= 0 && offset <= size)
      length = size - offset;
    if (offset < 0 || length < 0 || offset > size || length > size - offset) {
      auto diag = error() << what << ": external data range ";
      int64_t end;
      if (llvm::AddOverflow(offset, length, end))
        diag << "at offset " << offset << " of length " << length;
      else
        diag << "[" << offset << ", " << end << ")";
      return diag << " is outside '" << path << "' (" << size << " bytes)",
             failure();
    }
    // Checked before the copy: the file may be far larger than the tensor.
    if (static_cast<uint64_t>(length) != want)
      return wrongSize(length);
    out.assign(buf->getBufferStart() + offset, length);
  } else if (t.has_raw_data()) {
    out = t.raw_data();
  } else {
    auto put = [&](const void *p, size_t n) {
      out.append(static_cast<const char *>(p), n);
    };
    switch (t.data_type()) {
    case pb::TensorProto::FLOAT:
      for (float v : t.float_data())
        put(&v, 4);
      break;
    case pb::TensorProto::DOUBLE:
      for (double v : t.double_data())
        put(&v, 8);
      break;
    case pb::TensorProto::INT64:
      for (int64_t v : t.int64_data())
        put(&v, 8);
      break;
    case pb::TensorProto::INT32:
      for (int32_t v : t.int32_data())
        put(&v, 4);
      break;
    case pb::TensorProto::FLOAT16:
    case pb::TensorProto::BFLOAT16:
      for (int32_t v : t.int32_data()) {
        uint16_t h = static_cast<uint16_t>(v);
        put(&h, 2);
      }
      break;
    case pb::TensorProto::BOOL:
      for (int32_t v : t.int32_data()) {
        char c = v != 0;
        put(&c, 1);
      }
      break;
    default:
      break;
    }
  }
  if (out.size() != want)
    return wrongSize(out.size());
  return out;
}

FailureOr<ElementsAttr> Importer::tensorAttr(const pb::TensorProto &t,
                                             StringRef what) {
  Type elem = onnx::elementTypeOf(t.data_type(), ctx);
  if (!elem)
    return error() << what << " has dtype " << dtypeName(t.data_type())
                   << ", which ampc does not support (supported: "
                   << onnx::kSupportedDtypes << ")",
           failure();
  SmallVector<int64_t> dims(t.dims().begin(), t.dims().end());
  for (auto [i, d] : llvm::enumerate(dims))
    if (d < 0)
      return error() << what << " has negative dimension " << i << " (" << d
                     << ")",
             failure();
  auto type = RankedTensorType::get(dims, elem);
  if (std::string overflow = sizeOverflow(type); !overflow.empty())
    return error() << what << " of type " << type << " " << overflow, failure();
  // Its data is read into memory: more than 2^40 elements is no model.
  int64_t count = *checkedNumElements(type);
  if (count > kMaxTensorElements)
    return error() << what << " of type " << type << " has " << count
                   << " elements, more than the " << kMaxTensorElements
                   << " ampc reads from one tensor",
           failure();
  size_t elemBytes = elementBytes(elem);
  FailureOr<std::string> data = tensorBytes(t, what, elemBytes, count);
  if (failed(data))
    return failure();
  if (elem.isInteger(1)) {
    SmallVector<bool> values;
    for (char c : *data)
      values.push_back(c != 0);
    return cast<ElementsAttr>(DenseElementsAttr::get(type, values));
  }
  if (data->size() <= kInlineTensorBytes)
    return cast<ElementsAttr>(DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef<char>(data->data(), data->size())));
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(data->data(), data->size()), alignof(uint64_t));
  std::string key = "onnx_tensor_" + std::to_string(blobCounter++);
  return cast<ElementsAttr>(
      DenseResourceElementsAttr::get(type, key, std::move(blob)));
}

FailureOr<NamedAttribute> Importer::attribute(const pb::AttributeProto &a,
                                              StringRef where) {
  StringAttr name = b.getStringAttr(a.name());
  switch (a.type()) {
  case pb::AttributeProto::FLOAT:
    return NamedAttribute(name, b.getF32FloatAttr(a.f()));
  case pb::AttributeProto::INT:
    return NamedAttribute(name, b.getI64IntegerAttr(a.i()));
  case pb::AttributeProto::STRING:
    return NamedAttribute(name, b.getStringAttr(a.s()));
  case pb::AttributeProto::FLOATS:
    return NamedAttribute(name, b.getDenseF32ArrayAttr(SmallVector<float>(
                                    a.floats().begin(), a.floats().end())));
  case pb::AttributeProto::INTS:
    return NamedAttribute(name, b.getDenseI64ArrayAttr(SmallVector<int64_t>(
                                    a.ints().begin(), a.ints().end())));
  case pb::AttributeProto::STRINGS: {
    SmallVector<Attribute> strs;
    for (const auto &s : a.strings())
      strs.push_back(b.getStringAttr(s));
    return NamedAttribute(name, b.getArrayAttr(strs));
  }
  case pb::AttributeProto::TENSOR: {
    auto t = tensorAttr(a.t(), (where + " attribute '" + a.name() + "'").str());
    if (failed(t))
      return failure();
    return NamedAttribute(name, *t);
  }
  default:
    return error() << where << ": attribute '" << a.name() << "' is of kind "
                   << pb::AttributeProto_AttributeType_Name(a.type())
                   << ", which ampc does not support (subgraphs, sparse "
                      "tensors and type attributes have no graph form)",
           failure();
  }
}

/// A graph input with an initializer of its name takes the initializer's
/// value (a default the caller may replace, in ONNX), so the two must agree:
/// otherwise the first node that reads it would be blamed.
LogicalResult Importer::checkShadowedInput(const pb::ValueInfoProto &input,
                                           const pb::TensorProto &init) {
  if (!input.type().has_tensor_type())
    return success();
  const auto &tt = input.type().tensor_type();
  bool same = tt.elem_type() == 0 || tt.elem_type() == init.data_type();
  if (same && tt.has_shape()) {
    same = tt.shape().dim_size() == init.dims_size();
    for (int i = 0; same && i < init.dims_size(); ++i) {
      const auto &d = tt.shape().dim(i);
      same = !d.has_dim_value() || d.dim_value() < 0 ||
             d.dim_value() == init.dims(i);
    }
  }
  if (same)
    return success();
  auto diag = error() << "graph input '" << input.name() << "' is declared "
                      << valueType(input.type())
                      << ", but the initializer of the same name (its "
                         "default value) is ";
  Type elem = onnx::elementTypeOf(init.data_type(), ctx);
  if (elem && llvm::all_of(init.dims(), [](int64_t d) { return d >= 0; }))
    return diag << RankedTensorType::get(
               SmallVector<int64_t>(init.dims().begin(), init.dims().end()),
               elem);
  diag << "[";
  for (int i = 0; i < init.dims_size(); ++i)
    diag << (i ? ", " : "") << init.dims(i);
  return diag << "] of " << dtypeName(init.data_type());
}

LogicalResult Importer::emitGraph(const pb::ModelProto &model,
                                  ModuleOp module) {
  const pb::GraphProto &graph = model.graph();
  if (graph.output_size() == 0)
    return error() << "the graph"
                   << (graph.name().empty() ? "" : " '" + graph.name() + "'")
                   << " has no outputs, so it computes nothing",
           failure();

  for (const auto &vi : graph.value_info())
    valueInfo[vi.name()] = valueType(vi.type());
  for (const auto &vi : graph.output())
    valueInfo[vi.name()] = valueType(vi.type());

  // Arguments: graph inputs that are not initializers, then initializers.
  llvm::StringMap<const pb::TensorProto *> initializers;
  for (const auto &init : graph.initializer()) {
    if (init.name().empty())
      return error() << "an initializer has no name";
    if (!initializers.try_emplace(init.name(), &init).second)
      return error() << "initializer '" << init.name() << "' is defined twice";
  }
  SmallVector<Type> argTypes;
  SmallVector<DictionaryAttr> argAttrs;
  SmallVector<std::string> argNames;
  llvm::StringSet<> inputNames;
  for (const auto &in : graph.input()) {
    if (!inputNames.insert(in.name()).second)
      return error() << "graph input '" << in.name() << "' is declared twice",
             failure();
    if (auto init = initializers.find(in.name()); init != initializers.end()) {
      if (failed(checkShadowedInput(in, *init->second)))
        return failure();
      continue;
    }
    FailureOr<Type> t = inputType(in);
    if (failed(t))
      return failure();
    argTypes.push_back(*t);
    argNames.push_back(in.name());
    argAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("onnx.name", b.getStringAttr(in.name()))));
  }
  // Buffers the exporter says are not weights (tools/export_torch.py writes
  // them from named_buffers()): convert-onnx-to-graph leaves them untrained.
  llvm::StringSet<> frozen;
  for (const auto &p : model.metadata_props()) {
    if (p.key() != kFrozenMetadataKey)
      continue;
    for (StringRef name : llvm::split(p.value(), ',')) {
      name = name.trim();
      if (name.empty())
        continue;
      if (!initializers.count(name))
        return error() << "metadata '" << kFrozenMetadataKey << "' names '"
                       << name << "', which is not an initializer of the model",
               failure();
      frozen.insert(name);
    }
  }
  for (const auto &init : graph.initializer()) {
    auto data = tensorAttr(init, ("initializer '" + init.name() + "'"));
    if (failed(data))
      return failure();
    argTypes.push_back(data->getType());
    argNames.push_back(init.name());
    SmallVector<NamedAttribute> attrs = {
        b.getNamedAttr("onnx.name", b.getStringAttr(init.name())),
        b.getNamedAttr("onnx.initializer", *data)};
    if (frozen.contains(init.name()))
      attrs.push_back(b.getNamedAttr(onnx::kFrozenArgAttr, b.getUnitAttr()));
    argAttrs.push_back(b.getDictionaryAttr(attrs));
  }

  OpBuilder ob(ctx);
  ob.setInsertionPointToEnd(module.getBody());
  auto func = func::FuncOp::create(ob, fileLoc, "forward",
                                   ob.getFunctionType(argTypes, {}));
  Block *body = func.addEntryBlock();
  ob.setInsertionPointToStart(body);
  llvm::StringMap<Value> values;
  // What wrote each value, for a value written twice.
  llvm::StringMap<std::string> writers;
  for (auto [i, name] : llvm::enumerate(argNames)) {
    values[name] = body->getArgument(i);
    writers[name] =
        (initializers.count(name) ? "initializer '" : "graph input '") + name +
        "'";
    func.setArgAttrs(i, argAttrs[i]);
  }

  Value none;
  for (auto [index, node] : llvm::enumerate(graph.node())) {
    Location loc = nodeLoc(node, index);
    std::string domain = onnxDomainKey(node.domain());
    auto opset = opsets.find(domain);
    if (opset == opsets.end())
      return error() << nodeDesc(node, index, std::nullopt) << " uses domain '"
                     << domain << "', which the model does not import";
    std::string desc = nodeDesc(node, index, opset->second);
    SmallVector<Value> inputs;
    for (const std::string &in : node.input()) {
      if (in.empty()) {
        if (!none)
          none = onnx::NoneOp::create(ob, fileLoc, ob.getNoneType());
        inputs.push_back(none);
        continue;
      }
      auto it = values.find(in);
      if (it == values.end())
        return error() << desc << ": input '" << in
                       << "' is neither a graph input, an initializer nor "
                          "the output of an earlier node",
               failure();
      inputs.push_back(it->second);
    }
    SmallVector<Type> resultTypes;
    for (const std::string &out : node.output()) {
      auto it = valueInfo.find(out);
      resultTypes.push_back(it == valueInfo.end() ? onnx::UnknownType::get(ctx)
                                                  : it->second);
    }
    SmallVector<NamedAttribute> attrs;
    for (const auto &a : node.attribute()) {
      auto attr = attribute(a, desc);
      if (failed(attr))
        return failure();
      attrs.push_back(*attr);
    }
    auto op = onnx::NodeOp::create(
        ob, loc, resultTypes, inputs, b.getStringAttr(node.op_type()),
        domain.empty() ? StringAttr() : b.getStringAttr(domain),
        b.getI64IntegerAttr(opset->second), b.getDictionaryAttr(attrs));
    for (auto [i, out] : llvm::enumerate(node.output())) {
      if (out.empty())
        continue;
      auto [writer, first] = writers.try_emplace(out, desc);
      if (!first)
        return error() << "value '" << out << "' is written twice: by "
                       << writer->second << " and by " << desc
                       << " (an ONNX graph writes each value once)",
               failure();
      values[out] = op.getResult(i);
    }
  }

  SmallVector<Value> results;
  SmallVector<DictionaryAttr> resultAttrs;
  for (const auto &out : graph.output()) {
    auto it = values.find(out.name());
    if (it == values.end())
      return error() << "graph output '" << out.name()
                     << "' is produced by no node, input or initializer";
    results.push_back(it->second);
    resultAttrs.push_back(b.getDictionaryAttr(
        b.getNamedAttr("onnx.name", b.getStringAttr(out.name()))));
  }
  func::ReturnOp::create(ob, fileLoc, results);
  func.setType(ob.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, attrs] : llvm::enumerate(resultAttrs))
    func.setResultAttrs(i, attrs);
  return success();
}

OwningOpRef<ModuleOp> Importer::run(StringRef bytes) {
  pb::ModelProto model;
  if (bytes.empty()) {
    error() << "file is empty, not an ONNX model";
    return nullptr;
  }
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    error() << "not a valid ONNX model: the protobuf does not parse (is the "
               "file truncated, corrupt or not ONNX?)";
    return nullptr;
  }
  if (!model.has_graph() || model.ir_version() <= 0 ||
      model.opset_import_size() == 0) {
    error() << "not a valid ONNX model: "
            << (!model.has_graph()        ? "it has no graph"
                : model.ir_version() <= 0 ? "it has no IR version"
                                          : "it imports no opset");
    return nullptr;
  }
  // A model need not import the default domain (ONNX's optimizer node
  // tests import only ai.onnx.preview.training); a node of a domain the
  // model does not import is an error, in emitGraph.
  for (const auto &o : model.opset_import())
    opsets[onnxDomainKey(o.domain())] = o.version();
  if (failed(applyShapeOverrides(*model.mutable_graph())) ||
      failed(applyBindings(*model.mutable_graph())))
    return nullptr;
  if (options.checkModel && failed(checkWithOnnx(model)))
    return nullptr;
  // Checked with or without ONNX's checker: the converter relies on it.
  if (failed(checkNodes(model.graph())))
    return nullptr;
  // Types of node results are only a hint: convert-onnx-to-graph computes
  // them itself and reports mismatches with the node's name.
  inferOnnxShapes(*model.mutable_graph(), opsets);

  OwningOpRef<ModuleOp> module(ModuleOp::create(fileLoc));
  SmallVector<NamedAttribute> attrs{b.getNamedAttr(
      "onnx.ir_version", b.getI64IntegerAttr(model.ir_version()))};
  if (!model.producer_name().empty())
    attrs.push_back(b.getNamedAttr("onnx.producer",
                                   b.getStringAttr(model.producer_name())));
  (*module)->setAttrs(attrs);
  if (failed(emitGraph(model, *module)))
    return nullptr;
  return module;
}

} // namespace

bool parseShapeSpec(StringRef spec,
                    std::pair<std::string, std::vector<int64_t>> &out,
                    std::string &error) {
  auto [name, dims] = spec.rsplit('=');
  if (name.empty() || !spec.contains('=')) {
    error = "--shape '" + spec.str() + "' is not of the form NAME=d0,d1,...";
    return false;
  }
  out.first = name.str();
  out.second.clear();
  SmallVector<StringRef> parts;
  if (!dims.empty())
    dims.split(parts, ',');
  for (StringRef p : parts) {
    int64_t d;
    if (p.trim().getAsInteger(10, d) || d < 0) {
      error = "--shape '" + spec.str() + "': '" + p.str() +
              "' is not a non-negative integer";
      return false;
    }
    out.second.push_back(d);
  }
  return true;
}

bool addShapeSpec(
    StringRef spec,
    std::vector<std::pair<std::string, std::vector<int64_t>>> &shapes,
    std::string &error) {
  std::pair<std::string, std::vector<int64_t>> parsed;
  if (!parseShapeSpec(spec, parsed, error))
    return false;
  for (const auto &[name, dims] : shapes) {
    if (name != parsed.first)
      continue;
    if (dims == parsed.second)
      return true;
    error = "--shape is given twice for input '" + name + "', as '" +
            shapeSpec(name, dims) + "' and as '" + spec.str() + "'";
    return false;
  }
  shapes.push_back(std::move(parsed));
  return true;
}

OwningOpRef<ModuleOp> importOnnxModel(StringRef bytes, StringRef fileName,
                                      MLIRContext *context,
                                      const OnnxImportOptions &options) {
  context->loadDialect<onnx::OnnxDialect, func::FuncDialect>();
  Importer importer(context, fileName, options);
  return importer.run(bytes);
}

} // namespace ampc
