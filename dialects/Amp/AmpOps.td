//===- AmpOps.td - the amp dialect -------------------------*- tablegen -*-===//
//
// The mixed-precision machinery: casts placed by amp-auto-cast, and the loss
// scaling ops that amp-loss-scale puts in the training step (whose seed
// gradient is the scale itself, so scaling the loss needs no op). Everything a
// step needs to decide about overflow is here, as values, so it runs on the
// device with no host synchronisation.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_AMP_AMPOPS_TD
#define AMPC_DIALECTS_AMP_AMPOPS_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/CommonAttrConstraints.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Amp_Dialect : Dialect {
  let name = "amp";
  let cppNamespace = "::ampc::amp";
  let summary = "automatic mixed precision: casts and loss scaling";
}

class Amp_Op<string mnemonic, list<Trait> traits = []>
    : Op<Amp_Dialect, mnemonic, traits>;

def Amp_FloatTensor : StaticShapeTensorOf<[F32, F16, BF16, F64]>;
def Amp_F32Scalar : 0DTensorOf<[F32]>;
def Amp_I64Scalar : 0DTensorOf<[I64]>;
def Amp_BoolScalar : 0DTensorOf<[I1]>;

def Amp_CastOp : Amp_Op<"cast", [Pure]> {
  let summary = "a precision change placed by the AMP pass";
  let description = [{
    Distinct from `graph.cast` (a cast the model wrote) so that the AMP
    passes may move, share and fold it. Rounds to nearest even.

    ```mlir
    %h = amp.cast %x : tensor<64x256xf32> to tensor<64x256xf16>
    ```
  }];
  let arguments = (ins Amp_FloatTensor:$input);
  let results = (outs Amp_FloatTensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
}

def Amp_CheckFiniteOp
    : Amp_Op<"check_finite", [Pure, AttrSizedOperandSegments]> {
  let summary = "detects inf/NaN in the scaled gradients; writes nothing else";
  let description = [{
    One read-only pass over every gradient the updates read, in whatever
    precision it was computed (f16/bf16 gradients are not widened first):
    `found_inf` is true if any element `g` of any gradient, or `g * (1/scale)`
    formed in f32 (f64 for f64 gradients), is inf or NaN. `1/scale` is
    rounded to f32 first, as PyTorch's GradScaler does, and it is the same
    product the optimizer updates form when they read the gradient with
    their `loss_scale`, so the check and the updates agree on every
    element. No gradient is rewritten.

    With `skip` true (a micro-step of gradient accumulation, between two
    updates) it reads nothing and `found_inf` is false.
    ```mlir
    %found = amp.check_finite(%gw, %gb), %scale
        : (tensor<4x8xf16>, tensor<8xf16>, tensor<f32>) -> tensor<i1>
    ```
  }];
  let arguments = (ins Variadic<Amp_FloatTensor>:$grads, Amp_F32Scalar:$scale,
                   Optional<Amp_BoolScalar>:$skip);
  let results = (outs Amp_BoolScalar:$found_inf);
  let assemblyFormat = [{
    `(` $grads `)` `,` $scale (`skip` $skip^)? attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Amp_UpdateScaleOp : Amp_Op<"update_scale", [Pure]> {
  let summary = "the dynamic loss-scale state machine";
  let description = [{
    On overflow: good_steps = 0, bad_steps += 1, and when bad_steps reaches
    `decr_every_n` the scale is multiplied by `backoff` (not below
    `min_scale`) and bad_steps reset. On a clean step: bad_steps = 0,
    good_steps += 1, and when good_steps reaches `growth_interval` the scale
    is multiplied by `growth` (not above `max_scale`, and not at all if
    the product is not a finite f32) and good_steps reset. The products
    are formed in f64 and rounded to f32. With decr_every_n = 1 and no
    bounds this is PyTorch's GradScaler; with min_scale = 1 MindSpore's
    DynamicLossScaleManager; Paddle's decr_every_n_nan_or_inf is
    decr_every_n.
  }];
  let arguments = (ins Amp_F32Scalar:$scale, Amp_I64Scalar:$good_steps,
                   Amp_I64Scalar:$bad_steps, Amp_BoolScalar:$found_inf,
                   F64Attr:$growth, F64Attr:$backoff,
                   I64Attr:$growth_interval, I64Attr:$decr_every_n,
                   F64Attr:$min_scale, F64Attr:$max_scale);
  let results = (outs Amp_F32Scalar:$new_scale, Amp_I64Scalar:$new_good_steps,
                 Amp_I64Scalar:$new_bad_steps);
  let assemblyFormat = [{
    $scale `,` $good_steps `,` $bad_steps `,` $found_inf attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def Amp_GuardUpdateOp
    : Amp_Op<"guard_update", [Pure, AttrSizedOperandSegments]> {
  let summary = "keeps the old state when the step overflowed";
  let description = [{
    `results[i] = found_inf ? old[i] : new[i]`, bit for bit: this is how a
    skipped step leaves weights and optimizer state unchanged.
  }];
  let arguments = (ins Amp_BoolScalar:$found_inf,
                   Variadic<AnyRankedTensor>:$updated,
                   Variadic<AnyRankedTensor>:$old);
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $found_inf `,` `(` $updated `)` `,` `(` $old `)` attr-dict
    `:` functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

#endif // AMPC_DIALECTS_AMP_AMPOPS_TD
