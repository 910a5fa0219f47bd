//===- OnnxImportFuzzer.cpp - libFuzzer target: ONNX bytes to graph IR ----===//
//
// Treats the input as an ONNX file and runs what every amp-run and
// amp-translate invocation runs first: import (protobuf parse, ONNX checker,
// shape inference, onnx dialect), convert-onnx-to-graph with the
// canonicalizer, and the verifier. Any outcome but a clean success or a
// reported error (a crash, a sanitizer report, a hang) is a bug.
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Import/Onnx/OnnxImporter.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

namespace {

const mlir::DialectRegistry &registry() {
  static mlir::DialectRegistry *r = [] {
    auto *reg = new mlir::DialectRegistry;
    reg->insert<mlir::func::FuncDialect, ampc::onnx::OnnxDialect,
                ampc::graph::GraphDialect, ampc::amp::AmpDialect,
                ampc::rtir::RtDialect>();
    ampc::registerGradientModels(*reg);
    return reg;
  }();
  return *r;
}

// AMPC_FUZZ_TRAINING=1 converts in training mode (dropout and batch norm
// keep their training semantics), the path amp-run --mode train takes.
bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v == '1';
}

bool trainingMode() {
  static bool on = envFlag("AMPC_FUZZ_TRAINING");
  return on;
}

// AMPC_FUZZ_VERBOSE=1 prints the diagnostics and how far each input got,
// for reading what a saved input does.
bool verbose() {
  static bool on = envFlag("AMPC_FUZZ_VERBOSE");
  return on;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // A context per input: attributes (weights among them) are uniqued in the
  // context for its lifetime, so a shared one would grow without bound.
  mlir::MLIRContext context(registry(), mlir::MLIRContext::Threading::DISABLED);
  context.printOpOnDiagnostic(false);
  context.loadAllAvailableDialects();
  // Errors are the expected outcome for most inputs; printing them would
  // only slow the fuzzer down.
  mlir::ScopedDiagnosticHandler quiet(&context, [](mlir::Diagnostic &d) {
    if (verbose())
      llvm::errs() << d.getLocation() << ": " << d << "\n";
    return mlir::success();
  });

  ampc::OnnxImportOptions options;
  // External data is resolved against a directory that does not exist, so
  // no input can make the importer read files of this machine.
  options.modelDir = "/nonexistent/ampc-fuzz";
  llvm::StringRef bytes(reinterpret_cast<const char *>(data), size);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      ampc::importOnnxModel(bytes, "-", &context, options);
  if (!module || mlir::failed(mlir::verify(*module))) {
    if (verbose())
      llvm::errs() << "import: failed\n";
    return 0;
  }
  mlir::PassManager pm(&context);
  ampc::buildGraphPipeline(pm, trainingMode());
  bool converted = mlir::succeeded(pm.run(*module)) &&
                   mlir::succeeded(mlir::verify(*module));
  if (verbose())
    llvm::errs() << "import: ok; convert: " << (converted ? "ok" : "failed")
                 << "\n";
  return 0;
}
