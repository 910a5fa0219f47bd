//===- amp-translate.cpp - translations in and out of MLIR ----------------===//
//
// `--import-onnx`: an ONNX model file to the onnx dialect.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "llvm/ADT/StringRef.h"

#include <vector>

int main(int argc, char **argv) {
  ampc::registerOnnxImportTranslation();
  // Locations carry the ONNX node names, and the usual next step parses
  // this output again (amp-translate | amp-opt), so print them unless the
  // user chose otherwise.
  std::vector<char *> args(argv, argv + argc);
  bool userChose = false;
  for (int i = 1; i < argc; ++i)
    userChose |= llvm::StringRef(argv[i]).ltrim('-').starts_with(
        "mlir-print-debuginfo");
  static char debugInfo[] = "--mlir-print-debuginfo";
  if (!userChose)
    args.insert(args.begin() + 1, debugInfo);
  return mlir::succeeded(mlir::mlirTranslateMain(
             static_cast<int>(args.size()), args.data(),
             "ampc translation driver\n"))
             ? 0
             : 1;
}
