//===- Passes.td - graph-level transformations -------------*- tablegen -*-===//

#ifndef AMPC_COMPILER_TRANSFORMS_PASSES_TD
#define AMPC_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def GraphBuildTrainingPass : Pass<"graph-build-training", "mlir::ModuleOp"> {
  let summary = "builds @train_step (backward graph and optimizer) from @forward";
  let description = [{
    Turns `@forward(inputs..., params...) -> (loss, outputs...)` into
    `@train_step(inputs..., params..., optimizer state..., ampc.step)
    -> (loss, outputs..., new params..., new state..., new ampc.step)`.

    The gradient of the loss is propagated backwards through every op
    between the trainable parameters and the loss by the ops'
    GradientOpInterface; gradients of values used several times are summed.
    Each trainable parameter that the loss depends on gets one optimizer
    update op, placed right after the last use of the parameter and of its
    gradient, so that the memory planner writes the new value over the old
    one and no gradient lives longer than it must. Unused and frozen
    parameters get no update and no state. The running statistics of
    training-mode batch normalization are state updated by the forward op.
    A step that would change nothing is an error ("nothing to train"): no
    parameter trained (none, or all frozen), or a loss that depends on none
    of them, unless it updates batch-norm statistics.

    The options are checked as PyTorch's optimizers check them, and must be
    finite; `epsilon` and `weight-decay` are the optimizer's own unless
    given (`default` in a textual pipeline).

    Results that replace state carry `graph.updates = <argument index>`;
    state arguments carry `graph.init` (their initial value) and
    `graph.state`. `ampc.step` (i64, starting at 0) counts the updates done:
    it drives Adam's bias correction, Momentum's first step and the
    learning-rate schedule.

    The low-precision working copy of a trained parameter `p` (the
    `amp.cast %p {amp.working_copy}` that amp-auto-cast places at O2, and at
    O3 with master weights) becomes state, after the backward graph and the
    updates are built (so the gradient still reaches the f32 master through
    the cast): an argument `<p>.working` of the low type (after
    `ampc.step`), whose `graph.init` is p's initial value rounded to nearest
    even, replaces the cast, and a result tied to it casts p's new value
    right after p's update. It rounds the same f32 value that the next
    step's cast at the top would, so the losses do not change; the cast
    moves off the forward and next to the update that can write it. Frozen
    and unused parameters keep their per-step cast.

    With `accumulate=N` (N > 1) one update takes the gradients of N steps
    (micro-batches): each trained parameter gets the state `<p>.grad_sum`,
    the step adds its gradient to it, and on every N-th step (counted by
    the state `ampc.micro_step`) the update reads the sum divided by N, so
    N micro-batches of B make the update of one batch of N*B with a mean
    loss, and the sum restarts from 0. The updates of the other steps are
    skipped through their `skip` operand and `ampc.step` counts updates,
    not steps. `@train_step` then carries `graph.accumulate_steps = N`, which
    the Program's step information passes on to the host loop.

    Example:
    ```mlir
    func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
        %w: tensor<2x3xf32> {graph.init = dense<...>, graph.name = "w",
                             graph.trainable = true})
        -> (tensor<f32> {graph.name = "loss"})
    ```
    becomes, with `optimizer=momentum`, a `@train_step` whose extra
    arguments are `w.velocity` and `ampc.step` and whose extra results are
    the new `w`, `w.velocity` and `ampc.step`.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect"];
  let options = [
    Option<"loss", "loss", "std::string", /*default=*/"\"\"",
           "the @forward result to minimize, by name (default: the result "
           "named 'loss', else the only scalar float result)">,
    Option<"optimizer", "optimizer", "std::string", /*default=*/"\"sgd\"",
           "sgd | momentum | nesterov | adam | adamw | adagrad">,
    Option<"lr", "lr", "double", /*default=*/"0.01", "learning rate">,
    Option<"momentum", "momentum", "double", /*default=*/"0.9",
           "momentum factor (momentum, nesterov)">,
    Option<"dampening", "dampening", "double", /*default=*/"0.0",
           "dampening of the gradient in the momentum (PyTorch SGD)">,
    Option<"beta1", "beta1", "double", /*default=*/"0.9", "Adam beta1">,
    Option<"beta2", "beta2", "double", /*default=*/"0.999", "Adam beta2">,
    Option<"epsilon", "epsilon", "::ampc::OptionalNumber",
           /*default=*/"::ampc::OptionalNumber()",
           "Adam/Adagrad epsilon (default: PyTorch's, 1e-8 for Adam and "
           "AdamW, 1e-10 for Adagrad)">,
    Option<"weightDecay", "weight-decay", "::ampc::OptionalNumber",
           /*default=*/"::ampc::OptionalNumber()",
           "L2 weight decay added to the gradient (AdamW: decoupled; "
           "default: PyTorch's, 0.01 for AdamW, 0 otherwise)">,
    Option<"lrDecay", "lr-decay", "double", /*default=*/"0.0",
           "Adagrad learning-rate decay">,
    Option<"lrSchedule", "lr-schedule", "std::string",
           /*default=*/"\"constant\"", "constant | step | cosine">,
    Option<"lrStepSize", "lr-step-size", "int64_t", /*default=*/"1",
           "step schedule: steps between decays">,
    Option<"lrGamma", "lr-gamma", "double", /*default=*/"0.1",
           "step schedule: decay factor">,
    Option<"lrTotalSteps", "lr-total-steps", "int64_t", /*default=*/"1",
           "cosine schedule: steps to reach lr-min">,
    Option<"lrMin", "lr-min", "double", /*default=*/"0.0",
           "cosine schedule: final learning rate">,
    ListOption<"freeze", "freeze", "std::string",
               "parameters (by ONNX initializer name) to leave untrained">,
    Option<"accumulate", "accumulate", "int64_t", /*default=*/"1",
           "steps whose gradients one update averages (gradient "
           "accumulation over micro-batches)">,
  ];
}

def GraphDataParallelPass : Pass<"graph-data-parallel", "mlir::ModuleOp"> {
  let summary = "averages @train_step's gradients over the ranks of a "
                "data-parallel run";
  let description = [{
    Runs after graph-build-training (and before amp-loss-scale), with
    `world-size=N` (N > 1; 1 leaves the module unchanged). Every rank runs
    the same step on its own batch; the gradient each optimizer update
    reads is replaced by its mean over the N ranks, so the update is the
    one of a batch N times as large, and every rank keeps the same
    parameters.

    The gradients are taken in the order the backward pass produces them
    and cut into buckets of at most `bucket-mb` MiB (a larger gradient is a
    bucket of its own). Each bucket's exchange is two ops:
    `graph.all_reduce_start`, right after the bucket's last gradient
    exists, widens the bucket into one f32 buffer that the ranks sum while
    the step goes on; `graph.all_reduce_wait` waits for the sum and gives
    each gradient's mean, and the updates that read them follow it. With
    `overlap` (the default) a bucket's wait comes after the next bucket's
    start, so each exchange runs behind the backward work that makes the
    next bucket (and the last one behind the updates of the one before);
    without it the wait follows its start at once. A gradient that the
    update reads through a widening cast (an f16 or bf16 gradient of an f32
    master weight) is reduced before the cast, so the update still reads
    the low-precision mean. A bucket whose gradients all have one 16-bit
    type travels in that type with `low-precision-exchange` (the default):
    each rank sums one slice of every rank's values in f32 and rounds the
    mean once, and the ranks gather the slices. Otherwise it travels as
    f32 (a bucket's limit counts the gradients' own bytes).

    Loss scaling's overflow check, placed after this pass, reads the
    averaged gradients: an inf or NaN on any rank is in every rank's mean,
    so every rank skips the same steps with no extra exchange. With
    gradient accumulation the exchange takes the skip flag its updates
    share, so the micro-steps that only add exchange nothing.

    Batch norm takes each rank's own batch statistics, as PyTorch's DDP
    does. With `sync-batch-norm` every `graph.batch_norm_training` and
    `graph.batch_norm_grad` of the step gets `sync_ranks = N`: the
    statistics (and the backward pass's sums) are those of the N batches
    together, so N ranks of batch B normalise as one process of batch N*B
    (PyTorch's SyncBatchNorm).

    `@train_step` then carries `graph.world_size = N`, which the Program's
    step information passes on to the runtime.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect", "ampc::amp::AmpDialect"];
  let options = [
    Option<"worldSize", "world-size", "int64_t", /*default=*/"1",
           "the ranks of the run (1: no data parallelism)">,
    Option<"bucketMb", "bucket-mb", "double", /*default=*/"25.0",
           "the most gradient bytes (MiB) one all-reduce takes">,
    Option<"syncBatchNorm", "sync-batch-norm", "bool", /*default=*/"false",
           "batch norm statistics over every rank's batch (false: each "
           "rank's own, as DDP)">,
    Option<"lowPrecisionExchange", "low-precision-exchange", "bool",
           /*default=*/"true",
           "exchange a bucket whose gradients are all f16 (or all bf16) in "
           "that type, half the bytes of f32 (false: always f32)">,
    Option<"overlap", "overlap", "bool", /*default=*/"true",
           "wait for each bucket's sum only after the next bucket's "
           "exchange has started (false: at once)">,
  ];
}

def AmpAutoCastPass : Pass<"amp-auto-cast", "mlir::ModuleOp"> {
  let summary = "decides which ops of @forward run in f16/bf16 and places "
                "the fewest casts that realise it";
  let description = [{
    Runs on `@forward` before the training graph is built, so the backward
    graph inherits the forward precision through the gradients of the casts.

    Every graph op belongs to one category of a table in the code (printed
    by `amp-opt --amp-print-lists`): allow (contractions: run low), deny
    (numerically sensitive: stay f32), infer (low when every float input
    that is an activation is low) and clear (like infer; precision-neutral
    data movement). Levels: O0 changes nothing; O1 runs allow ops low and
    infer/clear ops whose activation inputs are all low; O2 runs every op
    but the deny list low, and lets the deny ops that compute in f32 inside
    (Graph_WideCompute: layer norm, softmax) follow their input unless a
    user moved them or their result feeds an op that stays f32; O3 runs
    every op low. Parameters and constants do
    not decide an op's precision: parameters are cast once, at the top of the
    step, and constants are converted. The loss op and everything after it
    stay f32, and so do the statistics, scale and shift of batch and layer
    normalization. Results of `@forward` keep their types.

    A value is cast at most once per dtype, right after its definition, and
    the cast is shared by every user; cast pairs that cancel are folded
    (`amp-fold-casts`). Low-precision contractions and reductions carry
    `graph.accumulate = f32`. Running the pass a second time changes nothing.

    `report=FILE` writes every decision as JSON: one entry per compute op
    with its ONNX node, the graph op, the precision and the rule that chose
    it, and the number of casts inserted.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect", "ampc::amp::AmpDialect"];
  let options = [
    Option<"level", "level", "::ampc::AmpLevel",
           /*default=*/"::ampc::AmpLevel::O1", "O0 | O1 | O2 | O3">,
    Option<"dtype", "dtype", "::ampc::AmpDtype",
           /*default=*/"::ampc::AmpDtype::F16",
           "the low-precision type: f16 | bf16">,
    ListOption<"allow", "allow", "std::string",
               "graph op names to move to the allow list (a leading '-' "
               "takes the op off the list: it then stays f32)">,
    ListOption<"deny", "deny", "std::string",
               "graph op names to move to the deny list ('-op' removes)">,
    ListOption<"infer", "infer", "std::string",
               "graph op names to move to the infer list ('-op' removes)">,
    ListOption<"clear", "clear", "std::string",
               "graph op names to move to the clear list ('-op' removes)">,
    ListOption<"fp32Nodes", "fp32-nodes", "std::string",
               "ONNX node names whose ops stay f32 whatever their list">,
    ListOption<"lowNodes", "low-nodes", "std::string",
               "ONNX node names whose ops run low whatever their list">,
    Option<"masterWeights", "master-weights", "bool", /*default=*/"false",
           "O3: keep f32 master parameters and cast a working copy once per "
           "step (O1 and O2 always do; without it O3 stores parameters low)">,
    Option<"report", "report", "std::string", /*default=*/"\"\"",
           "write the decision report (JSON) to this file">,
  ];
}

def AmpFoldCastsPass : Pass<"amp-fold-casts", "mlir::ModuleOp"> {
  let summary = "removes amp.cast pairs that cancel and shares duplicate casts";
  let description = [{
    Run after amp-auto-cast and again after the backward graph is built
    (the gradient of a cast is a cast, so the backward graph of a precision
    boundary can hold round trips). On `amp.cast` only, never on a
    `graph.cast` the model wrote:
    - `cast(cast(x: A -> B) -> A)` is `x` when B holds every value of A
      (f16 -> f32 -> f16, bf16 -> f32 -> bf16): the round trip is exact;
    - `cast(cast(x: A -> B) -> C)` is `cast(x: A -> C)` when B holds every
      value of A, since only the last step rounds;
    - two casts of one value to one type become one, placed after the value
      is defined;
    - an optimizer update of an f32 parameter and `amp.check_finite` read an
      f16/bf16 gradient directly instead of its exact f32 cast (the gradient
      of a working copy's cast), so no f32 copy of the gradient is made;
    - a cast of a `graph.constant` becomes a converted constant;
    - casts left without users are erased;
    - a cast of a parameter (a low copy of a weight for inference, O1's
      per-step working copy) moves to right before its first user, so that
      the copies are not all live from the top of the function.
    A round trip through a narrower type (f32 -> f16 -> f32) rounds, so it is
    kept.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect", "ampc::amp::AmpDialect"];
}

def AmpRecastInBackwardPass : Pass<"amp-recast-in-backward", "mlir::ModuleOp"> {
  let summary = "makes again in the backward pass the casts (and the ops of "
                "widened values) it reads, so the forward copies die in the "
                "forward pass";
  let description = [{
    Run on @train_step after amp-fold-casts (which would share the copies
    again). The forward pass is what the loss (the result `graph.loss`
    names) depends on. An `amp.cast` of the forward pass that the rest of
    the step also reads is made a second time, right before the first of
    those readers, which then read the new cast, when keeping its input
    instead costs fewer bytes:
    - its input is narrower (an f16/bf16 value widened to f32 for a layer
      norm, whose gradient reads it): the f16 value is kept, half the bytes;
    - or the rest of the step reads its input too (an f32 softmax's output,
      which its gradient reads, rounded to f16 for the next contraction,
      whose weight gradient reads that): the copy costs nothing to keep.
    Then a pure op of the forward pass with one operand and one result of
    its type, whose operand is a widening cast (O1's f32 softmax of f16
    attention scores), is computed again from a second cast when the rest
    of the step reads its result (the softmax's gradient, and the f16 copy
    made above): the f16 scores are kept instead of the f32 probabilities,
    half the bytes, at the cost of one more softmax (FlashAttention
    recomputes it for the same reason). A backward cast of the same value
    made above serves the recomputation too.
    A cast and a pure op are functions of their input, so the values are
    bit for bit those of the forward pass. Casts of parameters (working
    copies) are left alone.
  }];
  let dependentDialects = ["ampc::amp::AmpDialect"];
}

def GraphFuseLossGradientPass
    : Pass<"graph-fuse-loss-gradient", "mlir::ModuleOp"> {
  let summary = "computes softmax_cross_entropy's gradient with its loss, so "
                "the log-probabilities are never kept";
  let description = [{
    Run on @train_step after the backward graph is built (and after
    amp-fold-casts, whose casts it reads). A `graph.softmax_cross_entropy`
    whose log-probabilities only `graph.softmax_cross_entropy_grad` reads,
    with the same labels, weights, reduction and ignore_index, and whose
    gradient `grad` is defined before the loss (the backward pass's seed, or
    the loss scale it is scaled by), becomes one
    `graph.softmax_cross_entropy_with_grad` in the loss's place: the step
    keeps the gradient instead of the f32 log-probabilities, and never has
    both (a language model's logits are its largest activations). When an
    `amp.cast` to f16/bf16 is the gradient's only reader, the new op writes
    that type directly (the same bits: one rounding of the same f32 value).
    A loss whose log-probabilities the model returns, or whose gradient is
    computed after it, is left alone.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect"];
}

def AmpLossScalePass : Pass<"amp-loss-scale", "mlir::ModuleOp"> {
  let summary = "scales the loss of @train_step, checks the gradients, "
                "unscales them in the updates, and skips the update of a "
                "step that overflowed";
  let description = [{
    Runs on the @train_step that graph-build-training built, before
    anything folds its seed (`graph.loss_seed`, the constant 1 that
    d loss / d loss starts from):
    - the seed becomes the loss scale S, so every gradient of the backward
      pass is S times the true one and small gradients survive in f16;
    - one `amp.check_finite` reads every gradient an optimizer update
      reads and gives one `found_inf`, writing nothing else; the updates
      are moved after it (they all wait for the one check);
    - every optimizer update takes S as its `loss_scale` and multiplies
      its gradient by 1/S as it reads it (no pass rewrites the gradients),
      and `found_inf` as its `skip`; the other
      state the step writes (the step counter, batch-norm running
      statistics, ...) is kept by `amp.guard_update`: a step that
      overflowed leaves parameters, optimizer state and counters bit for
      bit as they were;
    - `dynamic`: S is state `loss_scale`, with the counters
      `loss_scale.good_steps` and `loss_scale.bad_steps`, advanced by
      `amp.update_scale`; `static`: S is a constant;
    - the step gains the output `found_inf` (i1 scalar).
    No value goes back to the host inside the step. `mode=auto` (the
    default) is `dynamic` when the step computes anything in f16 and `none`
    otherwise (bf16 has f32's range); `none` leaves the step unchanged.
    With gradient accumulation (updates that already take a `skip`: the
    micro-steps between two updates), the check is skipped with them and
    the scale only moves at an update.
    Settings of other frameworks (docs/loss-scaling.md has the table): PyTorch
    GradScaler is the default; Paddle is `init-scale=32768
    growth-interval=1000 decr-every-n=2 min-scale=1`; MindSpore's
    DynamicLossScaleManager is `init-scale=16777216 min-scale=1`.
  }];
  let dependentDialects = ["ampc::graph::GraphDialect", "ampc::amp::AmpDialect"];
  let options = [
    Option<"mode", "mode", "::ampc::LossScaleMode",
           /*default=*/"::ampc::LossScaleMode::Auto",
           "auto, none, static or dynamic">,
    Option<"initScale", "init-scale", "double", /*default=*/"65536.0",
           "the first loss scale (the only one in static mode)">,
    Option<"scaleGrowth", "scale-growth", "double", /*default=*/"2.0",
           "factor applied after growth-interval clean steps in a row">,
    Option<"scaleBackoff", "scale-backoff", "double", /*default=*/"0.5",
           "factor applied after decr-every-n overflowing steps in a row">,
    Option<"growthInterval", "growth-interval", "int64_t",
           /*default=*/"2000", "clean steps in a row before the scale grows">,
    Option<"decrEveryN", "decr-every-n", "int64_t", /*default=*/"1",
           "overflowing steps in a row before the scale backs off">,
    Option<"minScale", "min-scale", "double",
           /*default=*/"1.1754943508222875e-38",
           "the scale never backs off below this (default: the smallest "
           "normal f32, i.e. no floor, as PyTorch)">,
    Option<"maxScale", "max-scale", "double",
           /*default=*/"3.4028234663852886e+38",
           "the scale never grows above this (default: the largest f32)">,
  ];
}

def AmpDescribeStepPass : Pass<"amp-describe-step", "mlir::ModuleOp"> {
  let summary = "writes on @train_step what a host training loop needs to "
                "know about it (graph.step_info)";
  let description = [{
    The last pass of a training step's graph pipeline: it reads the facts
    that lowering erases (which inputs are labels and how many classes they
    have, which parameters are weights and which are their O2 working
    copies, whether the step checks for overflow and with what static
    scale) and states them as one dictionary on the function, which
    convert-graph-to-rt keeps and the Program writer copies into the
    Program's StepInfo. amp-run and amp-exec read them from there, so the
    compiler, not the tool, decides them. A module without @train_step is
    left as it is.

    ```mlir
    func.func @train_step(...) attributes {graph.loss = "loss",
        graph.step_info = {accumulate = 1 : i64,
                           checks_overflow = true, classes = {y = 10 : i64},
                           ignore_index = {}, loss = "loss",
                           static_scale = 1.000000e+00 : f64,
                           weights = ["fc.bias", "fc.weight"],
                           working_copies = {"fc.weight" = "fc.weight.working"}}}
    ```
  }];
  let dependentDialects = ["ampc::graph::GraphDialect", "ampc::amp::AmpDialect"];
}

#endif // AMPC_COMPILER_TRANSFORMS_PASSES_TD
