//===- GraphOps.td - the graph dialect ---------------------*- tablegen -*-===//
//
// What a model computes, with value semantics on static-shape tensors. Ops
// follow ONNX meaning where ONNX has the op; every attribute is explicit and
// normalized (axes non-negative, pads spelled out) so later passes and the
// runtime never re-derive ONNX defaults. Result types are inferred from the
// operands and attributes, so verifying an op checks its shapes.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_GRAPHOPS_TD
#define AMPC_DIALECTS_GRAPH_GRAPHOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "GraphTraits.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::ampc::graph";
  let summary = "the computation of a model, with value semantics";
  let description = [{
    Ops on ranked, statically shaped tensors of f32, f16, bf16, f64, i64, i32
    and i1. `@forward(inputs..., params...)` is the model; arguments carry
    `graph.name` (the ONNX name), and parameters `graph.init` (their initial
    value) and `graph.trainable`.
  }];
  // Attributes stay in the attribute dictionary: result types are inferred
  // from them before an op exists (see createInferred in the converter).
  let usePropertiesForAttributes = 0;
  let hasConstantMaterializer = 1;
  // `graph.accumulate` on ops (see kAccumulateAttr in GraphOps.h).
  let hasOperationAttrVerify = 1;
}

//===----------------------------------------------------------------------===//
// Type constraints
//===----------------------------------------------------------------------===//

def Graph_Float : AnyTypeOf<[F32, F16, BF16, F64]>;
def Graph_Int : AnyTypeOf<[I64, I32]>;
def Graph_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16, F64]>;
def Graph_IntTensor : StaticShapeTensorOf<[I64, I32]>;
def Graph_NumericTensor : StaticShapeTensorOf<[F32, F16, BF16, F64, I64, I32]>;
def Graph_BoolTensor : StaticShapeTensorOf<[I1]>;
def Graph_IndexTensor : StaticShapeTensorOf<[I64]>;
def Graph_Tensor : StaticShapeTensorOf<[F32, F16, BF16, F64, I64, I32, I1]>;

class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, traits>;

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, string what, Type T = Graph_FloatTensor,
                    list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType,
                                      Graph_Fusible], traits)> {
  let summary = what;
  let arguments = (ins T:$input);
  let results = (outs T:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_ReluOp : Graph_UnaryOp<"relu", "max(x, 0)">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", "hyperbolic tangent"> {
  let hasCanonicalizer = 1; // GELU written out (GeluRecognition.cpp)
}
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def Graph_ErfOp : Graph_UnaryOp<"erf", "error function"> {
  let hasCanonicalizer = 1; // GELU written out (GeluRecognition.cpp)
}
def Graph_ExpOp : Graph_UnaryOp<"exp", "e^x"> {
  let hasCanonicalizer = 1; // Softmax written out (SoftmaxRecognition.cpp)
}
def Graph_LogOp : Graph_UnaryOp<"log", "natural logarithm">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", "square root"> {
  let hasCanonicalizer = 1; // LayerNorm written out (LayerNormRecognition.cpp)
}
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", "1 / x">;
def Graph_NegOp : Graph_UnaryOp<"neg", "-x", Graph_NumericTensor> {
  // Integer shape arithmetic (ONNX's expanded functions negate axes).
  let hasFolder = 1;
}
def Graph_AbsOp : Graph_UnaryOp<"abs", "|x|", Graph_NumericTensor>;

def Graph_GeluOp : Graph_UnaryOp<"gelu", "Gaussian error linear unit"> {
  let description = [{
    `approximate = "none"`: x * Phi(x) with the exact erf;
    `approximate = "tanh"`: the tanh approximation (ONNX Gelu-20, PyTorch).
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def Graph_LeakyReluOp : Graph_UnaryOp<"leaky_relu", "x >= 0 ? x : alpha * x"> {
  let arguments = (ins Graph_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def Graph_HardSigmoidOp
    : Graph_UnaryOp<"hard_sigmoid", "max(0, min(1, alpha * x + beta))"> {
  let description = [{
    ONNX HardSigmoid; PyTorch's nn.Hardsigmoid exports as alpha = 1/6,
    beta = 0.5. NaN propagates.
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.2">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}

def Graph_HardSwishOp
    : Graph_UnaryOp<"hard_swish", "x * min(max(x + 3, 0), 6) / 6"> {
  let description = [{
    ONNX HardSwish (x * hard_sigmoid(x) with alpha = 1/6, beta = 0.5),
    computed as PyTorch's nn.Hardswish does. NaN propagates.
  }];
}

def Graph_SinOp : Graph_UnaryOp<"sin", "sine">;
def Graph_CosOp : Graph_UnaryOp<"cos", "cosine">;
def Graph_SoftplusOp : Graph_UnaryOp<"softplus", "ln(1 + e^x)">;

def Graph_ClipOp : Graph_UnaryOp<"clip", "min(max(x, min), max)"> {
  let description = [{ An absent bound does not clip on that side. }];
  let arguments = (ins Graph_NumericTensor:$input,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let results = (outs Graph_NumericTensor:$output);
  let hasVerifier = 1;
}

class Graph_BinaryOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor, Graph_Fusible],
                                     traits)> {
  let summary = what # ", with numpy broadcasting";
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Graph_AddOp : Graph_BinaryOp<"add", "lhs + rhs", [Commutative]> {
  // matmul + bias vector is a gemm with the bias as C (GraphCanonicalize.cpp).
  let hasCanonicalizer = 1;
}
def Graph_SubOp : Graph_BinaryOp<"sub", "lhs - rhs">;
def Graph_MulOp : Graph_BinaryOp<"mul", "lhs * rhs", [Commutative]>;
def Graph_DivOp : Graph_BinaryOp<"div", "lhs / rhs (integer division truncates)">;
def Graph_PowOp : Graph_BinaryOp<"pow", "lhs ^ rhs"> {
  let arguments = (ins Graph_FloatTensor:$lhs, Graph_FloatTensor:$rhs);
  let results = (outs Graph_FloatTensor:$output);
}

// Comparisons and logical ops: an i1 result, which no gradient flows
// through (graph-build-training differentiates float values only).
class Graph_CompareOp<string mnemonic, string what, Type T = Graph_NumericTensor,
                      list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor, Graph_Fusible],
                                     traits)> {
  let summary = what # ", with numpy broadcasting; operands of one type";
  let arguments = (ins T:$lhs, T:$rhs);
  let results = (outs Graph_BoolTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Graph_EqualOp
    : Graph_CompareOp<"equal", "lhs == rhs", Graph_Tensor, [Commutative]>;
def Graph_LessOp : Graph_CompareOp<"less", "lhs < rhs">;
def Graph_LessEqualOp : Graph_CompareOp<"less_equal", "lhs <= rhs">;
def Graph_GreaterOp : Graph_CompareOp<"greater", "lhs > rhs">;
def Graph_GreaterEqualOp : Graph_CompareOp<"greater_equal", "lhs >= rhs">;
def Graph_LogicalAndOp : Graph_CompareOp<"logical_and", "lhs and rhs",
                                         Graph_BoolTensor, [Commutative]>;
def Graph_LogicalOrOp : Graph_CompareOp<"logical_or", "lhs or rhs",
                                        Graph_BoolTensor, [Commutative]>;
def Graph_LogicalXorOp : Graph_CompareOp<"logical_xor", "lhs xor rhs",
                                         Graph_BoolTensor, [Commutative]>;
def Graph_LogicalNotOp
    : Graph_UnaryOp<"logical_not", "not x", Graph_BoolTensor> {
  let hasFolder = 1;
}

def Graph_WhereOp : Graph_Op<"where", [Pure, InferTypeOpAdaptor, Graph_Fusible]> {
  let summary = "condition ? x : y, with numpy broadcasting of all three";
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$x,
                   Graph_Tensor:$y);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $condition `,` $x `,` $y attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Graph_CastOp : Graph_Op<"cast", [Pure, Graph_Fusible]> {
  let summary = "element type conversion written in the model";
  let description = [{
    A conversion the model itself asked for (ONNX Cast). Casts placed by the
    AMP pass are `amp.cast`, so the two are told apart. Float to float rounds
    to nearest even; float to int truncates toward zero.
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Contractions, convolution, pooling
//===----------------------------------------------------------------------===//

def Graph_MatMulOp
    : Graph_Op<"matmul", [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "numpy matmul: batched, broadcasting, 1-D promotion";
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$output);
  let assemblyFormat = [{
    $lhs `,` $rhs attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_GemmOp
    : Graph_Op<"gemm", [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "alpha * op(A) * op(B) + beta * C";
  let description = [{
    ONNX Gemm: 2-D `a` and `b`, transposed when `trans_a`/`trans_b`; the
    optional `c` broadcasts to [M, N]. Kept as one op (rather than matmul +
    add) so the bias becomes a GEMM epilogue.
  }];
  let arguments = (ins Graph_NumericTensor:$a, Graph_NumericTensor:$b,
                   Optional<Graph_NumericTensor>:$c,
                   DefaultValuedAttr<F64Attr, "1.0">:$alpha,
                   DefaultValuedAttr<F64Attr, "1.0">:$beta,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                   DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs Graph_NumericTensor:$output);
  let assemblyFormat = [{
    $a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)
  }];
  // A transposed operand is read through trans_a/trans_b.
  let hasCanonicalizer = 1;
}

def Graph_Conv2dOp
    : Graph_Op<"conv2d", [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "2-D convolution, NCHW input, OIHW filter";
  let description = [{
    `pads` is [top, left, bottom, right] (ONNX order); `group` splits the
    channels. The optional `bias` has one value per output channel.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
                   Optional<Graph_FloatTensor>:$bias,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Graph_ConvTranspose2dOp
    : Graph_Op<"conv_transpose2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D transposed convolution, NCHW input, [C_in, C_out / "
                "group, kH, kW] filter";
  let description = [{
    The gradient of conv2d with respect to its input, as a forward op (ONNX
    ConvTranspose, a UNet's upsampling): the conv2d of the same strides,
    pads, dilations and group maps the result's shape back to the input's.
    `output_padding` adds rows and columns at the end that no input element
    reaches. The runtime runs conv2d_backward_data's kernels for it.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group,
                   DenseI64ArrayAttr:$output_padding);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $filter attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_MaxPool2dOp : Graph_Op<"max_pool2d", [Pure, InferTypeOpAdaptor]> {
  let summary = "2-D max pooling over NCHW; padding never wins the max";
  let arguments = (ins Graph_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  // A ReLU before it moves after it (PoolingCanonicalize.cpp).
  let hasCanonicalizer = 1;
}

def Graph_AvgPool2dOp
    : Graph_Op<"avg_pool2d", [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "2-D average pooling over NCHW";
  let description = [{
    With `count_include_pad` the divisor is the window size including pads
    (but not the part of a ceil-mode window past the end padding); without
    it, the number of input elements in the window.
  }];
  let arguments = (ins Graph_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_GlobalAvgPoolOp
    : Graph_Op<"global_avg_pool",
               [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "mean over every spatial dimension: [N, C, ...] -> [N, C, 1, ...]";
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, losses
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, string what, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, InferTypeOpAdaptor], traits)> {
  let summary = what # " over the listed axes";
  let description = [{
    `axes` are non-negative, unique and never empty (a reduction over all
    dimensions lists them all); `keepdims` keeps them as size 1.
  }];
  let arguments = (ins Graph_NumericTensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Graph_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_ReduceSumOp
    : Graph_ReduceOp<"reduce_sum", "sum", [Graph_Accumulating]>;
def Graph_ReduceMeanOp
    : Graph_ReduceOp<"reduce_mean", "mean", [Graph_Accumulating]>;
def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", "maximum">;

def Graph_CumSumOp
    : Graph_Op<"cumsum", [Pure, SameOperandsAndResultType, Graph_Accumulating]> {
  let summary = "running sum along one axis";
  let description = [{
    ONNX CumSum: output element i along `axis` is the sum of the input's
    elements 0..i (0..i-1 when `exclusive`; i..end, or i+1..end, when
    `reverse`). Floats accumulate in f32 (f64 for f64) and each output is
    rounded once; integers wrap.
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                   DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Graph_NumericTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_ArgMaxOp : Graph_Op<"arg_max", [Pure, InferTypeOpAdaptor]> {
  let summary = "index of the largest element along one axis";
  let description = [{
    ONNX ArgMax: the i64 index of the maximum along `axis` (kept as size 1
    with `keepdims`); among equal maxima the first, or the last with
    `select_last_index`. A NaN is larger than every number.
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims,
                   DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs Graph_IndexTensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_TopKOp : Graph_Op<"top_k", [Pure, InferTypeOpAdaptor]> {
  let summary = "the k largest (or smallest) elements along one axis";
  let description = [{
    ONNX TopK with a constant `k`: `values` and their i64 `indices` along
    `axis`, which has k entries in both. Ordered from the largest (smallest
    with `largest = false`); equal values in the order of their indices.
    A NaN is larger than every number. The values' gradient goes back to
    the elements they were taken from.
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$k, I64Attr:$axis,
                   DefaultValuedAttr<BoolAttr, "true">:$largest);
  let results = (outs Graph_NumericTensor:$values, Graph_IndexTensor:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

class Graph_SoftmaxLikeOp<string mnemonic, string what,
                          list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, SameOperandsAndResultType,
                                      Graph_Accumulating], traits)> {
  let summary = what # " along one axis";
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_SoftmaxOp
    : Graph_SoftmaxLikeOp<"softmax", "softmax", [Graph_WideCompute]>;
def Graph_LogSoftmaxOp : Graph_SoftmaxLikeOp<"log_softmax", "log of softmax">;

def Graph_SoftmaxCrossEntropyOp
    : Graph_Op<"softmax_cross_entropy",
               [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "fused log-softmax and negative log-likelihood";
  let description = [{
    ONNX SoftmaxCrossEntropyLoss: `scores` [N, C, d...], `labels` [N, d...],
    optional per-class `weights` [C]. `reduction` is none | sum | mean (mean
    divides by the summed weights of the labels not ignored). Results: the
    loss (scalar unless `reduction = "none"`) and the log-probabilities.
  }];
  let arguments = (ins Graph_FloatTensor:$scores, Graph_IntTensor:$labels,
                   Optional<Graph_FloatTensor>:$weights,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$loss, Graph_FloatTensor:$log_prob);
  let assemblyFormat = [{
    $scores `,` $labels (`,` $weights^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Graph_NllLossOp
    : Graph_Op<"nll_loss", [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "negative log-likelihood of log-probabilities";
  let description = [{
    ONNX NegativeLogLikelihoodLoss: `input` [N, C, d...] of
    log-probabilities, `target` [N, d...], optional `weight` [C];
    `reduction` and `ignore_index` as in softmax_cross_entropy.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_IntTensor:$target,
                   Optional<Graph_FloatTensor>:$weight,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$loss);
  let assemblyFormat = [{
    $input `,` $target (`,` $weight^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Graph_BatchNormInferenceOp
    : Graph_Op<"batch_norm_inference", [Pure, InferTypeOpAdaptor]> {
  let summary = "batch normalization with running statistics";
  let description = [{
    y = scale * (x - mean) / sqrt(var + epsilon) + bias over channel axis 1
    of `input` [N, C, ...]; `scale`, `bias`, `mean`, `var` are [C].
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$bias, Graph_FloatTensor:$mean,
                   Graph_FloatTensor:$var, F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $mean `,` $var attr-dict
    `:` functional-type(operands, results)
  }];
}

def Graph_BatchNormTrainingOp
    : Graph_Op<"batch_norm_training",
               [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "batch normalization with batch statistics";
  let description = [{
    Normalizes with the batch's mean and biased variance over every axis but
    1, and updates the running statistics as ONNX specifies:
    running = running * momentum + batch * (1 - momentum), using the
    biased batch variance for `running_var` (ONNX's reference; PyTorch uses
    the unbiased one). `batch_mean` and
    `batch_inv_std` are what the backward pass needs.

    With `sync_ranks = N` (graph-data-parallel's sync-batch-norm) the
    statistics are those of the N ranks' batches together, exchanged
    while the op runs: every rank must run it with the same input shape.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Graph_FloatTensor:$bias, Graph_FloatTensor:$running_mean,
                   Graph_FloatTensor:$running_var, F64Attr:$epsilon,
                   F64Attr:$momentum, OptionalAttr<I64Attr>:$sync_ranks);
  let results = (outs Graph_FloatTensor:$output,
                 Graph_FloatTensor:$new_running_mean,
                 Graph_FloatTensor:$new_running_var,
                 Graph_FloatTensor:$batch_mean,
                 Graph_FloatTensor:$batch_inv_std);
  let assemblyFormat = [{
    $input `,` $scale `,` $bias `,` $running_mean `,` $running_var attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_LayerNormOp
    : Graph_Op<"layer_norm", [Pure, InferTypeOpAdaptor, Graph_Accumulating,
                              Graph_WideCompute]> {
  let summary = "layer normalization over the dimensions from `axis` on";
  let description = [{
    ONNX LayerNormalization: `scale` (and optional `bias`) broadcast to
    input.shape[axis:]. `mean` and `inv_std_dev` have the input's shape with
    the normalized dimensions set to 1, in f32 (f64 for an f64 input): the
    statistics are always computed in at least f32.
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                   Optional<Graph_FloatTensor>:$bias, I64Attr:$axis,
                   F64Attr:$epsilon);
  let results = (outs Graph_FloatTensor:$output, Graph_FloatTensor:$mean,
                 Graph_FloatTensor:$inv_std_dev);
  let assemblyFormat = [{
    $input `,` $scale (`,` $bias^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Data movement and constants
//===----------------------------------------------------------------------===//

def Graph_ReshapeOp : Graph_Op<"reshape", [Pure]> {
  let summary = "same elements, new static shape";
  let description = [{
    ONNX Reshape, Flatten, Squeeze and Unsqueeze all become this op: with
    static shapes they differ only in how the result shape is computed.
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_BroadcastToOp : Graph_Op<"broadcast_to", [Pure]> {
  let summary = "numpy broadcast of the input to the result shape";
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [Pure, InferTypeOpAdaptor]> {
  let summary = "permutes dimensions: result dim i is input dim perm[i]";
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ConcatOp : Graph_Op<"concat", [Pure, InferTypeOpAdaptor]> {
  let summary = "joins tensors along a non-negative axis";
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice", [Pure, InferTypeOpAdaptor]> {
  let summary = "strided slice with one normalized start/end/step per dim";
  let description = [{
    Every dimension is listed. For step > 0: 0 <= start <= end <= dim; for
    step < 0: -1 <= end <= start <= dim - 1 (end is exclusive). ONNX's
    clamping and negative indices are resolved by the converter.
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [Pure, InferTypeOpAdaptor]> {
  let summary = "takes slices of data along axis at the given indices";
  let description = [{
    Negative indices count from the end of the axis; an index out of range
    is a runtime error of the kernel.
  }];
  let arguments = (ins Graph_Tensor:$data, Graph_IntTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = [{
    $data `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasFolder = 1;
}

def Graph_DropoutOp : Graph_Op<"dropout", [InferTypeOpAdaptor]> {
  let summary = "random zeroing with scaling by 1 / (1 - ratio)";
  let description = [{
    With `training = false` (or ratio 0) the output is the input and the
    mask all true. In training the mask is drawn from `seed` and the step
    counter, and reused by the backward pass.
  }];
  let arguments = (ins Graph_FloatTensor:$input, F64Attr:$ratio,
                   BoolAttr:$training, I64Attr:$seed);
  let results = (outs Graph_FloatTensor:$output, Graph_BoolTensor:$mask);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_ConstantOp
    : Graph_Op<"constant", [ConstantLike, Pure, InferTypeOpAdaptor]> {
  let summary = "a constant tensor";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$output);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

include "GradientOps.td"
include "OptimizerOps.td"

#endif // AMPC_DIALECTS_GRAPH_GRAPHOPS_TD
