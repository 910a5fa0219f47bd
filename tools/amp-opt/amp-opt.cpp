//===- amp-opt.cpp - mlir-opt with the ampc dialects and passes -----------===//
//
// The driver that compiler engineers test passes with: every ampc dialect
// and pass, plus MLIR's generic transforms (canonicalize, cse, ...).
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Transforms/AmpLists.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"
#include "dialects/Rt/RtOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"

int main(int argc, char **argv) {
  // Not an mlir-opt flag: it prints and exits, with no input to read.
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--amp-print-lists" ||
        llvm::StringRef(argv[i]) == "-amp-print-lists") {
      llvm::outs() << "# amp-auto-cast default lists (graph op names; edit "
                      "with allow=, deny=, infer=, clear=; '-op' removes)\n";
      ampc::AmpLists::defaults().print(llvm::outs());
      return 0;
    }
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, ampc::onnx::OnnxDialect,
                  ampc::graph::GraphDialect, ampc::amp::AmpDialect,
                  ampc::rtir::RtDialect>();
  ampc::registerGradientModels(registry);
  mlir::registerTransformsPasses();
  ampc::registerTransformsPasses();
  ampc::registerConversionPasses();
  ampc::registerPipelines();
  auto [input, output] = mlir::registerAndParseCLIOptions(
      argc, argv,
      "ampc optimizer driver (--amp-print-lists prints the AMP op lists)\n",
      registry);
  // A device (/dev/zero, a terminal) would be read until memory runs out:
  // refused by name. A pipe ends when its writer does, so `<(...)` works.
  llvm::sys::fs::file_status status;
  if (input != "-" && !llvm::sys::fs::status(input, status) &&
      (status.type() == llvm::sys::fs::file_type::character_file ||
       status.type() == llvm::sys::fs::file_type::block_file)) {
    llvm::errs() << "amp-opt: error: '" << input
                 << "' is a device, not an MLIR file (give a file, or - for "
                    "standard input)\n";
    return 1;
  }
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, input, output, registry));
}
