//===- AmpOperandPolicy.td - operands that stay f32 -------*- tablegen -*-===//
//
// Which operands of an op amp-auto-cast leaves in f32 when the op itself
// runs low. A policy of the AMP pass, not a fact of the op: the interface
// lives here and its models are attached from AmpOperandPolicy.cpp, so the
// graph dialect knows nothing of it (as it knows nothing of the gradients).
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_TD
#define AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_TD

include "mlir/IR/OpBase.td"

def AmpOperandPolicyOpInterface : OpInterface<"AmpOperandPolicyOpInterface"> {
  let cppNamespace = "::ampc";
  let description = [{
    An op some of whose float operands keep f32 when amp-auto-cast runs the
    op in f16 or bf16. Ops without the interface take every float operand
    in the op's precision.
  }];
  let methods = [
    InterfaceMethod<"True when operand `index` stays f32.",
      "bool", "keepsOperandF32", (ins "unsigned":$index)>,
  ];
}

#endif // AMPC_COMPILER_TRANSFORMS_AMPOPERANDPOLICY_TD
