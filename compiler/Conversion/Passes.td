//===- Passes.td - ampc conversion passes ------------------*- tablegen -*-===//
//
// Passes that move a program from one dialect to the next.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_PASSES_TD
#define AMPC_COMPILER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertOnnxToGraphPass
    : Pass<"convert-onnx-to-graph", "mlir::ModuleOp"> {
  let summary = "Gives every onnx.node its meaning as graph ops";
  let description = [{
    All ONNX semantics live here, dispatched by op type and opset version:
    each `onnx.node` of `@forward` becomes graph ops with static shapes and
    explicit, normalized attributes; shape computations (Shape, and integer
    arithmetic on constants) fold to constants. Graph inputs keep their ONNX
    names (`graph.name`); float initializers become parameters with their
    initial value (`graph.init`) and `graph.trainable`; integer initializers
    become constants. Every op keeps its ONNX node name as its location.

    Before:
    ```mlir
    func.func @forward(%x: tensor<64x256xf32> {onnx.name = "x"},
        %w: tensor<10x256xf32> {onnx.initializer = dense<...>, onnx.name = "fc.weight"}) -> tensor<64x10xf32> {
      %0 = onnx.node "Gemm"(%x, %w) {transB = 1 : i64} opset 13 : (...) -> tensor<64x10xf32>
      return %0 : tensor<64x10xf32>
    }
    ```
    After:
    ```mlir
    func.func @forward(%x: tensor<64x256xf32> {graph.name = "x"},
        %w: tensor<10x256xf32> {graph.init = dense<...>, graph.name = "fc.weight", graph.trainable = true}) -> tensor<64x10xf32> {
      %0 = graph.gemm %x, %w {trans_b = true} : (...) -> tensor<64x10xf32>
      return %0 : tensor<64x10xf32>
    }
    ```

    An op type with no handler, an opset outside the supported range, a
    dtype ampc does not support, a dynamic shape or a shape mismatch is an
    error naming the ONNX node, its op type and opset.
  }];
  let options = [
    ListOption<"freeze", "freeze", "std::string",
               "Initializers (by ONNX name) to keep constant during training">,
    Option<"trainingMode", "training-mode", "bool", /*default=*/"false",
           "Convert Dropout and BatchNormalization for training when the "
           "model does not say (opsets before training_mode inputs)">
  ];
  let dependentDialects = ["::ampc::graph::GraphDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // AMPC_COMPILER_CONVERSION_PASSES_TD
