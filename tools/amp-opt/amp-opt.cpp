//===- amp-opt.cpp - mlir-opt with the ampc dialects and passes -----------===//
//
// The driver that compiler engineers test passes with: every ampc dialect
// and pass, plus MLIR's generic transforms (canonicalize, cse, ...).
//
//===----------------------------------------------------------------------===//

#include "compiler/Autodiff/Gradients.h"
#include "compiler/Conversion/Passes.h"
#include "compiler/Transforms/Passes.h"
#include "dialects/Amp/AmpOps.h"
#include "dialects/Rt/RtOps.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialects/Graph/GraphOps.h"
#include "dialects/Onnx/OnnxOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::func::FuncDialect, ampc::onnx::OnnxDialect,
                  ampc::graph::GraphDialect, ampc::amp::AmpDialect,
                  ampc::rtir::RtDialect>();
  ampc::registerGradientModels(registry);
  mlir::registerTransformsPasses();
  ampc::registerTransformsPasses();
  ampc::registerConversionPasses();
  ampc::registerPipelines();
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "ampc optimizer driver\n", registry));
}
