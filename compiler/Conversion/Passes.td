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

def ConvertGraphToRtPass : Pass<"convert-graph-to-rt", "mlir::ModuleOp"> {
  let summary = "Chooses kernels, fuses elementwise chains and plans memory";
  let description = [{
    Lowers every function of graph ops to the rt dialect, the form a Program
    is serialized from:

    - graph inputs become `rt.input`, parameters (`graph.init`) become
      `rt.param`, results become `rt.output` named as the graph outputs;
    - each contraction, convolution, pooling, normalization, reduction or
      data-movement op becomes one `rt.kernel` whose body is that op;
    - with fusion on, a `graph.gemm` and the op after it become one
      `rt.kernel "gemm"` with an `epilogue` (runtime/GemmEpilogue.h): relu
      or gelu after the GEMM (`gelu_aux` also writes the pre-activation
      gelu's gradient reads), relu_grad or gelu_grad after the dX GEMM
      (`drelu`, `dgelu`, reading the forward value as one more input), and
      the bias gradient, a reduce_sum over axis 0 of the dW GEMM's dY
      (`bgrad`, a second result);
    - chains of elementwise ops (activations, arithmetic, casts, where) with
      one result shape become one `rt.kernel "fused"` when their
      intermediate values have no use outside the chain;
    - `amp.cast` is lowered as the `graph.cast` it computes (round to
      nearest even), so it fuses and runs as the runtime's `cast`; with
      fusion on, the working copy cast from an optimizer update's new
      parameter (`amp.working_copy`) becomes one more output of the update
      kernel, which writes it in the loop that computes the new parameter;
    - `graph.reshape` becomes `rt.view` (no launch, same bytes);
    - every stored value gets a byte offset in one arena. Offsets are reused
      once a value is dead (liveness over the op order), parameters keep
      theirs for the whole program, and a fused kernel writes its result in
      place over a same-typed input that dies there.

    A value whose element count or byte size overflows int64 is an error,
    and so, with `memory-budget`, is a value or a planned arena larger than
    the budget: the message names the value (its ONNX node, or the graph
    input or parameter), its type and size, or the arena's size and the
    function's largest values.

    Before:
    ```mlir
    func.func @forward(%x: tensor<4xf32> {graph.name = "x"}) -> (tensor<4xf32> {graph.name = "y"}) {
      %0 = graph.exp %x : tensor<4xf32>
      %1 = graph.relu %0 : tensor<4xf32>
      return %1 : tensor<4xf32>
    }
    ```
    After:
    ```mlir
    func.func @forward() attributes {rt.arena_size = 64 : i64} {
      %0 = rt.input "x" at 0 : tensor<4xf32>
      %1 = rt.kernel "fused" (%0) at [0] : (tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4xf32>):
        %2 = graph.exp %a : tensor<4xf32>
        %3 = graph.relu %2 : tensor<4xf32>
        rt.yield %3 : tensor<4xf32>
      }
      rt.output "y" %1 : tensor<4xf32>
      return
    }
    ```
  }];
  let options = [
    Option<"fuse", "fuse", "bool", /*default=*/"true",
           "Fuse chains of elementwise ops into one kernel, and post-ops "
           "into GEMM kernels as epilogues">,
    Option<"reuseMemory", "reuse-memory", "bool", /*default=*/"true",
           "Reuse the arena memory of dead values; off gives every value "
           "its own bytes (for debugging)">,
    Option<"memoryBudget", "memory-budget", "uint64_t", /*default=*/"0",
           "Bytes a function's arena may take: a value or a planned arena "
           "larger than this is an error naming it and the sizes (0: no "
           "budget; amp-run gives the device's memory)">
  ];
  let dependentDialects = ["::ampc::rtir::RtDialect",
                           "::ampc::graph::GraphDialect",
                           "::mlir::func::FuncDialect"];
}

#endif // AMPC_COMPILER_CONVERSION_PASSES_TD
