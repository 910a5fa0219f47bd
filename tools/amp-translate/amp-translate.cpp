//===- amp-translate.cpp - translations in and out of MLIR ----------------===//
//
// `--import-onnx`: an ONNX model file to the onnx dialect.
//
//===----------------------------------------------------------------------===//

#include "compiler/Import/Onnx/OnnxImporter.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"

int main(int argc, char **argv) {
  ampc::registerOnnxImportTranslation();
  return mlir::succeeded(
             mlir::mlirTranslateMain(argc, argv, "ampc translation driver\n"))
             ? 0
             : 1;
}
