//===- GradientOpInterface.td - ops that know their gradient -*- tablegen -*-===//

#ifndef AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_TD
#define AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_TD

include "mlir/IR/OpBase.td"

def Graph_GradientOpInterface : OpInterface<"GradientOpInterface"> {
  let cppNamespace = "::ampc::graph";
  let description = [{
    An op that can write the gradients of its operands, given the gradients
    of its results, as graph ops (reverse-mode automatic differentiation).
    graph-build-training calls it on every op between the parameters and
    the loss, in reverse order, and sums the gradients of values used
    more than once.

    The implementations are external models (compiler/Autodiff), attached
    by `registerGradientModels`, so the dialect itself stays free of the
    backward rules.
  }];
  let methods = [
    InterfaceMethod<[{
        Writes the gradients of the operands at the builder's insertion
        point. `resultGrads` has one entry per result, null where no
        gradient flows into that result (at least one is non-null).
        `operandGrads` is resized to the number of operands; an entry stays
        null for an operand that gets no gradient (integer operands,
        masks). Each gradient has its operand's type. Fails, with an error
        on the op, when the op cannot be differentiated as configured.
      }],
      "::llvm::LogicalResult", "buildGradients",
      (ins "::mlir::OpBuilder &":$builder,
           "::llvm::ArrayRef<::mlir::Value>":$resultGrads,
           "::llvm::SmallVectorImpl<::mlir::Value> &":$operandGrads)>
  ];
}

#endif // AMPC_DIALECTS_GRAPH_GRADIENTOPINTERFACE_TD
