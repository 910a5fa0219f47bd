//===- RtOps.td - the rt dialect ---------------------------*- tablegen -*-===//
//
// The runtime level: what a Program holds. Every non-constant tensor lives
// at a planned byte offset in one arena; every `rt.kernel` is one kernel
// launch whose body says what it computes (one graph op, or a fused chain
// of elementwise graph ops). Lowering decisions are attributes here, so
// FileCheck sees them.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_RT_RTOPS_TD
#define AMPC_DIALECTS_RT_RTOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rt_Dialect : Dialect {
  let name = "rt";
  let cppNamespace = "::ampc::rtir"; // ampc::rt is the runtime library
  let summary = "kernel launches over one planned memory arena";
  let description = [{
    A function in this dialect has no arguments: graph inputs and parameters
    are `rt.input` / `rt.param` at arena offsets, results are `rt.output`,
    and the function carries `rt.arena_size` (bytes). Constants stay
    `graph.constant` and live outside the arena. A training module's
    evaluation function (amp-run writes @forward beside @train_step) carries
    `rt.params_from_step`: its parameters are the step's of the same names,
    so the Program stores their initial values once.
  }];
}

class Rt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Rt_Dialect, mnemonic, traits>;

def Rt_Tensor : StaticShapeTensorOf<[F32, F16, BF16, F64, I64, I32, I1]>;

def Rt_InputOp : Rt_Op<"input", [Pure]> {
  let summary = "a graph input, written into the arena before each run";
  let arguments = (ins StrAttr:$name, I64Attr:$offset);
  let results = (outs Rt_Tensor:$output);
  let assemblyFormat = "$name `at` $offset attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Rt_ParamOp : Rt_Op<"param", [Pure]> {
  let summary = "a parameter: persistent arena storage with an initial value";
  let description = [{
    Its storage is never reused for anything else, so a training step can
    update it in place and the next step sees the new value.
  }];
  let arguments = (ins StrAttr:$name, I64Attr:$offset, ElementsAttr:$init);
  let results = (outs Rt_Tensor:$output);
  let assemblyFormat = "$name `at` $offset attr-dict `:` type($output)";
  let hasVerifier = 1;
}

def Rt_ViewOp : Rt_Op<"view", [Pure]> {
  let summary = "the same bytes with another shape (no launch)";
  let arguments = (ins Rt_Tensor:$input);
  let results = (outs Rt_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
}

def Rt_YieldOp : Rt_Op<"yield", [Pure, Terminator, HasParent<"KernelOp">]> {
  let summary = "the results of a kernel body";
  let arguments = (ins Variadic<Rt_Tensor>:$values);
  let assemblyFormat = "$values attr-dict `:` type($values)";
}

def Rt_KernelOp : Rt_Op<"kernel", [IsolatedFromAbove]> {
  let summary = "one kernel launch";
  let description = [{
    `kind` names the kernel: a graph op name (`gemm`, `conv2d`, ...), or
    `fused` for a chain of elementwise ops that makes one pass over memory.
    The body computes the results from the block arguments (the inputs) with
    graph ops; intermediate values of a fused body are never stored.
    `offsets` gives each result's byte offset in the arena. A result whose
    offset equals an input's was planned in place: the kernel overwrites an
    input that dies here.

    A `gemm` kernel may carry an `epilogue` (runtime/GemmEpilogue.h lists
    them): its body is the `graph.gemm` followed by the op the epilogue
    computes on the GEMM's f32 result before it is stored, e.g. `relu` (the
    bias stays the gemm's `c`), `gelu_aux` (gelu, and the pre-activation as
    a second result), `drelu` (`graph.relu_grad` of the result and one more
    input, relu's output), or `bgrad` (the column sums of `a` as a second
    result). The inputs are the gemm's operands, then the epilogue's input.

    ```mlir
    %y = rt.kernel "fused" (%a, %b) at [128] : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> {
    ^bb0(%x: tensor<4xf32>, %z: tensor<4xf32>):
      %0 = graph.add %x, %z : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %1 = graph.relu %0 : tensor<4xf32>
      rt.yield %1 : tensor<4xf32>
    }
    ```
  }];
  let arguments = (ins Variadic<Rt_Tensor>:$inputs, StrAttr:$kind,
                   DenseI64ArrayAttr:$offsets,
                   OptionalAttr<StrAttr>:$epilogue);
  let results = (outs Variadic<Rt_Tensor>:$results);
  let regions = (region SizedRegion<1>:$body);
  let builders = [
    // Most kernels have no epilogue.
    OpBuilder<(ins "::mlir::TypeRange":$results, "::mlir::ValueRange":$inputs,
                   "::mlir::StringAttr":$kind,
                   "::mlir::DenseI64ArrayAttr":$offsets), [{
      build($_builder, $_state, results, inputs, kind, offsets,
            /*epilogue=*/::mlir::StringAttr());
    }]>
  ];
  let assemblyFormat = [{
    $kind `(` $inputs `)` `at` $offsets attr-dict `:`
    functional-type($inputs, $results) $body
  }];
  let hasVerifier = 1;
}

def Rt_OutputOp : Rt_Op<"output"> {
  let summary = "names a value as a graph output";
  let arguments = (ins StrAttr:$name, Rt_Tensor:$value);
  let assemblyFormat = "$name $value attr-dict `:` type($value)";
}

def Rt_UpdateOp : Rt_Op<"update"> {
  let summary = "the value a parameter holds after the run";
  let description = [{
    State of a training step (weights, optimizer state, counters): after
    the run, `param`'s storage holds `value`. The memory planner places
    `value` in the parameter's own bytes when that is safe (the parameter
    is not read after the kernel that writes it, or that kernel is
    elementwise and reads it there); otherwise the runtime copies it at
    the end of the run.
  }];
  let arguments = (ins Rt_Tensor:$param, Rt_Tensor:$value);
  let assemblyFormat = [{
    $param `,` $value attr-dict `:` type($param) `,` type($value)
  }];
  let hasVerifier = 1;
}

#endif // AMPC_DIALECTS_RT_RTOPS_TD
