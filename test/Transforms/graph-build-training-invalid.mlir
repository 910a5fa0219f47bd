// Each graph-build-training error names what is wrong (the option, the
// output or parameter, the op) and lists the choices. The diagnostics of
// the model itself are checked in place (structural.mlir); errors caused
// by an option are checked on one model, one option at a time.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/structural.mlir -split-input-file -verify-diagnostics -graph-build-training
// RUN: not amp-opt %t/model.mlir -graph-build-training=optimizer=rmsprop 2>&1 | FileCheck %s --check-prefix=OPTIMIZER
// RUN: not amp-opt %t/model.mlir -graph-build-training=lr-schedule=linear 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// RUN: not amp-opt %t/model.mlir -graph-build-training=freeze=w,bias 2>&1 | FileCheck %s --check-prefix=FREEZE
// RUN: not amp-opt %t/model.mlir -graph-build-training=loss=total 2>&1 | FileCheck %s --check-prefix=LOSSNAME
// RUN: not amp-opt %t/model.mlir -graph-build-training=loss=y 2>&1 | FileCheck %s --check-prefix=LOSSSHAPE
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=nesterov dampening=0.5" 2>&1 | FileCheck %s --check-prefix=NESTEROV
// RUN: not amp-opt %t/model.mlir -graph-build-training=lr=-1 2>&1 | FileCheck %s --check-prefix=LR
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=momentum momentum=1.5" 2>&1 | FileCheck %s --check-prefix=MOMENTUM
// A value just past a bound is shown as given, not rounded onto the bound.
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=momentum momentum=1.0000001" 2>&1 | FileCheck %s --check-prefix=MOMENTUM-CLOSE
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=adam beta2=1" 2>&1 | FileCheck %s --check-prefix=BETA
// RUN: not amp-opt %t/model.mlir -graph-build-training="lr-schedule=step lr-step-size=0" 2>&1 | FileCheck %s --check-prefix=STEPSIZE
// RUN: not amp-opt %t/model.mlir -graph-build-training="lr-schedule=cosine lr-total-steps=0" 2>&1 | FileCheck %s --check-prefix=TOTAL
// RUN: not amp-opt %t/model.mlir -graph-build-training=accumulate=0 2>&1 | FileCheck %s --check-prefix=ACCUMULATE
// RUN: not amp-opt %t/model.mlir -graph-build-training=lr=inf 2>&1 | FileCheck %s --check-prefix=LRINF
// RUN: not amp-opt %t/model.mlir -graph-build-training=lr=nan 2>&1 | FileCheck %s --check-prefix=LRNAN
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=adam epsilon=-1" 2>&1 | FileCheck %s --check-prefix=EPSILON
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=adagrad epsilon=inf" 2>&1 | FileCheck %s --check-prefix=EPSILONINF
// RUN: not amp-opt %t/model.mlir -graph-build-training=epsilon=small 2>&1 | FileCheck %s --check-prefix=EPSILONWORD
// RUN: not amp-opt %t/model.mlir -graph-build-training=weight-decay=-1 2>&1 | FileCheck %s --check-prefix=DECAY
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=adagrad lr-decay=nan" 2>&1 | FileCheck %s --check-prefix=LRDECAY
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=momentum dampening=1.5" 2>&1 | FileCheck %s --check-prefix=DAMPENING
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=nesterov momentum=0" 2>&1 | FileCheck %s --check-prefix=NESTEROVZERO
// RUN: not amp-opt %t/model.mlir -graph-build-training="optimizer=adam beta1=-0.5" 2>&1 | FileCheck %s --check-prefix=BETANEG
// RUN: not amp-opt %t/model.mlir -graph-build-training="lr-schedule=step lr-gamma=-0.5" 2>&1 | FileCheck %s --check-prefix=GAMMA
// RUN: not amp-opt %t/model.mlir -graph-build-training="lr-schedule=cosine lr-min=inf" 2>&1 | FileCheck %s --check-prefix=LRMIN
// RUN: not amp-opt %t/model.mlir -graph-build-training=freeze=w,b 2>&1 | FileCheck %s --check-prefix=FREEZEALL
// The optimizer's own default is spelt 'default' (what a printed pipeline
// shows), and 0 is a valid epsilon and weight decay.
// RUN: amp-opt %t/model.mlir -graph-build-training="optimizer=adam epsilon=default weight-decay=default" -mlir-print-op-generic | FileCheck %s --check-prefix=DEFAULT
// RUN: amp-opt %t/model.mlir -graph-build-training="optimizer=adam epsilon=0 weight-decay=0" -mlir-print-op-generic | FileCheck %s --check-prefix=ZERO

// The option errors are checked before the module is read: they point at
// the file (model.mlir:0:0), the others at @forward (line 1).
// OPTIMIZER: model.mlir:0:0: error: graph-build-training: option 'optimizer' must be sgd, momentum, nesterov, adam, adamw or adagrad, got 'rmsprop'
// SCHEDULE: model.mlir:0:0: error: graph-build-training: option 'lr-schedule' must be "constant", "step" or "cosine", got "linear"
// FREEZE: model.mlir:1:1: error: graph-build-training: freeze names 'bias', which is no parameter; the parameters are 'w', 'b', 'running'
// LOSSNAME: model.mlir:1:1: error: graph-build-training: @forward has no output named 'total'; its outputs are 'loss' (tensor<f32>), 'y' (tensor<4x2xf32>)
// LOSSSHAPE: model.mlir:1:1: error: graph-build-training: the loss 'y' must be a float scalar, not 'tensor<4x2xf32>'
// NESTEROV: model.mlir:0:0: error: graph-build-training: option 'dampening' must be 0 for nesterov momentum (as PyTorch), got 0.5
// LR: model.mlir:0:0: error: graph-build-training: option 'lr' must be finite and >= 0, got -1
// MOMENTUM: model.mlir:0:0: error: graph-build-training: option 'momentum' must be in [0, 1], got 1.5
// MOMENTUM-CLOSE: model.mlir:0:0: error: graph-build-training: option 'momentum' must be in [0, 1], got 1.0000001{{$}}
// BETA: model.mlir:0:0: error: graph-build-training: options 'beta1' and 'beta2' must be in [0, 1), got 0.9 and 1
// STEPSIZE: model.mlir:0:0: error: graph-build-training: option 'lr-step-size' must be >= 1, got 0
// TOTAL: model.mlir:0:0: error: graph-build-training: option 'lr-total-steps' must be >= 1, got 0
// ACCUMULATE: model.mlir:0:0: error: graph-build-training: option 'accumulate' must be >= 1, got 0
// LRINF: model.mlir:0:0: error: graph-build-training: option 'lr' must be finite and >= 0, got inf
// LRNAN: model.mlir:0:0: error: graph-build-training: option 'lr' must be finite and >= 0, got nan
// EPSILON: model.mlir:0:0: error: graph-build-training: option 'epsilon' must be finite and >= 0, got -1
// EPSILONINF: model.mlir:0:0: error: graph-build-training: option 'epsilon' must be finite and >= 0, got inf
// EPSILONWORD: for the --epsilon option: 'small' is not a number (nor 'default')
// DECAY: model.mlir:0:0: error: graph-build-training: option 'weight-decay' must be finite and >= 0, got -1
// LRDECAY: model.mlir:0:0: error: graph-build-training: option 'lr-decay' must be finite and >= 0, got nan
// DAMPENING: model.mlir:0:0: error: graph-build-training: option 'dampening' must be in [0, 1], got 1.5
// NESTEROVZERO: model.mlir:0:0: error: graph-build-training: option 'momentum' must be > 0 for nesterov momentum (as PyTorch), got 0
// BETANEG: model.mlir:0:0: error: graph-build-training: options 'beta1' and 'beta2' must be in [0, 1), got -0.5 and 0.999
// GAMMA: model.mlir:0:0: error: graph-build-training: option 'lr-gamma' must be finite and >= 0, got -0.5
// LRMIN: model.mlir:0:0: error: graph-build-training: option 'lr-min' must be finite and >= 0, got inf
// FREEZEALL: model.mlir:1:1: error: graph-build-training: freeze names every trainable parameter ('w', 'b'): nothing to train
// DEFAULT: "graph.adam_update"
// DEFAULT-SAME: epsilon = 1.000000e-08 : f64
// DEFAULT-SAME: weight_decay = 0.000000e+00 : f64
// ZERO: "graph.adam_update"
// ZERO-SAME: epsilon = 0.000000e+00 : f64
// ZERO-SAME: weight_decay = 0.000000e+00 : f64

//--- model.mlir
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<2x3xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<2x3xf32>, graph.trainable = true},
                   %b: tensor<2xf32> {graph.name = "b", graph.init = dense<0.0> : tensor<2xf32>, graph.trainable = true},
                   %running: tensor<2xf32> {graph.name = "running", graph.init = dense<1.0> : tensor<2xf32>})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "y"}) {
  %y = graph.gemm %x, %w, %b {trans_b = true} : (tensor<4x3xf32>, tensor<2x3xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %s = graph.mul %y, %running : (tensor<4x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  %l = graph.reduce_mean %s {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %l, %y : tensor<f32>, tensor<4x2xf32>
}

//--- structural.mlir

// expected-error @+1 {{graph-build-training: the module has no @forward function with a body}}
module {
  func.func @predict(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}

// -----

// A declaration is no @forward either.
// expected-error @+1 {{graph-build-training: the module has no @forward function with a body}}
module {
  func.func private @forward(%x: tensor<4xf32>) -> tensor<f32>
}

// -----

// expected-error @+1 {{graph-build-training: the module already has @train_step}}
module {
  func.func @forward(%x: tensor<4xf32> {graph.name = "x"}) -> (tensor<f32> {graph.name = "loss"}) {
    %0 = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
  func.func @train_step() {
    return
  }
}

// -----

// Two scalar outputs, neither named 'loss'.
// expected-error @+1 {{graph-build-training: cannot tell which output is the loss (no output is named 'loss' and 2 are float scalars); name it with the 'loss' option. Outputs: 'mse' (tensor<f32>), 'l1' (tensor<f32>), 'y' (tensor<4x2xf32>)}}
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "mse"}, tensor<f32> {graph.name = "l1"}, tensor<4x2xf32> {graph.name = "y"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = graph.mul %0, %0 : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %2 = graph.reduce_mean %1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  %3 = graph.abs %0 : tensor<4x2xf32>
  %4 = graph.reduce_sum %3 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %2, %4, %0 : tensor<f32>, tensor<f32>, tensor<4x2xf32>
}

// -----

// No scalar output at all.
// expected-error @+1 {{graph-build-training: cannot tell which output is the loss (no output is named 'loss' and 0 are float scalars); name it with the 'loss' option. Outputs: 'y' (tensor<4x2xf32>)}}
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<4x2xf32> {graph.name = "y"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// The output named 'loss' must be a float scalar.
// expected-error @+1 {{graph-build-training: the loss 'loss' must be a float scalar, not 'tensor<4x2xf32>'}}
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<4x2xf32> {graph.name = "loss"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// expected-error @+1 {{graph-build-training: the loss 'loss' must be a float scalar, not 'tensor<i64>'}}
func.func @forward(%x: tensor<4xi64> {graph.name = "x"}) -> (tensor<i64> {graph.name = "loss"}) {
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xi64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Every forward graph op has a gradient rule; a gradient op does not. One
// between a trained parameter and the loss is an error at that op.
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  // expected-error @+1 {{'graph.relu_grad' op has no gradient rule, but the loss depends on a trained parameter through it}}
  %1 = graph.relu_grad %0, %0 : tensor<4x2xf32>
  %2 = graph.reduce_sum %1 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// The loss does not depend on the trained `w` (only the output `y` does):
// the step would change nothing.
// expected-error @+1 {{graph-build-training: the loss 'loss' depends on none of the trained parameters ('w'): nothing to train}}
func.func @forward(%x: tensor<4xf32> {graph.name = "x"},
                   %w: tensor<4xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<4xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "y"}) {
  %0 = graph.reduce_sum %x {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %1 = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<f32>, tensor<4xf32>
}

// -----

// A model without initializers has nothing to train.
// expected-error @+1 {{graph-build-training: @forward has no parameters (the model has no float initializers): nothing to train}}
func.func @forward(%x: tensor<4xf32> {graph.name = "x"}) -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.mul %x, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// Nor does one whose parameters are all frozen at conversion
// (convert-onnx-to-graph{freeze}).
// expected-error @+1 {{graph-build-training: no parameter of @forward is trainable ('w' are frozen or not float): nothing to train}}
func.func @forward(%x: tensor<4xf32> {graph.name = "x"},
                   %w: tensor<4xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<4xf32>, graph.trainable = false})
    -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A trainable parameter that starts inf or NaN would be NaN after its first
// update: refused, naming it and the element (here a 0/-inf mask exported
// as a weight).
// expected-error @+1 {{graph-build-training: parameter 'mask' starts non-finite: element [0, 1] is -inf, and a weight must start finite; if it is a buffer, not a weight, freeze it (the freeze option, amp-run --freeze, or the model's ampc.frozen metadata)}}
func.func @forward(%x: tensor<2x2xf32> {graph.name = "x"},
                   %mask: tensor<2x2xf32> {graph.name = "mask", graph.init = dense<[[0.0, 0xFF800000], [0.0, 0.0]]> : tensor<2x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.add %x, %mask : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<2x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}

// -----

// A parameter the loss has no differentiable path from (it feeds another
// output only) gets no gradient and keeps its value; one warning lists it.
// The step is still built for the others.
// expected-warning @+1 {{graph-build-training: not trained, the loss has no differentiable path from 'shift'}}
func.func @forward(%x: tensor<4xf32> {graph.name = "x"},
                   %w: tensor<4xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<4xf32>, graph.trainable = true},
                   %shift: tensor<4xf32> {graph.name = "shift", graph.init = dense<1.0> : tensor<4xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4xf32> {graph.name = "shifted"}) {
  %0 = graph.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0>, keepdims = false} : (tensor<4xf32>) -> tensor<f32>
  %2 = graph.add %x, %shift : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %1, %2 : tensor<f32>, tensor<4xf32>
}
