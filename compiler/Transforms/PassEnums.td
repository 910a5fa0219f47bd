//===- PassEnums.td - the choices pass options name --------*- tablegen -*-===//
//
// The cases of the pass options that pick one of a few behaviours, declared
// once: the options are of these enum types (Passes.td), so a value that is
// no case is refused where the option is parsed (PassEnums.h), with the
// cases in the message, and code compares enums, not strings.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_TRANSFORMS_PASSENUMS_TD
#define AMPC_COMPILER_TRANSFORMS_PASSENUMS_TD

include "mlir/IR/EnumAttr.td"

class Ampc_OptionEnum<string name, string summary, list<EnumCase> cases>
    : I32Enum<name, summary, cases> {
  let cppNamespace = "::ampc";
}

def Ampc_AmpLevel : Ampc_OptionEnum<"AmpLevel", "amp-auto-cast's level", [
  I32EnumCase<"O0", 0, "O0">,
  I32EnumCase<"O1", 1, "O1">,
  I32EnumCase<"O2", 2, "O2">,
  I32EnumCase<"O3", 3, "O3">]>;

def Ampc_AmpDtype : Ampc_OptionEnum<"AmpDtype",
    "amp-auto-cast's low-precision type", [
  I32EnumCase<"F16", 0, "f16">,
  I32EnumCase<"BF16", 1, "bf16">]>;

def Ampc_LossScaleMode : Ampc_OptionEnum<"LossScaleMode",
    "amp-loss-scale's mode", [
  I32EnumCase<"Auto", 0, "auto">,
  I32EnumCase<"None", 1, "none">,
  I32EnumCase<"Static", 2, "static">,
  I32EnumCase<"Dynamic", 3, "dynamic">]>;

#endif // AMPC_COMPILER_TRANSFORMS_PASSENUMS_TD
