//===- OnnxSchemas.cpp - libonnx's schemas and ampc's opset-18 ones -------===//
//
// See OnnxSchemas.h. The opset-18 schemas state what ONNX's operator
// documentation states for those versions: inputs (and which are optional),
// outputs, attributes with their kinds and defaults, and type constraints.
// They carry no shape inference: the converter computes every result type
// itself.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxSchemas.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

namespace pb = ::onnx;
using Schema = pb::OpSchema;

namespace ampc {
namespace {

constexpr int kOpset18 = 18;

Schema begin(const char *name) {
  Schema s;
  s.SetName(name).SetDomain("").SinceVersion(kOpset18);
  return s;
}

/// ReduceMean-18 and its siblings: the axes became an optional input.
Schema reduction(const char *name) {
  Schema s = begin(name);
  s.Input(0, "data", "", "T")
      .Input(1, "axes", "", "tensor(int64)", Schema::Optional)
      .Output(0, "reduced", "", "T")
      .Attr("keepdims", "", pb::AttributeProto::INT, int64_t(1))
      .Attr("noop_with_empty_axes", "", pb::AttributeProto::INT, int64_t(0))
      .TypeConstraint("T", Schema::all_numeric_types_with_bfloat(), "");
  return s;
}

/// Split-18: `num_outputs` says how many equal parts when `split` is absent.
Schema split() {
  Schema s = begin("Split");
  s.Input(0, "input", "", "T")
      .Input(1, "split", "", "tensor(int64)", Schema::Optional)
      .Output(0, "outputs", "", "T", Schema::Variadic)
      .Attr("axis", "", pb::AttributeProto::INT, int64_t(0))
      .Attr("num_outputs", "", pb::AttributeProto::INT, false)
      .TypeConstraint("T", Schema::all_tensor_types_with_bfloat(), "");
  return s;
}

/// Pad-18: `axes` (input 3) names the axes that `pads` covers.
Schema pad() {
  Schema s = begin("Pad");
  s.Input(0, "data", "", "T")
      .Input(1, "pads", "", "tensor(int64)")
      .Input(2, "constant_value", "", "T", Schema::Optional)
      .Input(3, "axes", "", "Tind", Schema::Optional)
      .Output(0, "output", "", "T")
      .Attr("mode", "", pb::AttributeProto::STRING, std::string("constant"))
      .TypeConstraint("T", Schema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint("Tind", {"tensor(int32)", "tensor(int64)"}, "");
  return s;
}

/// Resize-18: `axes`, `antialias` and `keep_aspect_ratio_policy` are new.
Schema resize() {
  Schema s = begin("Resize");
  s.Input(0, "X", "", "T1")
      .Input(1, "roi", "", "T2", Schema::Optional)
      .Input(2, "scales", "", "tensor(float)", Schema::Optional)
      .Input(3, "sizes", "", "tensor(int64)", Schema::Optional)
      .Output(0, "Y", "", "T1")
      .Attr("antialias", "", pb::AttributeProto::INT, int64_t(0))
      .Attr("axes", "", pb::AttributeProto::INTS, false)
      .Attr("coordinate_transformation_mode", "", pb::AttributeProto::STRING,
            std::string("half_pixel"))
      .Attr("cubic_coeff_a", "", pb::AttributeProto::FLOAT, -0.75f)
      .Attr("exclude_outside", "", pb::AttributeProto::INT, int64_t(0))
      .Attr("extrapolation_value", "", pb::AttributeProto::FLOAT, 0.0f)
      .Attr("keep_aspect_ratio_policy", "", pb::AttributeProto::STRING,
            std::string("stretch"))
      .Attr("mode", "", pb::AttributeProto::STRING, std::string("nearest"))
      .Attr("nearest_mode", "", pb::AttributeProto::STRING,
            std::string("round_prefer_floor"))
      .TypeConstraint("T1", Schema::all_tensor_types_with_bfloat(), "")
      .TypeConstraint(
          "T2", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "");
  return s;
}

/// Mish-18, new at 18: x tanh(softplus(x)).
Schema mish() {
  Schema s = begin("Mish");
  s.Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint(
          "T", {"tensor(float16)", "tensor(float)", "tensor(double)"}, "");
  return s;
}

class Registry final : public pb::ISchemaRegistry {
public:
  Registry() {
    for (const char *name : {"ReduceL1", "ReduceL2", "ReduceLogSum",
                             "ReduceLogSumExp", "ReduceMax", "ReduceMean",
                             "ReduceMin", "ReduceProd", "ReduceSumSquare"})
      add(reduction(name));
    add(split());
    add(pad());
    add(resize());
    add(mish());
    // Changed at 18 too; ampc converts none of them.
    for (const char *name : {"LpPool", "ScatterElements", "ScatterND",
                             "OptionalGetElement", "OptionalHasElement"})
      changedWithoutSchema.insert(name);
  }

  const Schema *GetSchema(const std::string &op, const int maxInclusiveVersion,
                          const std::string &domain) const override {
    bool defaultDomain = domain.empty() || domain == "ai.onnx";
    if (defaultDomain && maxInclusiveVersion >= kOpset18) {
      if (auto it = opset18.find(op); it != opset18.end())
        return &it->second;
      if (changedWithoutSchema.contains(op))
        return nullptr;
    }
    return pb::OpSchemaRegistry::Schema(op, maxInclusiveVersion, domain);
  }

private:
  void add(Schema s) {
    s.Finalize();
    std::string name = s.Name();
    opset18.try_emplace(name, std::move(s));
  }

  llvm::StringMap<Schema> opset18;
  llvm::StringSet<> changedWithoutSchema;
};

} // namespace

const pb::ISchemaRegistry &onnxSchemas() {
  static const Registry registry;
  return registry;
}

} // namespace ampc
