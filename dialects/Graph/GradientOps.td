//===- GradientOps.td - ops the backward graph is built from -*- tablegen -*-===//
//
// graph-build-training writes a backward graph from these and from the
// forward ops. Where a gradient is a short chain of forward ops (add, mul,
// reduce_sum, reshape, ...) it is written as that chain, so it fuses like
// any other elementwise code; the ops here are the gradients that are not.
// Every one names the incoming gradient `grad`. Ops whose result shape the
// operands cannot give (the input of a strided convolution, of a slice, of
// a gather) take the result type explicitly; their verifiers run the
// forward shape rule on it and check it gives `grad`'s shape.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_GRADIENTOPS_TD
#define AMPC_DIALECTS_GRAPH_GRADIENTOPS_TD

// Every op here is Graph_Backward: graph-build-training makes it.
class Graph_GradOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Graph_Backward], traits)>;

//===----------------------------------------------------------------------===//
// Activations (elementwise: they join fused kernels)
//===----------------------------------------------------------------------===//

class Graph_ActivationGradOp<string mnemonic, string what>
    : Graph_GradOp<mnemonic, [Pure, SameOperandsAndResultType, Graph_Fusible]> {
  let summary = what;
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$grad `,` $input attr-dict `:` type($output)";
}

def Graph_ReluGradOp
    : Graph_ActivationGradOp<"relu_grad", "grad where input > 0, else 0">;
def Graph_AbsGradOp
    : Graph_ActivationGradOp<"abs_grad", "grad * sign(input) (0 at 0)">;

def Graph_LeakyReluGradOp
    : Graph_ActivationGradOp<"leaky_relu_grad",
                             "grad where input > 0, else alpha * grad"> {
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.01">:$alpha);
}

def Graph_HardSigmoidGradOp
    : Graph_ActivationGradOp<"hard_sigmoid_grad",
                             "alpha * grad where 0 < alpha * input + beta < 1, "
                             "else 0"> {
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   DefaultValuedAttr<F64Attr, "0.2">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.5">:$beta);
}

def Graph_HardSwishGradOp
    : Graph_ActivationGradOp<"hard_swish_grad",
                             "0 where input < -3, grad * (input / 3 + 0.5) "
                             "where input <= 3, else grad">;

def Graph_GeluGradOp
    : Graph_ActivationGradOp<"gelu_grad", "grad * d gelu(input) / d input"> {
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   DefaultValuedStrAttr<StrAttr, "none">:$approximate);
  let hasVerifier = 1;
}

def Graph_ClipGradOp
    : Graph_ActivationGradOp<"clip_grad",
                             "grad where min <= input <= max, else 0"> {
  let description = [{
    The bounds are inclusive, as in PyTorch's clamp backward; an absent
    bound does not cut on that side.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   OptionalAttr<F64Attr>:$min, OptionalAttr<F64Attr>:$max);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Graph_Conv2dBackwardDataOp
    : Graph_GradOp<"conv2d_backward_data", [Pure, Graph_Accumulating]> {
  let summary = "gradient of conv2d with respect to its input";
  let description = [{
    `grad` is dLoss/d(conv2d output) [N, O, OH, OW]; the result is the
    gradient of the input, whose shape (a transposed convolution's output
    is ambiguous under strides) is the result type.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$filter,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $filter attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_Conv2dBackwardFilterOp
    : Graph_GradOp<"conv2d_backward_filter", [Pure, Graph_Accumulating]> {
  let summary = "gradient of conv2d with respect to its filter";
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
                   DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_MaxPool2dGradOp
    : Graph_GradOp<"max_pool2d_grad",
                   [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "gradient of max_pool2d: each window's grad to its maximum";
  let description = [{
    The maximum is found again in `input`; of equal maxima the first in
    row-major window order takes the gradient (PyTorch's rule). Overlapping
    windows add.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $input attr-dict `:` functional-type(operands, results)
  }];
}

def Graph_AvgPool2dGradOp
    : Graph_GradOp<"avg_pool2d_grad", [Pure, Graph_Accumulating]> {
  let summary = "gradient of avg_pool2d: each window's grad spread evenly";
  let description = [{
    The divisor of each window is the forward one (`count_include_pad`,
    ceil mode); the result type is the input's.
  }];
  let arguments = (ins Graph_FloatTensor:$grad,
                   DenseI64ArrayAttr:$kernel_shape, DenseI64ArrayAttr:$strides,
                   DenseI64ArrayAttr:$pads,
                   DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                   DefaultValuedAttr<BoolAttr, "false">:$count_include_pad);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Reductions, softmax, losses
//===----------------------------------------------------------------------===//

def Graph_ReduceMaxGradOp
    : Graph_GradOp<"reduce_max_grad", [Pure, InferTypeOpAdaptor]> {
  let summary = "gradient of reduce_max, shared evenly between tied maxima";
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   Graph_FloatTensor:$output_value, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $input `,` $output_value attr-dict
    `:` functional-type(operands, results)
  }];
}

class Graph_SoftmaxGradLikeOp<string mnemonic, string what>
    : Graph_GradOp<mnemonic,
                   [Pure, SameOperandsAndResultType, Graph_Accumulating]> {
  let summary = what;
  let description = [{ `output` is the forward op's result. }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$output,
                   I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$input_grad);
  let assemblyFormat = "$grad `,` $output attr-dict `:` type($input_grad)";
  let hasVerifier = 1;
}

def Graph_SoftmaxGradOp : Graph_SoftmaxGradLikeOp<"softmax_grad",
    "gradient of softmax: y * (grad - sum(grad * y))">;
def Graph_LogSoftmaxGradOp : Graph_SoftmaxGradLikeOp<"log_softmax_grad",
    "gradient of log_softmax: grad - exp(y) * sum(grad)">;

def Graph_SoftmaxCrossEntropyGradOp
    : Graph_GradOp<"softmax_cross_entropy_grad",
                   [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "gradient of softmax_cross_entropy's loss w.r.t. the scores";
  let description = [{
    `grad` has the loss's shape; `log_prob` is the forward result. For each
    sample with label l (not ignored) and weight w = weights[l] (1 without
    weights): (exp(log_prob) - onehot(l)) * w * grad / D, where D is the
    summed weight of the samples not ignored for `mean`, else 1. Ignored
    samples get 0.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$log_prob,
                   Graph_IntTensor:$labels,
                   Optional<Graph_FloatTensor>:$weights,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $log_prob `,` $labels (`,` $weights^)? attr-dict
    `:` functional-type(operands, results)
  }];
}

def Graph_SoftmaxCrossEntropyWithGradOp
    : Graph_GradOp<"softmax_cross_entropy_with_grad",
                   [Pure, Graph_Accumulating]> {
  let summary = "softmax_cross_entropy and its gradient w.r.t. the scores, "
                "in one pass";
  let description = [{
    What softmax_cross_entropy followed by softmax_cross_entropy_grad
    compute, when the gradient `grad` of the loss is known before the loss
    (the seed of the backward pass): `loss` as softmax_cross_entropy's, and
    `dscores` as softmax_cross_entropy_grad's from the log-probabilities,
    which are never stored. graph-fuse-loss-gradient builds it, so the
    backward pass keeps the gradient (the scores' size) instead of the
    log-probabilities, and a following cast of the gradient to f16/bf16
    becomes `dscores`'s own type (rounded once from the f32 value: the
    same bits as the cast). `dscores` has the scores' shape and their
    element type, or f16/bf16 for f32 scores; `grad` has the loss's type.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$scores,
                   Graph_IntTensor:$labels,
                   Optional<Graph_FloatTensor>:$weights,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$loss, Graph_FloatTensor:$dscores);
  let assemblyFormat = [{
    $grad `,` $scores `,` $labels (`,` $weights^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_NllLossGradOp : Graph_GradOp<"nll_loss_grad", [Pure]> {
  let summary = "gradient of nll_loss w.r.t. its log-probabilities";
  let description = [{
    -w * grad / D at each sample's label, 0 elsewhere (D as in
    softmax_cross_entropy_grad). The result type is the input's [N, C, d...].
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_IntTensor:$target,
                   Optional<Graph_FloatTensor>:$weight,
                   DefaultValuedStrAttr<StrAttr, "mean">:$reduction,
                   OptionalAttr<I64Attr>:$ignore_index);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $target (`,` $weight^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalization
//===----------------------------------------------------------------------===//

def Graph_BatchNormGradOp
    : Graph_GradOp<"batch_norm_grad",
                   [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "gradient of batch_norm_training (batch statistics)";
  let description = [{
    `batch_mean` and `batch_inv_std` are batch_norm_training's results.
    Results: the gradients of input, scale and bias.

    With `sync_ranks = N` (the forward op's) the input gradient takes the
    sums of `grad` and `grad * xhat` over the N ranks' batches (as
    PyTorch's SyncBatchNorm), exchanged while the op runs; the scale and
    bias gradients stay this rank's, which the gradient all-reduce then
    averages.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   Graph_FloatTensor:$scale, Graph_FloatTensor:$batch_mean,
                   Graph_FloatTensor:$batch_inv_std,
                   OptionalAttr<I64Attr>:$sync_ranks);
  let results = (outs Graph_FloatTensor:$input_grad,
                 Graph_FloatTensor:$scale_grad, Graph_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale `,` $batch_mean `,` $batch_inv_std attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_LayerNormGradOp
    : Graph_GradOp<"layer_norm_grad",
                   [Pure, InferTypeOpAdaptor, Graph_Accumulating]> {
  let summary = "gradient of layer_norm";
  let description = [{
    `mean` and `inv_std_dev` are layer_norm's results. `scale_grad` and
    `bias_grad` have the scale's shape (reduced over the dimensions it was
    broadcast along).
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_FloatTensor:$input,
                   Graph_FloatTensor:$scale, Graph_FloatTensor:$mean,
                   Graph_FloatTensor:$inv_std_dev, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$input_grad,
                 Graph_FloatTensor:$scale_grad, Graph_FloatTensor:$bias_grad);
  let assemblyFormat = [{
    $grad `,` $input `,` $scale `,` $mean `,` $inv_std_dev attr-dict
    `:` functional-type(operands, results)
  }];
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_SliceGradOp : Graph_GradOp<"slice_grad", [Pure]> {
  let summary = "gradient of slice: grad at the sliced positions, 0 elsewhere";
  let arguments = (ins Graph_FloatTensor:$grad, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$ends, DenseI64ArrayAttr:$steps);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = "$grad attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GatherGradOp
    : Graph_GradOp<"gather_grad", [Pure, Graph_Accumulating]> {
  let summary = "gradient of gather: grad added back at the indices";
  let description = [{
    Repeated indices add up; negative indices count from the end. The
    result type is the data's.
  }];
  let arguments = (ins Graph_FloatTensor:$grad, Graph_IntTensor:$indices,
                   I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$output);
  let assemblyFormat = [{
    $grad `,` $indices attr-dict `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // AMPC_DIALECTS_GRAPH_GRADIENTOPS_TD
