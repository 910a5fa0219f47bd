//===- OnnxOps.td - the onnx dialect -----------------------*- tablegen -*-===//
//
// The import-level dialect: one generic op per ONNX node. The importer is a
// thin protobuf walker that emits it; all ONNX semantics live in the
// convert-onnx-to-graph pass, so every ONNX op mapping is testable in .mlir.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_ONNX_ONNXOPS_TD
#define AMPC_DIALECTS_ONNX_ONNXOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinAttributes.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Onnx_Dialect : Dialect {
  let name = "onnx";
  let cppNamespace = "::ampc::onnx";
  let summary = "ONNX nodes as imported, before any semantics are applied";
  let description = [{
    A model as the ONNX file states it: `onnx.node` carries the op type,
    domain, opset version and attributes of one node; `onnx.none` stands for
    an omitted optional input. Graph inputs and initializers are the
    arguments of `@forward` (`onnx.name`, and `onnx.initializer` with the
    data), graph outputs its results.
  }];
  let useDefaultTypePrinterParser = 1;
}

class Onnx_Op<string mnemonic, list<Trait> traits = []>
    : Op<Onnx_Dialect, mnemonic, traits>;

def Onnx_UnknownType : TypeDef<Onnx_Dialect, "Unknown"> {
  let mnemonic = "unknown";
  let summary = "a value whose type ONNX shape inference could not determine";
  let description = [{
    convert-onnx-to-graph computes every type itself from the operands, so a
    node result the importer cannot type is carried as `!onnx.unknown`.
  }];
}

def Onnx_NodeOp : Onnx_Op<"node"> {
  let summary = "one ONNX node";
  let description = [{
    The node's inputs in order (`onnx.none` for an omitted optional input),
    its outputs, and its attributes in `attrs`. Its location is the ONNX node
    name. Example:

    ```mlir
    %y = onnx.node "Gemm"(%x, %w, %b) {transB = 1 : i64} opset 13
        : (tensor<64x256xf32>, tensor<256x256xf32>, tensor<256xf32>) -> tensor<64x256xf32>
    ```
  }];
  let arguments = (ins
    Variadic<AnyType>:$inputs,
    StrAttr:$op_type,
    OptionalAttr<StrAttr>:$domain,
    I64Attr:$opset,
    DefaultValuedAttr<DictionaryAttr, "{}">:$attrs
  );
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $op_type `(` $inputs `)` $attrs (`domain` $domain^)? `opset` $opset
    attr-dict
    `:` functional-type($inputs, $outputs)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The ONNX node name (from the NameLoc), or "" when the node had none.
    ::llvm::StringRef getNodeName();
  }];
}

def Onnx_NoneOp : Onnx_Op<"none", [Pure]> {
  let summary = "an omitted optional input";
  let results = (outs NoneType:$result);
  let assemblyFormat = "attr-dict";
}

#endif // AMPC_DIALECTS_ONNX_ONNXOPS_TD
