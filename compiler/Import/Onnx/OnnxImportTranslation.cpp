//===- OnnxImportTranslation.cpp - the --import-onnx translation ----------===//
//
// Hooks the importer into amp-translate: the `--import-onnx` translation and
// its options (--shape, --no-onnx-check).
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"
#include "dialects/Onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;

void ampc::registerOnnxImportTranslation() {
  static llvm::cl::OptionCategory category("ONNX import options");
  static llvm::cl::list<std::string> shapes(
      "shape",
      llvm::cl::desc("Static shape of a graph input, NAME=d0,d1,... "
                     "(repeatable); needed for dynamic dimensions"),
      llvm::cl::value_desc("NAME=d0,d1,..."), llvm::cl::cat(category));
  static llvm::cl::opt<bool> noCheck(
      "no-onnx-check",
      llvm::cl::desc("Skip ONNX's model checker before importing"),
      llvm::cl::init(false), llvm::cl::cat(category));

  static TranslateToMLIRRegistration reg(
      "import-onnx", "import an ONNX model (.onnx) into the onnx dialect",
      [](llvm::SourceMgr &sourceMgr,
         MLIRContext *context) -> OwningOpRef<Operation *> {
        const llvm::MemoryBuffer *buf =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        StringRef fileName = buf->getBufferIdentifier();
        OnnxImportOptions options;
        options.checkModel = !noCheck;
        StringRef dir = llvm::sys::path::parent_path(fileName);
        options.modelDir = dir.empty() ? "." : dir.str();
        for (const std::string &spec : shapes) {
          std::string error;
          if (!addShapeSpec(spec, options.shapes, error)) {
            emitError(UnknownLoc::get(context)) << error;
            return nullptr;
          }
        }
        OwningOpRef<ModuleOp> module =
            importOnnxModel(buf->getBuffer(), fileName, context, options);
        if (!module)
          return nullptr;
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<ampc::onnx::OnnxDialect, func::FuncDialect>();
      });
}
