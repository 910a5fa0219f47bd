//===- OptimizerOps.td - parameter updates of a training step -*- tablegen -*-===//
//
// One op per parameter tensor. Each is elementwise over the parameter, so
// the memory planner writes the new parameter and state over the old ones
// (the runtime checks that this is safe). `lr` is an f32 or f64 scalar
// tensor and `step` an i64 scalar: the number of updates done before this
// one (0 at the first), as ONNX's `T`. Both are tensors so that schedules
// and loss scaling can compute them inside the step.
//
// Every update ends with up to two scalar guards, printed `skip %s` and
// `loss_scale %S`:
// - `skip` (i1): when it is true the results are the inputs they replace,
//   bit for bit (the working copy a kernel may also write is then the old
//   parameter rounded, which is the old working copy). Loss scaling skips a
//   step that overflowed with it, and gradient accumulation the micro-steps
//   between two updates.
// - `loss_scale` (f32), only after `skip`: the gradient is the loss-scaled
//   one, and the update reads it as grad * (1 / loss_scale), with
//   1 / loss_scale rounded to f32 first (PyTorch's GradScaler) and the
//   product formed in the update's compute type. The gradient may then be
//   f16 or bf16 for an f32 parameter: it goes into the update as the
//   backward pass made it, with no f32 copy and no pass that rewrites it. A
//   scaled gradient can overflow, so a step that has `loss_scale` must be
//   able to skip (amp.check_finite's found_inf).
// They are one operand group (not two optional operands) so that an update
// needs no operand-segment attribute; OptimizerUpdateOpInterface's
// getSkip / getLossScale / setGuards read and set them.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_OPTIMIZEROPS_TD
#define AMPC_DIALECTS_GRAPH_OPTIMIZEROPS_TD

include "OptimizerUpdateOpInterface.td"

// Every op here is Graph_Optimizer: graph-build-training makes it.
class Graph_OptimizerOp<string mnemonic, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([Pure, Graph_Optimizer], traits)>;
class Graph_UpdateOp<string mnemonic>
    : Graph_OptimizerOp<mnemonic, [Graph_OptimizerUpdateOpInterface]>;

def Graph_ScalarFloatTensor : 0DTensorOf<[F32, F64]>;
def Graph_StepTensor : 0DTensorOf<[I64]>;
def Graph_SkipTensor : 0DTensorOf<[I1]>;
def Graph_LossScaleTensor : 0DTensorOf<[F32]>;
def Graph_UpdateGuard : AnyTypeOf<[Graph_SkipTensor, Graph_LossScaleTensor]>;

def Graph_SgdUpdateOp : Graph_UpdateOp<"sgd_update"> {
  let summary = "plain SGD: param - lr * (grad + weight_decay * param)";
  let arguments = (ins Graph_ScalarFloatTensor:$lr, Graph_FloatTensor:$param,
                   Graph_FloatTensor:$grad,
                   Variadic<Graph_UpdateGuard>:$guards,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay);
  let results = (outs Graph_FloatTensor:$new_param);
  let assemblyFormat = [{
    $lr `,` $param `,` $grad custom<UpdateGuards>($guards) attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_MomentumUpdateOp : Graph_UpdateOp<"momentum_update"> {
  let summary = "SGD with momentum (ONNX Momentum, PyTorch SGD)";
  let description = [{
    ONNX `ai.onnx.preview.training` Momentum for one tensor:
    g = norm_coefficient * param + grad; b = step > 0 ? beta : 1;
    v' = alpha * v + b * g; `standard`: param' = param - lr * v';
    `nesterov`: param' = param - lr * (g + alpha * v').
    PyTorch's SGD(momentum=m, dampening=d, weight_decay=wd, nesterov) is
    alpha = m, beta = 1 - d, norm_coefficient = wd with v starting at 0.
  }];
  let arguments = (ins Graph_ScalarFloatTensor:$lr, Graph_StepTensor:$step,
                   Graph_FloatTensor:$param, Graph_FloatTensor:$grad,
                   Graph_FloatTensor:$velocity,
                   Variadic<Graph_UpdateGuard>:$guards,
                   F64Attr:$alpha, F64Attr:$beta,
                   DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient,
                   DefaultValuedStrAttr<StrAttr, "standard">:$mode);
  let results = (outs Graph_FloatTensor:$new_param,
                 Graph_FloatTensor:$new_velocity);
  let assemblyFormat = [{
    $lr `,` $step `,` $param `,` $grad `,` $velocity
    custom<UpdateGuards>($guards) attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_AdamUpdateOp : Graph_UpdateOp<"adam_update"> {
  let summary = "Adam and AdamW (ONNX Adam, PyTorch Adam/AdamW)";
  let description = [{
    `mode = "onnx"` is ONNX Adam: g = norm_coefficient * param + grad;
    m' = alpha * m + (1 - alpha) * g; v' = beta * v + (1 - beta) * g^2;
    r = step > 0 ? lr * sqrt(1 - beta^step) / (1 - alpha^step) : lr;
    param' = (1 - norm_coefficient_post) * (param - r * m' / (sqrt(v') + epsilon)).
    `mode = "pytorch"` is torch.optim.Adam/AdamW with t = step + 1: param is
    first multiplied by (1 - lr * weight_decay) (AdamW's decoupled decay),
    then g = grad + norm_coefficient * param_before (Adam's L2 decay), m'
    and v' as above, and
    param' -= lr / (1 - alpha^t) * m' / (sqrt(v') / sqrt(1 - beta^t) + epsilon)
    (PyTorch's order of operations). Decoupled `weight_decay` belongs to
    this mode and `norm_coefficient_post` to "onnx"; alpha and beta must be
    below 1 here.
  }];
  let arguments = (ins Graph_ScalarFloatTensor:$lr, Graph_StepTensor:$step,
                   Graph_FloatTensor:$param, Graph_FloatTensor:$grad,
                   Graph_FloatTensor:$m, Graph_FloatTensor:$v,
                   Variadic<Graph_UpdateGuard>:$guards,
                   DefaultValuedAttr<F64Attr, "0.9">:$alpha,
                   DefaultValuedAttr<F64Attr, "0.999">:$beta,
                   DefaultValuedAttr<F64Attr, "1e-8">:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient,
                   DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient_post,
                   DefaultValuedAttr<F64Attr, "0.0">:$weight_decay,
                   DefaultValuedStrAttr<StrAttr, "pytorch">:$mode);
  let results = (outs Graph_FloatTensor:$new_param, Graph_FloatTensor:$new_m,
                 Graph_FloatTensor:$new_v);
  let assemblyFormat = [{
    $lr `,` $step `,` $param `,` $grad `,` $m `,` $v
    custom<UpdateGuards>($guards) attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_AdagradUpdateOp : Graph_UpdateOp<"adagrad_update"> {
  let summary = "Adagrad (ONNX Adagrad, PyTorch Adagrad)";
  let description = [{
    r = lr / (1 + step * decay_factor); g = norm_coefficient * param + grad;
    h' = h + g^2; param' = param - r * g / (sqrt(h') + epsilon).
  }];
  let arguments = (ins Graph_ScalarFloatTensor:$lr, Graph_StepTensor:$step,
                   Graph_FloatTensor:$param, Graph_FloatTensor:$grad,
                   Graph_FloatTensor:$accumulator,
                   Variadic<Graph_UpdateGuard>:$guards,
                   DefaultValuedAttr<F64Attr, "0.0">:$decay_factor,
                   DefaultValuedAttr<F64Attr, "1e-6">:$epsilon,
                   DefaultValuedAttr<F64Attr, "0.0">:$norm_coefficient);
  let results = (outs Graph_FloatTensor:$new_param,
                 Graph_FloatTensor:$new_accumulator);
  let assemblyFormat = [{
    $lr `,` $step `,` $param `,` $grad `,` $accumulator
    custom<UpdateGuards>($guards) attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Graph_LrScheduleOp : Graph_OptimizerOp<"lr_schedule"> {
  let summary = "the learning rate of a step";
  let description = [{
    `constant`: base_lr. `step`: base_lr * gamma^floor(step / step_size)
    (PyTorch StepLR, counted in steps). `cosine`: min_lr + (base_lr -
    min_lr) * (1 + cos(pi * min(step, total_steps) / total_steps)) / 2
    (PyTorch CosineAnnealingLR's closed form).
  }];
  let arguments = (ins Graph_StepTensor:$step, F64Attr:$base_lr,
                   DefaultValuedStrAttr<StrAttr, "constant">:$kind,
                   DefaultValuedAttr<I64Attr, "1">:$step_size,
                   DefaultValuedAttr<F64Attr, "0.1">:$gamma,
                   DefaultValuedAttr<I64Attr, "1">:$total_steps,
                   DefaultValuedAttr<F64Attr, "0.0">:$min_lr);
  let results = (outs Graph_ScalarFloatTensor:$lr);
  let assemblyFormat = "$step attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def Graph_GradientTensor : StaticShapeTensorOf<[F32, F16, BF16]>;

// A gradient of all_reduce_start, or its trailing skip flag.
def Graph_AllReduceOperand : AnyTypeOf<[Graph_GradientTensor, Graph_SkipTensor]>;
// The buffer an exchange sums in, from all_reduce_start to
// all_reduce_wait: f32, or the gradients' own 16-bit type.
def Graph_ExchangeTensor : 1DTensorOf<[F32, F16, BF16]>;

// Neither op is Pure: together they exchange data with the other processes
// of the run, so they may be neither removed nor merged with another (as
// graph.dropout, they have unknown effects).
def Graph_AllReduceStartOp
    : Graph_Op<"all_reduce_start", [Graph_Optimizer]> {
  let summary = "starts summing a bucket of gradients over the ranks of a "
                "data-parallel run";
  let description = [{
    graph-data-parallel puts one after the last gradient of each bucket,
    and the bucket's `graph.all_reduce_wait` later. Every rank passes its
    gradients of one step. The result is the exchange buffer, the
    gradients one after another, which the ranks exchange in place while
    the step goes on. Nothing may read the buffer but the wait.

    An f32 buffer holds the gradients widened to f32, and the ranks sum it.
    A buffer of the gradients' own 16-bit type (every gradient must then
    have it) travels in half the bytes: each rank sums a slice of every
    rank's values in f32, in rank order, takes the mean and rounds it once,
    and the ranks gather the slices, so every rank has the same means.

    With `skip` true (gradient accumulation's steps that only add, the
    same on every rank) nothing is exchanged: the buffer keeps this rank's
    gradients, and the wait passes them through.
  }];
  // The gradients and the optional skip flag are one operand group, as an
  // update's guards are: no operand-segment attribute.
  let arguments = (ins Variadic<Graph_AllReduceOperand>:$inputs,
                   I64Attr:$world_size);
  let results = (outs Graph_ExchangeTensor:$exchange);
  let assemblyFormat = [{
    custom<GradsAndSkip>($inputs) attr-dict `:`
    functional-type(operands, results)
  }];
  let extraClassDeclaration = [{
    /// Every operand but a trailing skip flag.
    ::mlir::Operation::operand_range getGrads();
    /// The skip flag, or null.
    ::mlir::Value getSkip();
  }];
  let hasVerifier = 1;
}

def Graph_AllReduceWaitOp
    : Graph_Op<"all_reduce_wait", [Graph_Optimizer]> {
  let summary = "the mean of each gradient of a started all-reduce";
  let description = [{
    Waits until the exchange that `graph.all_reduce_start` started is
    complete. Each result is the sum of that start's gradient operand over
    the `world_size` ranks, accumulated in f32, times 1/world_size rounded
    to f32, rounded once to the gradient's type (with a 16-bit buffer the
    exchange has done that already). A non-finite value on any
    rank is non-finite in every rank's result, so the overflow check after
    it agrees on every rank. With `skip` (the start's flag) true each
    result is the start's operand.

    The work between the start and the wait overlaps the exchange.
  }];
  let arguments = (ins Graph_ExchangeTensor:$exchange,
                   Optional<Graph_SkipTensor>:$skip, I64Attr:$world_size);
  let results = (outs Variadic<Graph_GradientTensor>:$means);
  let assemblyFormat = [{
    $exchange (`skip` $skip^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // AMPC_DIALECTS_GRAPH_OPTIMIZEROPS_TD
