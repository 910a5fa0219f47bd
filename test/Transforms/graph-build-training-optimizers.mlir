// Every optimizer and learning-rate schedule of graph-build-training on one
// small model: the update op, all of its attributes (printed generically,
// so the values equal to an op default are pinned too), the state each
// optimizer keeps (zeros, graph.state) and the results tied to it.

// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training | FileCheck %s --check-prefix=SGD
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="optimizer=sgd weight-decay=0.5" | FileCheck %s --check-prefix=SGDWD
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="optimizer=momentum momentum=0.75 dampening=0.25 weight-decay=0.125" | FileCheck %s --check-prefixes=MOM,VELOCITY
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training=optimizer=nesterov | FileCheck %s --check-prefixes=NESTEROV,VELOCITY
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="optimizer=adam weight-decay=0.125" | FileCheck %s --check-prefixes=ADAM,MV
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="optimizer=adamw weight-decay=0.125 beta1=0.75 beta2=0.875 epsilon=0.25" | FileCheck %s --check-prefixes=ADAMW,MV
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training=optimizer=adagrad | FileCheck %s --check-prefixes=ADAGRAD,SUM
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="optimizer=adagrad lr-decay=0.5 epsilon=0.25 weight-decay=0.125" | FileCheck %s --check-prefixes=ADAGRADOPT,SUM
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="lr=0.5 lr-schedule=step lr-step-size=10 lr-gamma=0.5" | FileCheck %s --check-prefix=STEP
// RUN: amp-opt %s -mlir-print-op-generic -graph-build-training="lr=0.5 lr-schedule=cosine lr-total-steps=100 lr-min=0.125" | FileCheck %s --check-prefix=COSINE

// The schedules, from the step counter.
// STEP: "graph.lr_schedule"(%arg2) {base_lr = 5.000000e-01 : f64, gamma = 5.000000e-01 : f64, kind = "step", min_lr = 0.000000e+00 : f64, step_size = 10 : i64, total_steps = 1 : i64}
// COSINE: "graph.lr_schedule"(%arg2) {base_lr = 5.000000e-01 : f64, gamma = 1.000000e-01 : f64, kind = "cosine", min_lr = 1.250000e-01 : f64, step_size = 1 : i64, total_steps = 100 : i64}

// Plain SGD keeps no state: only the step counter is added.
// SGD: arg_attrs = [{graph.name = "x"}, {graph.init = dense<5.000000e-01> : tensor<3x2xf32>, graph.name = "w", graph.trainable = true}, {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}]
// SGD-SAME: res_attrs = [{graph.name = "loss"}, {graph.name = "w", graph.updates = 1 : i64}, {graph.name = "ampc.step", graph.updates = 2 : i64}]
// The default schedule is constant at lr (default 0.01).
// SGD: %[[LR:.*]] = "graph.lr_schedule"(%arg2) {base_lr = 1.000000e-02 : f64, gamma = 1.000000e-01 : f64, kind = "constant", min_lr = 0.000000e+00 : f64, step_size = 1 : i64, total_steps = 1 : i64} : (tensor<i64>) -> tensor<f32>
// SGD: %[[G:.*]] = "graph.matmul"(%{{.*}}, %{{.*}}) : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
// SGD-NEXT: %[[U:.*]] = "graph.sgd_update"(%[[LR]], %arg1, %[[G]]) {weight_decay = 0.000000e+00 : f64}
// SGD: "func.return"(%{{.*}}, %[[U]], %{{.*}})
// SGDWD: "graph.sgd_update"(%{{.*}}, %arg1, %{{.*}}) {weight_decay = 5.000000e-01 : f64}

// Momentum and Nesterov keep a velocity. PyTorch SGD(momentum=m,
// dampening=d, weight_decay=wd) is ONNX Momentum with alpha = m,
// beta = 1 - d, norm_coefficient = wd.
// VELOCITY: arg_attrs = [{graph.name = "x"}, {graph.init = dense<5.000000e-01> : tensor<3x2xf32>, graph.name = "w", graph.trainable = true}, {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}, {graph.init = dense<0.000000e+00> : tensor<3x2xf32>, graph.name = "w.velocity", graph.state}]
// VELOCITY-SAME: res_attrs = [{graph.name = "loss"}, {graph.name = "w", graph.updates = 1 : i64}, {graph.name = "w.velocity", graph.updates = 3 : i64}, {graph.name = "ampc.step", graph.updates = 2 : i64}]
// VELOCITY: %[[LR:.*]] = "graph.lr_schedule"(%arg2)
// VELOCITY: %[[U:.*]]:2 = "graph.momentum_update"(%[[LR]], %arg2, %arg1, %{{[0-9]+}}, %arg3)
// MOM-SAME: {alpha = 7.500000e-01 : f64, beta = 7.500000e-01 : f64, mode = "standard", norm_coefficient = 1.250000e-01 : f64}
// NESTEROV-SAME: {alpha = 9.000000e-01 : f64, beta = 1.000000e+00 : f64, mode = "nesterov", norm_coefficient = 0.000000e+00 : f64}
// VELOCITY: "func.return"(%{{.*}}, %[[U]]#0, %[[U]]#1, %{{.*}})

// Adam and AdamW keep two moments and use PyTorch's update rule. Adam's
// weight decay is L2 on the gradient (norm_coefficient), AdamW's is
// decoupled (weight_decay); epsilon defaults to PyTorch's 1e-8.
// MV: arg_attrs = [{graph.name = "x"}, {graph.init = dense<5.000000e-01> : tensor<3x2xf32>, graph.name = "w", graph.trainable = true}, {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}, {graph.init = dense<0.000000e+00> : tensor<3x2xf32>, graph.name = "w.m", graph.state}, {graph.init = dense<0.000000e+00> : tensor<3x2xf32>, graph.name = "w.v", graph.state}]
// MV-SAME: res_attrs = [{graph.name = "loss"}, {graph.name = "w", graph.updates = 1 : i64}, {graph.name = "w.m", graph.updates = 3 : i64}, {graph.name = "w.v", graph.updates = 4 : i64}, {graph.name = "ampc.step", graph.updates = 2 : i64}]
// MV: %[[LR:.*]] = "graph.lr_schedule"(%arg2)
// MV: %[[U:.*]]:3 = "graph.adam_update"(%[[LR]], %arg2, %arg1, %{{[0-9]+}}, %arg3, %arg4)
// ADAM-SAME: {alpha = 9.000000e-01 : f64, beta = 0.99899999999999999 : f64, epsilon = 1.000000e-08 : f64, mode = "pytorch", norm_coefficient = 1.250000e-01 : f64, norm_coefficient_post = 0.000000e+00 : f64, weight_decay = 0.000000e+00 : f64}
// ADAMW-SAME: {alpha = 7.500000e-01 : f64, beta = 8.750000e-01 : f64, epsilon = 2.500000e-01 : f64, mode = "pytorch", norm_coefficient = 0.000000e+00 : f64, norm_coefficient_post = 0.000000e+00 : f64, weight_decay = 1.250000e-01 : f64}
// MV: "func.return"(%{{.*}}, %[[U]]#0, %[[U]]#1, %[[U]]#2, %{{.*}})

// Adagrad keeps the sum of squares; epsilon defaults to PyTorch's 1e-10
// (the op's own default is ONNX's 1e-6).
// SUM: arg_attrs = [{graph.name = "x"}, {graph.init = dense<5.000000e-01> : tensor<3x2xf32>, graph.name = "w", graph.trainable = true}, {graph.init = dense<0> : tensor<i64>, graph.name = "ampc.step", graph.state}, {graph.init = dense<0.000000e+00> : tensor<3x2xf32>, graph.name = "w.sum", graph.state}]
// SUM-SAME: res_attrs = [{graph.name = "loss"}, {graph.name = "w", graph.updates = 1 : i64}, {graph.name = "w.sum", graph.updates = 3 : i64}, {graph.name = "ampc.step", graph.updates = 2 : i64}]
// SUM: %[[LR:.*]] = "graph.lr_schedule"(%arg2)
// SUM: %[[U:.*]]:2 = "graph.adagrad_update"(%[[LR]], %arg2, %arg1, %{{[0-9]+}}, %arg3)
// ADAGRAD-SAME: {decay_factor = 0.000000e+00 : f64, epsilon = 1.000000e-10 : f64, norm_coefficient = 0.000000e+00 : f64}
// ADAGRADOPT-SAME: {decay_factor = 5.000000e-01 : f64, epsilon = 2.500000e-01 : f64, norm_coefficient = 1.250000e-01 : f64}
// SUM: "func.return"(%{{.*}}, %[[U]]#0, %[[U]]#1, %{{.*}})

func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<3x2xf32> {graph.name = "w", graph.init = dense<0.5> : tensor<3x2xf32>, graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}) {
  %0 = graph.matmul %x, %w : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %1 = graph.reduce_sum %0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x2xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
