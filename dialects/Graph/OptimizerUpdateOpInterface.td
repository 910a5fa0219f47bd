//===- OptimizerUpdateOpInterface.td - parameter updates ----*- tablegen -*-===//

#ifndef AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_TD
#define AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Graph_OptimizerUpdateOpInterface
    : OpInterface<"OptimizerUpdateOpInterface"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    An optimizer update of one parameter tensor (sgd, momentum, adam,
    adagrad). Its operands are `lr`, then (all but sgd) `step`, `param`,
    `grad`, the optimizer state the update replaces (velocity, m and v,
    accumulator) and the guards; its results are the new parameter and
    then the new state, in the state operands' order. It reads element i
    of every tensor operand before it writes element i of any result, so
    the planner may write the results over `param` and the state.

    The guards are `skip` (i1) and then `loss_scale` (f32), each optional;
    see OptimizerOps.td for what they mean.
  }];
  let methods = [
    InterfaceMethod<"The parameter being updated.",
      "::mlir::TypedValue<::mlir::RankedTensorType>", "getParam">,
    InterfaceMethod<"The operand holding the parameter's gradient.",
      "::mlir::OpOperand &", "getGradMutable">,
    InterfaceMethod<"The skip and loss_scale guards that are present.",
      "::mlir::Operation::operand_range", "getGuards">,
    InterfaceMethod<"The guards, to be replaced.",
      "::mlir::MutableOperandRange", "getGuardsMutable">,
  ];
  let extraClassDeclaration = [{
    /// The gradient the update reads.
    ::mlir::Value getGrad() { return getGradMutable().get(); }
    /// The optimizer state the update reads and replaces (empty for sgd):
    /// the operands between `grad` and the guards.
    ::mlir::OperandRange getStateOperands();
    /// The `skip` guard, or null.
    ::mlir::Value getSkip();
    /// The `loss_scale` guard, or null.
    ::mlir::Value getLossScale();
    /// Replaces both guards; a null `skip` with a `lossScale` is a bug.
    void setGuards(::mlir::Value skip, ::mlir::Value lossScale = {});
  }];
}

#endif // AMPC_DIALECTS_GRAPH_OPTIMIZERUPDATEOPINTERFACE_TD
