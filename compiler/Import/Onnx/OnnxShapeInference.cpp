//===- OnnxShapeInference.cpp - ONNX's shape inference, guarded -----------===//
//
// Some of libonnx 1.12's inference functions index shapes and divide by
// attributes without checking them, and crash (a segmentation fault, a
// division by zero, an endless loop) on a malformed node: a Conv whose
// filter has more dimensions than its input, a zero stride, a shape input
// of 2^40 elements. No exception reports those, so onnx::InferShapes is not
// called; this file walks the nodes itself and calls a node's inference
// function only when
//  - its schema version is one whose function was read for such faults
//    (audited(): the ops convert-onnx-to-graph handles);
//  - every input it has is a tensor of static shape, at most kMaxRank
//    dimensions, whose element count fits int64;
//  - the preconditions below that the function does not check itself hold;
//  - every initializer or Constant value it may read has as many elements
//    of data as its shape says (ParseData copies past the end otherwise).
// Anything else is left untyped for convert-onnx-to-graph to judge. ONNX's
// data propagation is not run: its functions index shapes unchecked too,
// and the converter folds shape computations itself.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxShapeInference.h"
#include "compiler/Import/Onnx/OnnxNodeCheck.h"
#include "runtime/ByteSize.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include "onnx/shape_inference/implementation.h"

#include <deque>
#include <exception>
#include <optional>
#include <string>
#include <unordered_map>

namespace pb = ::onnx;

namespace ampc {
namespace {

/// Inputs of more dimensions than this are left to the converter.
constexpr int kMaxRank = 64;
/// Integer inputs that inference reads as a list (shapes, axes, split
/// sizes, slice bounds) longer than this are left to the converter: ONNX
/// builds a dimension per entry.
constexpr int64_t kMaxListInput = 64;

/// The schema versions whose inference functions were read (libonnx 1.12):
/// for each "domain::op", the oldest version read; every newer one in 1.12
/// was read too. Adding an op to convert-onnx-to-graph means reading its
/// functions (onnx/defs/*/defs.cc and old.cc) and adding it here, with
/// guards in preconditionsHold if they need any; until then its results
/// are typed by the converter alone. (ConstantOfShape, Range, Tile, Pad
/// and Trilu are not here: their functions read input data to build
/// dimensions, unbounded by kMaxListInput; the converter types them.)
const llvm::StringMap<int> &audited() {
  static const llvm::StringMap<int> table = {
      {"::Abs", 6},
      {"::Add", 7},
      {"::And", 7},
      {"::AveragePool", 11},
      {"::BatchNormalization", 9},
      {"::Cast", 9},
      {"::Clip", 11},
      {"::Concat", 11},
      {"::Constant", 11},
      {"::Conv", 11},
      {"::Cos", 7},
      {"::Div", 7},
      {"::Dropout", 10},
      {"::Equal", 11},
      {"::Erf", 9},
      {"::Exp", 6},
      {"::Expand", 8},
      {"::Flatten", 11},
      {"::Gather", 11},
      {"::Gemm", 11},
      {"::GlobalAveragePool", 1},
      {"::Greater", 9},
      {"::GreaterOrEqual", 12},
      {"::HardSigmoid", 6},
      {"::HardSwish", 14},
      {"::Identity", 1},
      {"::LayerNormalization", 17},
      {"::LeakyRelu", 6},
      {"::Less", 9},
      {"::LessOrEqual", 12},
      {"::Log", 6},
      {"::LogSoftmax", 11},
      {"::MatMul", 9},
      {"::MaxPool", 11},
      {"::Mul", 7},
      {"::Neg", 6},
      {"::NegativeLogLikelihoodLoss", 12},
      {"::Not", 1},
      {"::Or", 7},
      {"::Pow", 7},
      {"::Reciprocal", 6},
      {"::ReduceMax", 11},
      {"::ReduceMean", 11},
      {"::ReduceSum", 11},
      {"::Relu", 6},
      {"::Reshape", 5},
      {"::Shape", 1},
      {"::Sigmoid", 6},
      {"::Sin", 7},
      {"::Slice", 11},
      {"::Softmax", 11},
      {"::SoftmaxCrossEntropyLoss", 12},
      {"::Softplus", 1},
      {"::Split", 11},
      {"::Sqrt", 6},
      {"::Squeeze", 11},
      {"::Sub", 7},
      {"::Tanh", 6},
      {"::Transpose", 1},
      {"::Unsqueeze", 11},
      {"::Where", 9},
      {"::Xor", 7},
      {"ai.onnx.preview.training::Adagrad", 1},
      {"ai.onnx.preview.training::Adam", 1},
      {"ai.onnx.preview.training::Momentum", 1},
  };
  return table;
}

bool isAudited(const pb::OpSchema &schema) {
  auto it = audited().find(schema.domain() + "::" + schema.Name());
  return it != audited().end() && schema.SinceVersion() >= it->second &&
         schema.has_type_and_shape_inference_function();
}

/// A tensor type every inference function can read: static dimensions,
/// not too many, and an element count that int64 holds.
bool isStaticTensor(const pb::TypeProto &type) {
  if (!type.has_tensor_type() || type.tensor_type().elem_type() == 0 ||
      !type.tensor_type().has_shape())
    return false;
  const pb::TensorShapeProto &shape = type.tensor_type().shape();
  if (shape.dim_size() > kMaxRank)
    return false;
  llvm::SmallVector<int64_t, kMaxRank> dims;
  for (const auto &d : shape.dim()) {
    if (!d.has_dim_value())
      return false;
    dims.push_back(d.dim_value());
  }
  return rt::checkedNumElements(dims.data(), dims.size()).has_value();
}

int64_t numElements(const pb::TypeProto &type) {
  int64_t n = 1;
  for (const auto &d : type.tensor_type().shape().dim())
    n *= d.dim_value();
  return n;
}

/// Whether ParseData can read `t` safely: data of the kind its dtype says,
/// and exactly as many elements as its dimensions. ParseData trusts both.
bool hasWholeData(const pb::TensorProto &t) {
  if (t.data_location() == pb::TensorProto::EXTERNAL)
    return false;
  std::optional<int64_t> checked =
      rt::checkedNumElements(t.dims().data(), t.dims_size());
  if (!checked)
    return false;
  int64_t elements = *checked;
  int64_t bytes, stored;
  switch (t.data_type()) {
  case pb::TensorProto::FLOAT:
    bytes = 4, stored = t.float_data_size();
    break;
  case pb::TensorProto::INT32:
    bytes = 4, stored = t.int32_data_size();
    break;
  case pb::TensorProto::INT64:
    bytes = 8, stored = t.int64_data_size();
    break;
  case pb::TensorProto::DOUBLE:
    bytes = 8, stored = t.double_data_size();
    break;
  case pb::TensorProto::UINT64:
    bytes = 8, stored = t.uint64_data_size();
    break;
  default:
    return false;
  }
  if (t.has_raw_data())
    return t.raw_data().size() % bytes == 0 &&
           t.raw_data().size() / bytes == static_cast<uint64_t>(elements);
  return stored == elements;
}

const pb::AttributeProto *attribute(const pb::NodeProto &node,
                                    const char *name) {
  for (const pb::AttributeProto &a : node.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}

bool allPositive(const pb::AttributeProto *a) {
  return !a || llvm::all_of(a->ints(), [](int64_t v) { return v > 0; });
}

/// Preconditions of 1.12's inference functions that they do not check.
/// `inputs` holds a static tensor type per present input, null for an
/// absent optional one.
bool preconditionsHold(const pb::NodeProto &node,
                       llvm::ArrayRef<const pb::TypeProto *> inputs) {
  const std::string &op = node.op_type();
  auto rank = [&](size_t i) {
    return i < inputs.size() && inputs[i]
               ? inputs[i]->tensor_type().shape().dim_size()
               : -1;
  };
  // convPoolShapeInference divides by the strides, and takes a Conv's
  // kernel from its filter, indexing the input's spatial dimensions,
  // dilations and pads by the filter's.
  if (op == "Conv" || op == "MaxPool" || op == "AveragePool") {
    if (!allPositive(attribute(node, "strides")))
      return false;
    if (op == "Conv" && !attribute(node, "kernel_shape") && rank(0) != rank(1))
      return false;
  }
  // Sets the statistics' dimensions from `axis` on, which may be negative.
  if (op == "LayerNormalization") {
    const pb::AttributeProto *axis = attribute(node, "axis");
    int64_t a = axis ? axis->i() : -1;
    if (a < -rank(0) || a >= rank(0))
      return false;
  }
  // Shapes, axes, split sizes and slice bounds come as inputs after the
  // first; ONNX adds a dimension per entry (or per element of the input's
  // length when it is not a constant).
  if (op == "Reshape" || op == "Expand" || op == "Squeeze" ||
      op == "Unsqueeze" || op == "Slice" || op == "Split" ||
      op == "ReduceSum" || op == "ReduceMean" || op == "ReduceMax") {
    for (size_t i = 1; i < inputs.size(); ++i)
      if (inputs[i] && numElements(*inputs[i]) > kMaxListInput)
        return false;
  }
  return true;
}

class Inference {
public:
  Inference(pb::GraphProto &graph, const llvm::StringMap<int64_t> &opsets)
      : graph(graph), opsets(opsets) {}

  void run();

private:
  void declare(pb::ValueInfoProto &vi);
  void inferNode(pb::NodeProto &node);
  void record(const std::string &name, const pb::TypeProto &inferred);

  pb::GraphProto &graph;
  const llvm::StringMap<int64_t> &opsets;
  /// Types by value name, pointing into the graph's value_info, inputs and
  /// outputs (as ONNX's own pass does) or into initializerTypes.
  std::unordered_map<std::string, pb::TypeProto *> types;
  /// Outputs declared without a type: they take the inferred one.
  std::unordered_map<std::string, pb::TypeProto *> untypedOutputs;
  std::deque<pb::TypeProto> initializerTypes;
  /// Values inference may read: initializers and Constant node values.
  std::unordered_map<std::string, const pb::TensorProto *> data;
  const std::unordered_map<std::string, const pb::SparseTensorProto *>
      noSparseData;
};

void Inference::declare(pb::ValueInfoProto &vi) {
  if (vi.name().empty())
    return;
  if (vi.has_type())
    types[vi.name()] = vi.mutable_type();
  else
    untypedOutputs[vi.name()] = vi.mutable_type();
}

void Inference::run() {
  for (auto &vi : *graph.mutable_value_info())
    declare(vi);
  for (auto &vi : *graph.mutable_input())
    declare(vi);
  for (auto &vi : *graph.mutable_output())
    declare(vi);
  for (const pb::TensorProto &init : graph.initializer()) {
    if (init.name().empty())
      continue;
    if (hasWholeData(init))
      data[init.name()] = &init;
    // A graph input of the same name keeps its declared type, as in ONNX.
    if (types.count(init.name()))
      continue;
    pb::TypeProto &type = initializerTypes.emplace_back();
    type.mutable_tensor_type()->set_elem_type(init.data_type());
    auto *shape = type.mutable_tensor_type()->mutable_shape();
    for (int64_t d : init.dims())
      shape->add_dim()->set_dim_value(d);
    types[init.name()] = &type;
  }
  for (const pb::NodeProto &node : graph.node())
    if (node.op_type() == "Constant" && node.output_size() == 1)
      for (const pb::AttributeProto &a : node.attribute())
        if (a.name() == "value" && a.type() == pb::AttributeProto::TENSOR &&
            a.has_t() && hasWholeData(a.t()))
          data[node.output(0)] = &a.t();
  for (pb::NodeProto &node : *graph.mutable_node())
    inferNode(node);
}

void Inference::inferNode(pb::NodeProto &node) {
  const pb::OpSchema *schema = onnxSchemaOf(node, opsets);
  if (!schema || !isAudited(*schema))
    return;
  llvm::SmallVector<const pb::TypeProto *> inputs;
  for (const std::string &name : node.input()) {
    if (name.empty()) {
      inputs.push_back(nullptr);
      continue;
    }
    auto it = types.find(name);
    if (it == types.end() || !isStaticTensor(*it->second))
      return;
    inputs.push_back(it->second);
  }
  if (!preconditionsHold(node, inputs))
    return;
  pb::shape_inference::InferenceContextImpl ctx(node, types, data,
                                                noSparseData);
  try {
    schema->GetTypeAndShapeInferenceFunction()(ctx);
  } catch (const std::exception &) {
    // The node is wrong in a way ONNX noticed; the converter will say how.
    return;
  }
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      record(node.output(i), *ctx.getOutputType(i));
}

void Inference::record(const std::string &name, const pb::TypeProto &inferred) {
  if (inferred.value_case() == pb::TypeProto::VALUE_NOT_SET)
    return;
  pb::TypeProto *existing;
  if (auto it = types.find(name); it != types.end()) {
    existing = it->second;
  } else {
    pb::ValueInfoProto *vi = graph.add_value_info();
    vi->set_name(name);
    existing = vi->mutable_type();
    if (auto out = untypedOutputs.find(name); out != untypedOutputs.end())
      *out->second = inferred;
  }
  try {
    pb::shape_inference::mergeShapesAndTypes(inferred, existing);
  } catch (const std::exception &) {
    // The model declares another type: the converter reports the two.
    return;
  }
  types[name] = existing;
}

} // namespace

void inferOnnxShapes(pb::GraphProto &graph,
                     const llvm::StringMap<int64_t> &opsets) {
  Inference(graph, opsets).run();
}

} // namespace ampc
