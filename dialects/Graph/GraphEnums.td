//===- GraphEnums.td - the choices graph op attributes name -*- tablegen -*-===//
//
// Each attribute that picks one of a few behaviours is a string in the IR
// (so the IR, the Program and the runtime read it as before) whose cases
// are declared here once: verifiers, the ONNX import and the passes use
// the generated enum, symbolize* and stringify* instead of repeating the
// strings.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_GRAPHENUMS_TD
#define AMPC_DIALECTS_GRAPH_GRAPHENUMS_TD

include "mlir/IR/EnumAttr.td"

class Graph_Enum<string name, string summary, list<EnumCase> cases>
    : I32Enum<name, summary, cases> {
  let cppNamespace = "::ampc::graph";
}

def Graph_GeluApproximate : Graph_Enum<"GeluApproximate",
    "how gelu and gelu_grad compute Phi", [
  I32EnumCase<"None", 0, "none">,
  I32EnumCase<"Tanh", 1, "tanh">]>;

def Graph_MomentumMode : Graph_Enum<"MomentumMode",
    "momentum_update's formula", [
  I32EnumCase<"Standard", 0, "standard">,
  I32EnumCase<"Nesterov", 1, "nesterov">]>;

def Graph_AdamMode : Graph_Enum<"AdamMode", "adam_update's formula", [
  I32EnumCase<"Onnx", 0, "onnx">,
  I32EnumCase<"Pytorch", 1, "pytorch">]>;

def Graph_LrScheduleKind : Graph_Enum<"LrScheduleKind",
    "lr_schedule's formula", [
  I32EnumCase<"Constant", 0, "constant">,
  I32EnumCase<"Step", 1, "step">,
  I32EnumCase<"Cosine", 2, "cosine">]>;

#endif // AMPC_DIALECTS_GRAPH_GRAPHENUMS_TD
