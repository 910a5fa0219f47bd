//===- OnnxImporterTest.cpp - the importer on hostile bytes ---------------===//
//
// The importer must turn any byte string into either a module or one
// diagnostic: never a crash, hang or partial module. Truncations and bit
// flips of a real model exercise the protobuf and checker paths.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "llvm/Support/MemoryBuffer.h"

#include <gtest/gtest.h>

#include <random>

namespace {

struct ImportResult {
  bool ok = false;
  std::vector<std::string> errors;
};

ImportResult import(llvm::StringRef bytes,
                    ampc::OnnxImportOptions options = {}) {
  mlir::MLIRContext ctx;
  ImportResult r;
  mlir::ScopedDiagnosticHandler handler(&ctx, [&](mlir::Diagnostic &d) {
    if (d.getSeverity() == mlir::DiagnosticSeverity::Error)
      r.errors.push_back(d.str());
    return mlir::success();
  });
  auto module = ampc::importOnnxModel(bytes, "test.onnx", &ctx, options);
  r.ok = module && mlir::succeeded(mlir::verify(*module));
  return r;
}

std::string readFile(const std::string &path) {
  auto buf = llvm::MemoryBuffer::getFile(path, /*IsText=*/false);
  if (!buf)
    return "";
  return (*buf)->getBuffer().str();
}

std::string readModel(const char *name) {
  return readFile(std::string(AMPC_SHARED_MODELS) + "/" + name);
}

/// A small PyTorch-exported Conv2d with its weights, from libonnx-testdata
/// (installed by scripts/setup.sh), so the fuzz-style tests need no
/// shared/ checkout.
std::string readConvModel() {
  return readFile(std::string(AMPC_ONNX_TESTDATA) +
                  "/pytorch-converted/test_Conv2d/model.onnx");
}

TEST(OnnxImporter, ShapeSpec) {
  std::pair<std::string, std::vector<int64_t>> out;
  std::string err;
  ASSERT_TRUE(ampc::parseShapeSpec("x=64,1,28,28", out, err)) << err;
  EXPECT_EQ(out.first, "x");
  EXPECT_EQ(out.second, (std::vector<int64_t>{64, 1, 28, 28}));
  ASSERT_TRUE(ampc::parseShapeSpec("scalar=", out, err));
  EXPECT_TRUE(out.second.empty());
  EXPECT_FALSE(ampc::parseShapeSpec("x64", out, err));
  EXPECT_FALSE(ampc::parseShapeSpec("x=1,-2", out, err));
  EXPECT_NE(err.find("'-2' is not a non-negative integer"), std::string::npos);
  EXPECT_FALSE(ampc::parseShapeSpec("x=1,a", out, err));
}

TEST(OnnxImporter, ShapeSpecGivenTwice) {
  std::vector<std::pair<std::string, std::vector<int64_t>>> shapes;
  std::string err;
  ASSERT_TRUE(ampc::addShapeSpec("x=4,3", shapes, err)) << err;
  ASSERT_TRUE(ampc::addShapeSpec("y=2", shapes, err)) << err;
  // The same shape again is harmless and kept once.
  ASSERT_TRUE(ampc::addShapeSpec("x=4, 3", shapes, err)) << err;
  EXPECT_EQ(shapes.size(), 2u);
  EXPECT_FALSE(ampc::addShapeSpec("x=5,3", shapes, err));
  EXPECT_EQ(err, "--shape is given twice for input 'x', as 'x=4,3' and as "
                 "'x=5,3'");
  EXPECT_EQ(shapes[0].second, (std::vector<int64_t>{4, 3}));
  EXPECT_FALSE(ampc::addShapeSpec("z=-1", shapes, err));
}

TEST(OnnxImporter, EmptyAndGarbage) {
  auto r = import("");
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("empty"), std::string::npos);
  r = import("this is not a protobuf at all \xff\xff\xff");
  EXPECT_FALSE(r.ok);
  ASSERT_EQ(r.errors.size(), 1u);
}

TEST(OnnxImporter, ImportsSharedModel) {
  std::string bytes = readModel("lenet5_train_op17/model.onnx");
  if (bytes.empty())
    GTEST_SKIP() << "shared/models not found at " << AMPC_SHARED_MODELS;
  auto r = import(bytes);
  EXPECT_TRUE(r.ok);
  EXPECT_TRUE(r.errors.empty());
}

TEST(OnnxImporter, EveryTruncationFailsCleanly) {
  std::string bytes = readConvModel();
  ASSERT_FALSE(bytes.empty()) << "libonnx-testdata is not installed";
  ASSERT_TRUE(import(bytes).ok);
  for (size_t n = 0; n < bytes.size(); ++n) {
    auto r = import(llvm::StringRef(bytes.data(), n));
    EXPECT_FALSE(r.ok && n < bytes.size() - 4) << "prefix of " << n;
    if (!r.ok)
      EXPECT_EQ(r.errors.size(), 1u) << "prefix of " << n;
  }
}

TEST(OnnxImporter, BitFlipsNeverCrash) {
  std::string bytes = readConvModel();
  ASSERT_FALSE(bytes.empty()) << "libonnx-testdata is not installed";
  std::mt19937 rng(1234);
  for (int i = 0; i < 300; ++i) {
    std::string mutated = bytes;
    size_t pos = rng() % bytes.size();
    mutated[pos] = static_cast<char>(rng());
    auto r = import(mutated);
    if (!r.ok)
      EXPECT_EQ(r.errors.size(), 1u) << "flip at " << pos;
  }
}

} // namespace
