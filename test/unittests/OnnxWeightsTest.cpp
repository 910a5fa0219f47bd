//===- OnnxWeightsTest.cpp - trained weights written into ONNX files ------===//
//
// A small model is built here with ONNX's protobuf API (so the tests need no
// shared/ checkout), its initializers held in every storage form (typed
// fields, raw_data, external data). New weights are written, and the result
// is read back twice: with protobuf, where it must equal the input model
// except for the replaced data, and with ampc's importer, which must see the
// new values.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxWeights.h"
#include "compiler/Import/Onnx/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/MLIRContext.h"
#include "onnx/onnx_pb.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unistd.h>

namespace pb = ::onnx;
using ampc::rt::DType;
using ampc::rt::HostTensor;

namespace {

class OnnxWeights : public ::testing::Test {
protected:
  void SetUp() override {
    dir = ::testing::TempDir() + "ampc-onnxweights-" +
          std::to_string(getpid()) + "-" +
          ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
  }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::string dir;
};

void addValueInfo(google::protobuf::RepeatedPtrField<pb::ValueInfoProto> *to,
                  const std::string &name, std::vector<int64_t> dims) {
  pb::ValueInfoProto *v = to->Add();
  v->set_name(name);
  pb::TypeProto_Tensor *t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(pb::TensorProto::FLOAT);
  for (int64_t d : dims)
    t->mutable_shape()->add_dim()->set_dim_value(d);
}

pb::NodeProto *addNode(pb::GraphProto *g, const std::string &op,
                       std::vector<std::string> ins, const std::string &out) {
  pb::NodeProto *n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_" + out);
  for (const std::string &i : ins)
    n->add_input(i);
  n->add_output(out);
  return n;
}

// out = Reshape(MatMul(x, W) + B, shape): W [8, 16] in float_data (512
// bytes, imported as a dense resource), B [16] in raw_data or external data
// (64 bytes, imported inline), shape [2] in int64_data.
pb::ModelProto makeModel(bool externalB = false) {
  pb::ModelProto m;
  m.set_ir_version(8);
  m.set_producer_name("ampc-test");
  m.set_doc_string("kept as it was");
  pb::OperatorSetIdProto *opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(17);
  pb::StringStringEntryProto *meta = m.add_metadata_props();
  meta->set_key("origin");
  meta->set_value("OnnxWeightsTest");
  pb::GraphProto *g = m.mutable_graph();
  g->set_name("g");
  addValueInfo(g->mutable_input(), "x", {2, 8});
  addValueInfo(g->mutable_output(), "out", {4, 8});

  pb::TensorProto *w = g->add_initializer();
  w->set_name("W");
  w->set_data_type(pb::TensorProto::FLOAT);
  w->add_dims(8);
  w->add_dims(16);
  for (int i = 0; i < 128; ++i)
    w->add_float_data(0.01f * i);
  pb::TensorProto *b = g->add_initializer();
  b->set_name("B");
  b->set_data_type(pb::TensorProto::FLOAT);
  b->add_dims(16);
  if (externalB) {
    b->set_data_location(pb::TensorProto::EXTERNAL);
    for (auto [k, v] :
         {std::pair<const char *, const char *>{"location", "b.bin"},
          {"offset", "0"},
          {"length", "64"}}) {
      pb::StringStringEntryProto *e = b->add_external_data();
      e->set_key(k);
      e->set_value(v);
    }
  } else {
    std::vector<float> bv(16);
    for (int i = 0; i < 16; ++i)
      bv[i] = 1.0f + i;
    b->set_raw_data(bv.data(), bv.size() * 4);
  }
  pb::TensorProto *shape = g->add_initializer();
  shape->set_name("shape");
  shape->set_data_type(pb::TensorProto::INT64);
  shape->add_dims(2);
  shape->add_int64_data(4);
  shape->add_int64_data(8);

  addNode(g, "MatMul", {"x", "W"}, "xw");
  addNode(g, "Add", {"xw", "B"}, "y");
  addNode(g, "Reshape", {"y", "shape"}, "out");
  return m;
}

void writeModel(const pb::ModelProto &m, const std::string &path) {
  std::ofstream out(path, std::ios::binary);
  ASSERT_TRUE(m.SerializeToOstream(&out));
}

std::string slurp(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

template <typename T>
HostTensor tensor(const std::string &name, DType dtype, ampc::rt::Shape shape,
                  const std::vector<T> &values) {
  HostTensor t = ampc::rt::makeHostTensor(dtype, std::move(shape), name);
  EXPECT_EQ(t.bytes.size(), values.size() * sizeof(T));
  std::memcpy(t.bytes.data(), values.data(),
              std::min(t.bytes.size(), values.size() * sizeof(T)));
  return t;
}

std::vector<float> ramp(int n, float start, float step) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i)
    v[i] = start + step * i;
  return v;
}

// What the writer must produce from `m`: the same model, `t`'s data in
// raw_data and nothing else.
void expectReplaced(pb::ModelProto &m, const HostTensor &t) {
  for (pb::TensorProto &init : *m.mutable_graph()->mutable_initializer()) {
    if (init.name() != t.name)
      continue;
    init.clear_float_data();
    init.clear_int64_data();
    init.clear_external_data();
    init.clear_data_location();
    init.set_raw_data(t.bytes.data(), t.bytes.size());
  }
}

// The initializer bytes the importer carries, by ONNX name.
std::map<std::string, std::string> importedInitializers(const std::string &path,
                                                        std::string &errors) {
  mlir::MLIRContext ctx;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    errors += d.str() + "\n";
    return mlir::success();
  });
  std::map<std::string, std::string> out;
  std::string bytes = slurp(path);
  auto module = ampc::importOnnxModel(bytes, path, &ctx, {});
  if (!module)
    return out;
  auto func = module->lookupSymbol<mlir::func::FuncOp>("forward");
  if (!func) {
    errors += "no @forward\n";
    return out;
  }
  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto name = func.getArgAttrOfType<mlir::StringAttr>(i, "onnx.name");
    auto data =
        func.getArgAttrOfType<mlir::ElementsAttr>(i, "onnx.initializer");
    if (!name || !data)
      continue;
    if (auto res = mlir::dyn_cast<mlir::DenseResourceElementsAttr>(data)) {
      llvm::ArrayRef<char> raw = res.getRawHandle().getBlob()->getData();
      out[name.str()] = std::string(raw.data(), raw.size());
    } else if (auto dense = mlir::dyn_cast<mlir::DenseElementsAttr>(data)) {
      EXPECT_FALSE(dense.isSplat()) << name.str();
      llvm::ArrayRef<char> raw = dense.getRawData();
      out[name.str()] = std::string(raw.data(), raw.size());
    }
  }
  return out;
}

std::string bytesOf(const HostTensor &t) {
  return std::string(t.bytes.begin(), t.bytes.end());
}

TEST_F(OnnxWeights, ReplacesDataAndReimports) {
  pb::ModelProto model = makeModel();
  std::string in = dir + "/in.onnx", out = dir + "/out.onnx";
  writeModel(model, in);
  std::vector<HostTensor> weights = {
      tensor("W", DType::F32, {8, 16}, ramp(128, -1.0f, 0.125f)),
      tensor("B", DType::F32, {16}, ramp(16, 0.5f, -0.25f)),
      tensor<int64_t>("shape", DType::I64, {2}, {8, 4})};
  std::string error;
  ASSERT_TRUE(ampc::writeOnnxWithWeights(in, out, weights, error)) << error;
  EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  EXPECT_EQ(slurp(in), model.SerializeAsString()); // input untouched

  pb::ModelProto got;
  ASSERT_TRUE(got.ParseFromString(slurp(out)));
  const pb::TensorProto &w = got.graph().initializer(0);
  EXPECT_EQ(w.float_data_size(), 0);
  EXPECT_EQ(w.raw_data(), bytesOf(weights[0]));
  EXPECT_EQ(got.graph().initializer(2).int64_data_size(), 0);
  for (const HostTensor &t : weights)
    expectReplaced(model, t);
  EXPECT_EQ(got.SerializeAsString(), model.SerializeAsString());

  std::string errors;
  std::map<std::string, std::string> imported =
      importedInitializers(out, errors);
  ASSERT_EQ(imported.size(), 3u) << errors;
  for (const HostTensor &t : weights)
    EXPECT_EQ(imported[t.name], bytesOf(t)) << t.name;
}

TEST_F(OnnxWeights, SomeWeightsOnlyAndOverTheInputItself) {
  pb::ModelProto model = makeModel();
  std::string path = dir + "/model.onnx";
  writeModel(model, path);
  HostTensor b = tensor("B", DType::F32, {16}, ramp(16, 3.0f, 1.0f));
  std::string error;
  ASSERT_TRUE(ampc::writeOnnxWithWeights(path, path, {b}, error)) << error;
  pb::ModelProto got;
  ASSERT_TRUE(got.ParseFromString(slurp(path)));
  expectReplaced(model, b);
  EXPECT_EQ(got.SerializeAsString(), model.SerializeAsString());
  // No weights at all: a copy of the model.
  ASSERT_TRUE(ampc::writeOnnxWithWeights(path, dir + "/copy.onnx", {}, error));
  EXPECT_EQ(slurp(dir + "/copy.onnx"), slurp(path));
}

TEST_F(OnnxWeights, ExternalDataBecomesInline) {
  // b.bin does not exist: nothing may be read from it.
  pb::ModelProto model = makeModel(/*externalB=*/true);
  std::string in = dir + "/in.onnx", out = dir + "/out.onnx";
  writeModel(model, in);
  HostTensor b = tensor("B", DType::F32, {16}, ramp(16, -2.0f, 0.5f));
  std::string error;
  ASSERT_TRUE(ampc::writeOnnxWithWeights(in, out, {b}, error)) << error;
  pb::ModelProto got;
  ASSERT_TRUE(got.ParseFromString(slurp(out)));
  const pb::TensorProto &t = got.graph().initializer(1);
  EXPECT_EQ(t.data_location(), pb::TensorProto::DEFAULT);
  EXPECT_EQ(t.external_data_size(), 0);
  EXPECT_EQ(t.raw_data(), bytesOf(b));
  std::string errors;
  std::map<std::string, std::string> imported =
      importedInitializers(out, errors);
  EXPECT_EQ(imported["B"], bytesOf(b)) << errors;
}

TEST_F(OnnxWeights, Errors) {
  std::string in = dir + "/in.onnx", out = dir + "/out.onnx";
  writeModel(makeModel(), in);
  HostTensor w = tensor("W", DType::F32, {8, 16}, ramp(128, 0, 1));
  auto fails = [&](std::vector<HostTensor> weights, const std::string &model,
                   const std::string &text) {
    std::string error;
    bool ok = ampc::writeOnnxWithWeights(model, out, weights, error);
    EXPECT_FALSE(ok) << text;
    EXPECT_NE(error.find(text), std::string::npos) << error;
    EXPECT_FALSE(std::filesystem::exists(out));
    EXPECT_FALSE(std::filesystem::exists(out + ".tmp"));
  };

  HostTensor nope = w;
  nope.name = "nope";
  fails({nope}, in, "has no initializer named 'nope'");
  HostTensor input = w;
  input.name = "x"; // a graph input, not an initializer
  fails({input}, in, "has no initializer named 'x'");
  fails({w, w}, in, "two weights are given for initializer 'W'");

  HostTensor f64 = tensor("W", DType::F64, {8, 16}, std::vector<double>(128));
  fails({f64}, in,
        "initializer 'W' is FLOAT [8, 16] but its new value is DOUBLE [8, 16]");
  HostTensor f16 = tensor("B", DType::F16, {16}, std::vector<uint16_t>(16));
  fails({f16}, in,
        "initializer 'B' is FLOAT [16] but its new value is FLOAT16 [16]");
  HostTensor transposed = w;
  transposed.shape = {16, 8};
  fails({transposed}, in,
        "initializer 'W' is FLOAT [8, 16] but its new value is FLOAT [16, 8]");
  HostTensor shortBytes = w;
  shortBytes.bytes.resize(100);
  fails({shortBytes}, in, "the new value holds 100 bytes, 512 expected");

  fails({w}, dir + "/missing.onnx", "missing.onnx: cannot read the model");
  std::string garbage = dir + "/garbage.onnx";
  std::ofstream(garbage) << "\xff\xff\xff not a protobuf";
  fails({w}, garbage, "garbage.onnx: not an ONNX model");
  std::string empty = dir + "/empty.onnx";
  std::ofstream(empty).flush();
  fails({w}, empty, "the file is empty");

  // Over 2 GB: a sparse file, refused before a byte of it is read.
  std::string huge = dir + "/huge.onnx";
  std::ofstream(huge).flush();
  std::filesystem::resize_file(huge, (uintmax_t(1) << 31) + 1);
  fails({w}, huge, "over protobuf's 2 GB limit");
}

// The shared reference model, when this checkout has one.
TEST_F(OnnxWeights, SharedTrainModel) {
  std::string in =
      std::string(AMPC_SHARED_MODELS) + "/mlp9_train_op17/model.onnx";
  if (!std::filesystem::exists(in))
    GTEST_SKIP() << in << " is absent";
  pb::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(slurp(in)));
  std::vector<HostTensor> weights;
  for (const pb::TensorProto &t : model.graph().initializer()) {
    if (t.data_type() != pb::TensorProto::FLOAT)
      continue;
    int64_t n = 1;
    for (int64_t d : t.dims())
      n *= d;
    weights.push_back(tensor(t.name(), DType::F32,
                             ampc::rt::Shape(t.dims().begin(), t.dims().end()),
                             ramp(int(n), float(weights.size()), 1e-3f)));
  }
  ASSERT_FALSE(weights.empty());
  std::string out = dir + "/out.onnx", error;
  ASSERT_TRUE(ampc::writeOnnxWithWeights(in, out, weights, error)) << error;
  pb::ModelProto got;
  ASSERT_TRUE(got.ParseFromString(slurp(out)));
  for (const HostTensor &t : weights)
    expectReplaced(model, t);
  EXPECT_EQ(got.SerializeAsString(), model.SerializeAsString());
  std::string errors;
  std::map<std::string, std::string> imported =
      importedInitializers(out, errors);
  ASSERT_FALSE(imported.empty()) << errors;
  for (const HostTensor &t : weights)
    EXPECT_EQ(imported[t.name], bytesOf(t)) << t.name;
}

} // namespace
