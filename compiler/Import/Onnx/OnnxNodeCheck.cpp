//===- OnnxNodeCheck.cpp - one ONNX node against its schema ---------------===//
//
// See OnnxNodeCheck.h. The common mistakes (input and output counts,
// attribute kinds, missing attributes) get messages of our own; whatever
// else OpSchema::Verify refuses (an attribute the op does not define, an
// empty required input, a deprecated op) is reported in ONNX's words.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxNodeCheck.h"
#include "compiler/Import/Onnx/OnnxSchemas.h"

#include <climits>
#include <exception>
#include <set>

namespace pb = ::onnx;

namespace ampc {
namespace {

std::string count(int n, const char *noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

/// "1", "1 to 3", "at least 2": how many a schema allows.
std::string range(int min, int max) {
  if (min == max)
    return std::to_string(min);
  if (max == INT_MAX)
    return "at least " + std::to_string(min);
  return std::to_string(min) + " to " + std::to_string(max);
}

const std::string &kindName(pb::AttributeProto::AttributeType kind) {
  return pb::AttributeProto::AttributeType_Name(kind);
}

} // namespace

const pb::OpSchema *onnxSchemaOf(const pb::NodeProto &node,
                                 const llvm::StringMap<int64_t> &opsets) {
  std::string domain = onnxDomainKey(node.domain());
  auto opset = opsets.find(domain);
  if (opset == opsets.end() || opset->second > INT_MAX)
    return nullptr;
  return onnxSchemas().GetSchema(node.op_type(),
                                 static_cast<int>(opset->second), domain);
}

std::string checkOnnxNode(const pb::NodeProto &node,
                          const pb::OpSchema &schema) {
  const std::string &op = node.op_type();
  if (node.input_size() < schema.min_input() ||
      node.input_size() > schema.max_input())
    return "has " + count(node.input_size(), "input") + ", but " + op +
           " takes " + range(schema.min_input(), schema.max_input());
  if (node.output_size() < schema.min_output() ||
      node.output_size() > schema.max_output())
    return "has " + count(node.output_size(), "output") + ", but " + op +
           " gives " + range(schema.min_output(), schema.max_output());

  std::set<std::string> seen;
  for (const pb::AttributeProto &a : node.attribute()) {
    seen.insert(a.name());
    auto def = schema.attributes().find(a.name());
    if (def == schema.attributes().end() || a.type() == def->second.type)
      continue;
    return "attribute '" + a.name() + "' is of kind " + kindName(a.type()) +
           ", but " + op + " defines '" + a.name() + "' as " +
           kindName(def->second.type);
  }
  for (const auto &[name, def] : schema.attributes())
    if (def.required && !seen.count(name))
      return "lacks the attribute '" + name + "', which " + op + " requires";

  try {
    schema.Verify(node);
  } catch (const std::exception &e) {
    return std::string("does not fit ONNX's schema of ") + op + ": " + e.what();
  }
  return "";
}

} // namespace ampc
