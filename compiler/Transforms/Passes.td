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

    Results that replace state carry `graph.updates = <argument index>`;
    state arguments carry `graph.init` (their initial value) and
    `graph.state`. `ampc.step` (i64, starting at 0) counts the updates done:
    it drives Adam's bias correction, Momentum's first step and the
    learning-rate schedule.

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
    Option<"epsilon", "epsilon", "double", /*default=*/"-1.0",
           "Adam/Adagrad epsilon (default: PyTorch's, 1e-8 for Adam and "
           "AdamW, 1e-10 for Adagrad)">,
    Option<"weightDecay", "weight-decay", "double", /*default=*/"-1.0",
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
  ];
}

#endif // AMPC_COMPILER_TRANSFORMS_PASSES_TD
