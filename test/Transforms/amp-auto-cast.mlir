// amp-auto-cast on small graphs: each level and list rule, f16 and bf16,
// parameters hoisted and cast once, shared casts, the loss kept f32,
// normalization statistics kept f32, and node overrides.

// RUN: rm -rf %t && split-file %s %t
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast=level=O1 | FileCheck %s --check-prefix=O1
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O1 dtype=bf16" | FileCheck %s --check-prefix=BF16
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast=level=O2 | FileCheck %s --check-prefix=O2
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O2 deny=softmax" | FileCheck %s --check-prefix=O2DENY
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast=level=O3 | FileCheck %s --check-prefix=O3
// RUN: amp-opt %t/softlog.mlir -amp-auto-cast=level=O2 | FileCheck %s --check-prefix=SOFTLOG
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O3 master-weights=true" | FileCheck %s --check-prefix=O3M
// RUN: amp-opt %t/norm.mlir -amp-auto-cast=level=O1 | FileCheck %s --check-prefix=NORM1
// RUN: amp-opt %t/norm.mlir '-amp-auto-cast=level=O1 deny=batch_norm_inference' | FileCheck %s --check-prefix=NORMDENY
// RUN: amp-opt %t/norm.mlir -amp-auto-cast=level=O2 | FileCheck %s --check-prefix=NORM2
// RUN: amp-opt %t/norm.mlir -amp-auto-cast=level=O3 | FileCheck %s --check-prefix=NORM3
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O1 allow=-gemm" | FileCheck %s --check-prefix=NOGEMM --implicit-check-not=amp.cast
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O1 deny=relu infer=softmax" | FileCheck %s --check-prefix=MOVED
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O1 fp32-nodes=fc2 low-nodes=softmax" | FileCheck %s --check-prefix=NODES
// RUN: amp-opt %t/instnorm.mlir -amp-auto-cast=level=O1 | FileCheck %s --check-prefix=INST1
// RUN: amp-opt %t/instnorm.mlir '-amp-auto-cast=level=O1 deny=layer_norm' | FileCheck %s --check-prefix=INSTDENY
// RUN: amp-opt %t/rnnbias.mlir -amp-auto-cast=level=O1 | FileCheck %s --check-prefix=RNNBIAS
// RUN: amp-opt %t/mlp.mlir -amp-auto-cast="level=O1 report=%t/report.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=REPORT < %t/report.json

//--- mlp.mlir

// O1-LABEL: func.func @forward(
// O1-SAME: %[[X:arg0]]: tensor<4x3xf32>
// O1-SAME: %[[LAB:arg1]]: tensor<4xi64>
// O1-SAME: %[[W1:arg2]]: tensor<5x3xf32>
// O1-SAME: %[[B1:arg3]]: tensor<5xf32>
// O1-SAME: %[[W2:arg4]]: tensor<2x5xf32>
// O1-SAME: -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "probs2"})
// Inputs and parameters are cast once; a parameter's cast sits right before
// its first user, so the low copies are not all live from the top.
// O1-NEXT: %[[XH:.*]] = amp.cast %[[X]] : tensor<4x3xf32> to tensor<4x3xf16>
// O1-NEXT: %[[W1H:.*]] = amp.cast %[[W1]] : tensor<5x3xf32> to tensor<5x3xf16>
// O1-NEXT: %[[B1H:.*]] = amp.cast %[[B1]] : tensor<5xf32> to tensor<5xf16>
// O1-NEXT: %[[H:.*]] = graph.gemm %[[XH]], %[[W1H]], %[[B1H]] {graph.accumulate = f32, trans_b = true} : (tensor<4x3xf16>, tensor<5x3xf16>, tensor<5xf16>) -> tensor<4x5xf16>
// A constant is converted, not cast: 0.1 rounds to 0.0999755859375 in f16.
// O1-NEXT: %[[C:.*]] = graph.constant dense<9.997550e-02> : tensor<5xf16>
// The infer and clear ops between the two gemms stay f16: no cast between.
// O1-NEXT: %[[A:.*]] = graph.add %[[H]], %[[C]] : (tensor<4x5xf16>, tensor<5xf16>) -> tensor<4x5xf16>
// O1-NEXT: %[[R:.*]] = graph.relu %[[A]] : tensor<4x5xf16>
// O1-NEXT: %[[W2H:.*]] = amp.cast %[[W2]] : tensor<2x5xf32> to tensor<2x5xf16>
// O1-NEXT: %[[Y:.*]] = graph.gemm %[[R]], %[[W2H]] {graph.accumulate = f32, trans_b = true}
// One cast of the logits serves both f32 users: softmax (deny) and the loss.
// O1-NEXT: %[[YF:.*]] = amp.cast %[[Y]] : tensor<4x2xf16> to tensor<4x2xf32>
// O1-NEXT: %[[S:.*]] = graph.softmax %[[YF]] {axis = 1 : i64} : tensor<4x2xf32>
// Deny spreads downstream: the mul after softmax stays f32.
// O1-NEXT: %[[M:.*]] = graph.mul %[[S]], %[[S]] : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
// O1-NEXT: %[[LOSS:.*]], %{{.*}} = graph.softmax_cross_entropy %[[YF]], %[[LAB]] : (tensor<4x2xf32>, tensor<4xi64>)
// O1-NEXT: return %[[LOSS]], %[[M]] : tensor<f32>, tensor<4x2xf32>

// BF16-LABEL: func.func @forward(
// BF16: amp.cast %arg0 : tensor<4x3xf32> to tensor<4x3xbf16>
// BF16: graph.gemm {{.*}} -> tensor<4x5xbf16>
// BF16: graph.constant dense<1.000980e-01> : tensor<5xbf16>
// BF16: graph.relu %{{.*}} : tensor<4x5xbf16>
// BF16: amp.cast %{{.*}} : tensor<4x2xbf16> to tensor<4x2xf32>
// BF16: graph.softmax %{{.*}} : tensor<4x2xf32>

// O2 runs every op but the deny list low. Softmax is on the deny list but
// computes in f32 inside (WideCompute), so at O2 it follows its f16 input,
// and so does the mul after it; the loss's input is cast up for the loss.
// O2-LABEL: func.func @forward(
// The low copies of the parameters (not of the input) are marked as the
// working copies that graph-build-training has the update write.
// O2: amp.cast %arg0 : tensor<4x3xf32> to tensor<4x3xf16>
// O2-NEXT: amp.cast %arg2 {amp.working_copy} : tensor<5x3xf32> to tensor<5x3xf16>
// O2-NEXT: amp.cast %arg3 {amp.working_copy} : tensor<5xf32> to tensor<5xf16>
// O2: graph.relu %{{.*}} : tensor<4x5xf16>
// O2-NEXT: amp.cast %arg4 {amp.working_copy} : tensor<2x5xf32> to tensor<2x5xf16>
// O2: %[[Y:.*]] = graph.gemm
// O2-NEXT: %[[YF:.*]] = amp.cast %[[Y]] : tensor<4x2xf16> to tensor<4x2xf32>
// O2-NEXT: %[[S:.*]] = graph.softmax %[[Y]] {{.*}} : tensor<4x2xf16>
// O2-NEXT: graph.mul %[[S]], %[[S]] : (tensor<4x2xf16>, tensor<4x2xf16>)
// O2: graph.softmax_cross_entropy %[[YF]]

// Put on the deny list by the user, softmax stays f32 at O2 too, and deny
// spreads to the mul it alone feeds.
// O2DENY-LABEL: func.func @forward(
// O2DENY: %[[YF:.*]] = amp.cast %{{.*}} : tensor<4x2xf16> to tensor<4x2xf32>
// O2DENY-NEXT: %[[S:.*]] = graph.softmax %[[YF]]
// O2DENY-NEXT: graph.mul %[[S]], %[[S]] : (tensor<4x2xf32>, tensor<4x2xf32>)

// O3 runs everything low but the loss, and stores parameters in f16: their
// initial values are rounded once (0.1 -> 0.0999755859375).
// O3-LABEL: func.func @forward(
// O3-SAME: %[[X:arg0]]: tensor<4x3xf32>
// O3-SAME: %[[W1:arg2]]: tensor<5x3xf16> {graph.init = dense<5.000000e-01> : tensor<5x3xf16>
// O3-SAME: %[[B1:arg3]]: tensor<5xf16> {graph.init = dense<9.997550e-02> : tensor<5xf16>
// O3-SAME: %[[W2:arg4]]: tensor<2x5xf16>
// O3-NEXT: %[[XH:.*]] = amp.cast %[[X]]
// O3-NEXT: graph.gemm %[[XH]], %[[W1]], %[[B1]]
// O3: %[[Y:.*]] = graph.gemm %{{.*}}, %[[W2]]
// O3-NEXT: %[[YF:.*]] = amp.cast %[[Y]] : tensor<4x2xf16> to tensor<4x2xf32>
// O3-NEXT: %[[S:.*]] = graph.softmax %[[Y]] {axis = 1 : i64, graph.accumulate = f32} : tensor<4x2xf16>
// O3-NEXT: %[[M:.*]] = graph.mul %[[S]], %[[S]] : (tensor<4x2xf16>, tensor<4x2xf16>)
// The result keeps its f32 type.
// O3-NEXT: %[[MF:.*]] = amp.cast %[[M]] : tensor<4x2xf16> to tensor<4x2xf32>
// O3-NEXT: %[[LOSS:.*]], %{{.*}} = graph.softmax_cross_entropy %[[YF]]
// O3-NEXT: return %[[LOSS]], %[[MF]]

// With master weights, O3 keeps f32 parameters and casts them before use.
// O3M-LABEL: func.func @forward(
// O3M-SAME: %arg2: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>
// O3M: amp.cast %arg2 {amp.working_copy} : tensor<5x3xf32> to tensor<5x3xf16>
// O3M-NEXT: amp.cast %arg3 {amp.working_copy} : tensor<5xf32> to tensor<5xf16>
// O3M: amp.cast %arg4 {amp.working_copy} : tensor<2x5xf32> to tensor<2x5xf16>
// O3M: graph.softmax %{{.*}} : tensor<4x2xf16>

// Taking gemm off the allow list leaves nothing low at level O1, so no cast.
// NOGEMM-LABEL: func.func @forward(
// NOGEMM: graph.gemm %arg0, %arg2, %arg3 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32>
// NOGEMM: graph.relu %{{.*}} : tensor<4x5xf32>

// relu moved to deny and softmax to infer: relu is f32 between two casts,
// softmax follows its (f16) input, and the loss still reads f32 logits.
// MOVED-LABEL: func.func @forward(
// MOVED: %[[A:.*]] = graph.add %{{.*}} -> tensor<4x5xf16>
// MOVED-NEXT: %[[AF:.*]] = amp.cast %[[A]] : tensor<4x5xf16> to tensor<4x5xf32>
// MOVED-NEXT: %[[R:.*]] = graph.relu %[[AF]] : tensor<4x5xf32>
// MOVED-NEXT: %[[RH:.*]] = amp.cast %[[R]] : tensor<4x5xf32> to tensor<4x5xf16>
// MOVED-NEXT: %[[W2H:.*]] = amp.cast %arg4 : tensor<2x5xf32> to tensor<2x5xf16>
// MOVED-NEXT: %[[Y:.*]] = graph.gemm %[[RH]], %[[W2H]]
// MOVED-NEXT: %[[YF:.*]] = amp.cast %[[Y]] : tensor<4x2xf16> to tensor<4x2xf32>
// MOVED-NEXT: graph.softmax %[[Y]] {axis = 1 : i64, graph.accumulate = f32} : tensor<4x2xf16>

// Nodes forced by name: fc2 (a gemm) f32, softmax f16.
// NODES-LABEL: func.func @forward(
// NODES: %[[R:.*]] = graph.relu %{{.*}} : tensor<4x5xf16>
// NODES-NEXT: %[[RF:.*]] = amp.cast %[[R]] : tensor<4x5xf16> to tensor<4x5xf32>
// NODES-NEXT: %[[Y:.*]] = graph.gemm %[[RF]], %arg4 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>) -> tensor<4x2xf32>
// NODES-NEXT: %[[YH:.*]] = amp.cast %[[Y]] : tensor<4x2xf32> to tensor<4x2xf16>
// NODES-NEXT: graph.softmax %[[YH]] {axis = 1 : i64, graph.accumulate = f32} : tensor<4x2xf16>

// REPORT: "casts_inserted": 5,
// REPORT: "dtype": "f16",
// REPORT: "level": "O1",
// REPORT: "node": "fc1",
// REPORT-NEXT: "op": "gemm",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "rule": "allow list"
// REPORT: "node": "add",
// REPORT-NEXT: "op": "add",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "rule": "infer list: every activation input is f16"
// REPORT: "node": "relu",
// REPORT-NEXT: "op": "relu",
// REPORT-NEXT: "precision": "f16",
// REPORT-NEXT: "rule": "clear list: every activation input is f16"
// REPORT: "node": "softmax",
// REPORT-NEXT: "op": "softmax",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "rule": "deny list"
// REPORT: "node": "square",
// REPORT-NEXT: "op": "mul",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "rule": "infer list: input from graph.softmax (node 'softmax') is f32"
// REPORT: "node": "loss",
// REPORT-NEXT: "op": "softmax_cross_entropy",
// REPORT-NEXT: "precision": "f32",
// REPORT-NEXT: "rule": "loss: the loss and what follows it stay f32"
// REPORT: "ops_by_precision": {
// REPORT-NEXT: "f16": 4,
// REPORT-NEXT: "f32": 3
// REPORT: "name": "w1",
// REPORT-NEXT: "stored": "f32",
// REPORT-NEXT: "working": [
// REPORT-NEXT: "f16"

func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %labels: tensor<4xi64> {graph.name = "labels"},
                   %w1: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>, graph.name = "w1", graph.trainable = true},
                   %b1: tensor<5xf32> {graph.init = dense<1.000000e-01> : tensor<5xf32>, graph.name = "b1", graph.trainable = true},
                   %w2: tensor<2x5xf32> {graph.init = dense<2.500000e-01> : tensor<2x5xf32>, graph.name = "w2", graph.trainable = true})
    -> (tensor<f32> {graph.name = "loss"}, tensor<4x2xf32> {graph.name = "probs2"}) {
  %h = graph.gemm %x, %w1, %b1 {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc("fc1")
  %c = graph.constant dense<1.000000e-01> : tensor<5xf32> loc("shift")
  %a = graph.add %h, %c : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32> loc("add")
  %r = graph.relu %a : tensor<4x5xf32> loc("relu")
  %y = graph.gemm %r, %w2 {trans_b = true} : (tensor<4x5xf32>, tensor<2x5xf32>) -> tensor<4x2xf32> loc("fc2")
  %s = graph.softmax %y {axis = 1 : i64} : tensor<4x2xf32> loc("softmax")
  %m = graph.mul %s, %s : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32> loc("square")
  %loss, %lp = graph.softmax_cross_entropy %y, %labels : (tensor<4x2xf32>, tensor<4xi64>) -> (tensor<f32>, tensor<4x2xf32>) loc("loss")
  return %loss, %m : tensor<f32>, tensor<4x2xf32>
}

//--- norm.mlir

// At O1 batch norm is infer: its input is the conv's f16 result, so it
// normalizes f16 activations (scale, shift and statistics stay f32), the
// relu after it stays f16, and nothing is cast between the convs. The
// weight k is cast once for both convs.
// NORM1-LABEL: func.func @forward(
// NORM1-NEXT: %[[XH:.*]] = amp.cast %arg0
// NORM1-NEXT: %[[KH:.*]] = amp.cast %arg1 : tensor<3x3x1x1xf32> to tensor<3x3x1x1xf16>
// NORM1-NEXT: %[[C:.*]] = graph.conv2d %[[XH]], %[[KH]] {dilations = array<i64: 1, 1>, graph.accumulate = f32
// NORM1-NEXT: %[[N:.*]] = graph.batch_norm_inference %[[C]], %arg2, %arg3, %arg4, %arg5 {{.*}} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf16>
// NORM1-NEXT: %[[R:.*]] = graph.relu %[[N]] : tensor<2x3x4x4xf16>
// NORM1-NEXT: %[[D:.*]] = graph.conv2d %[[R]], %[[KH]]
// NORM1-NEXT: %[[DF:.*]] = amp.cast %[[D]]
// NORM1-NEXT: return %[[DF]]

// Put on the deny list, batch norm runs f32 and deny spreads to the relu
// after it; the one cast back to f16 sits before the second conv.
// NORMDENY-LABEL: func.func @forward(
// NORMDENY: %[[C:.*]] = graph.conv2d
// NORMDENY-NEXT: %[[CF:.*]] = amp.cast %[[C]] : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
// NORMDENY-NEXT: %[[N:.*]] = graph.batch_norm_inference %[[CF]], %arg2, %arg3, %arg4, %arg5 {{.*}} -> tensor<2x3x4x4xf32>
// NORMDENY-NEXT: %[[R:.*]] = graph.relu %[[N]] : tensor<2x3x4x4xf32>
// NORMDENY-NEXT: %[[RH:.*]] = amp.cast %[[R]] : tensor<2x3x4x4xf32> to tensor<2x3x4x4xf16>
// NORMDENY-NEXT: graph.conv2d %[[RH]]

// NORM2-LABEL: func.func @forward(
// NORM2: graph.batch_norm_inference %{{.*}} -> tensor<2x3x4x4xf16>
// NORM2-NEXT: graph.relu %{{.*}} : tensor<2x3x4x4xf16>

// At O3 batch norm runs on f16 activations, but its scale, shift and
// statistics stay f32 (and so stay stored f32); k is stored f16.
// NORM3-LABEL: func.func @forward(
// NORM3-SAME: %arg1: tensor<3x3x1x1xf16>
// NORM3-SAME: %arg2: tensor<3xf32>
// NORM3-SAME: %arg5: tensor<3xf32>
// NORM3-NEXT: %[[XH:.*]] = amp.cast %arg0
// NORM3-NEXT: %[[C:.*]] = graph.conv2d %[[XH]], %arg1
// NORM3-NEXT: %[[N:.*]] = graph.batch_norm_inference %[[C]], %arg2, %arg3, %arg4, %arg5 {epsilon = 1.000000e-05 : f64} : (tensor<2x3x4x4xf16>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf16>
// NORM3-NEXT: graph.relu %[[N]] : tensor<2x3x4x4xf16>

func.func @forward(%x: tensor<2x3x4x4xf32> {graph.name = "x"},
                   %k: tensor<3x3x1x1xf32> {graph.init = dense<5.000000e-01> : tensor<3x3x1x1xf32>, graph.name = "k", graph.trainable = true},
                   %scale: tensor<3xf32> {graph.init = dense<1.000000e+00> : tensor<3xf32>, graph.name = "bn.weight", graph.trainable = true},
                   %bias: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.bias", graph.trainable = true},
                   %mean: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "bn.running_mean"},
                   %var: tensor<3xf32> {graph.init = dense<1.000000e+00> : tensor<3xf32>, graph.name = "bn.running_var"})
    -> (tensor<2x3x4x4xf32> {graph.name = "y"}) {
  %c = graph.conv2d %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> loc("conv")
  %n = graph.batch_norm_inference %c, %scale, %bias, %mean, %var {epsilon = 1.000000e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x4xf32> loc("bn")
  %r = graph.relu %n : tensor<2x3x4x4xf32> loc("relu")
  %d = graph.conv2d %r, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> loc("conv2")
  return %d : tensor<2x3x4x4xf32>
}

//--- softlog.mlir

// At O2 a softmax whose result feeds an op that stays f32 (here a log, on
// the deny list) stays f32 itself: rounded to f16, its probabilities below
// 6e-8 would become 0 and the log -inf.
// SOFTLOG-LABEL: func.func @forward(
// SOFTLOG: %[[Y:.*]] = graph.gemm {{.*}} -> tensor<4x3xf16>
// SOFTLOG-NEXT: %[[YF:.*]] = amp.cast %[[Y]] : tensor<4x3xf16> to tensor<4x3xf32>
// SOFTLOG-NEXT: %[[S:.*]] = graph.softmax %[[YF]] {{.*}} : tensor<4x3xf32>
// SOFTLOG-NEXT: graph.log %[[S]] : tensor<4x3xf32>
func.func @forward(%x: tensor<4x5xf32> {graph.name = "x"},
                   %w: tensor<3x5xf32> {graph.name = "w", graph.init = dense<5.000000e-01> : tensor<3x5xf32>, graph.trainable = true})
    -> (tensor<4x3xf32> {graph.name = "y"}) {
  %y = graph.gemm %x, %w {trans_b = true} : (tensor<4x5xf32>, tensor<3x5xf32>) -> tensor<4x3xf32> loc("fc")
  %s = graph.softmax %y {axis = 1 : i64} : tensor<4x3xf32> loc("softmax")
  %l = graph.log %s : tensor<4x3xf32> loc("log")
  return %l : tensor<4x3xf32>
}

//--- instnorm.mlir

// The layer norm an ONNX InstanceNormalization becomes (graph.instance_norm)
// follows its f16 input at O1, as autocast runs instance_norm; its per-channel
// scale and shift (reshaped parameters, made from parameters alone) do not
// decide the affine's precision, so the affine and the relu stay f16 too
// and nothing is cast between the convs. A LayerNormalization's layer norm
// (no mark) stays f32.
// INST1-LABEL: func.func @forward(
// INST1: %[[C:.*]] = graph.conv2d {{.*}} -> tensor<2x3x4x4xf16>
// INST1-NEXT: %[[N:[a-z0-9_]+]], %{{.*}}, %{{.*}} = graph.layer_norm %[[C]], %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64, graph.accumulate = f32, graph.instance_norm} : (tensor<2x3x4x4xf16>, tensor<4x4xf32>) -> (tensor<2x3x4x4xf16>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>)
// INST1: %[[M:.*]] = graph.mul %[[N]], %{{.*}} : (tensor<2x3x4x4xf16>, tensor<3x1x1xf16>) -> tensor<2x3x4x4xf16>
// INST1: %[[A:.*]] = graph.add %[[M]], %{{.*}} : (tensor<2x3x4x4xf16>, tensor<3x1x1xf16>) -> tensor<2x3x4x4xf16>
// INST1-NEXT: %[[R:.*]] = graph.relu %[[A]] : tensor<2x3x4x4xf16>
// INST1-NEXT: %[[D:.*]] = graph.conv2d %[[R]]
// INST1: amp.cast %[[D]] : tensor<2x3x4x4xf16> to tensor<2x3x4x4xf32>
// INST1: graph.layer_norm %{{.*}} {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<4x4xf32>)

// On the deny list by the user's choice, the instance norm stays f32.
// INSTDENY-LABEL: func.func @forward(
// INSTDENY: graph.layer_norm %{{.*}} graph.instance_norm} : (tensor<2x3x4x4xf32>, tensor<4x4xf32>)
func.func @forward(%x: tensor<2x3x4x4xf32> {graph.name = "x"},
                   %k: tensor<3x3x1x1xf32> {graph.init = dense<5.000000e-01> : tensor<3x3x1x1xf32>, graph.name = "k", graph.trainable = true},
                   %g: tensor<3xf32> {graph.init = dense<1.000000e+00> : tensor<3xf32>, graph.name = "in.scale", graph.trainable = true},
                   %b: tensor<3xf32> {graph.init = dense<0.000000e+00> : tensor<3xf32>, graph.name = "in.bias", graph.trainable = true})
    -> (tensor<2x3x4x4xf32> {graph.name = "y"}) {
  %ones = graph.constant dense<1.000000e+00> : tensor<4x4xf32>
  %c = graph.conv2d %x, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> loc("conv")
  %n:3 = graph.layer_norm %c, %ones {axis = 2 : i64, epsilon = 1.000000e-05 : f64, graph.instance_norm} : (tensor<2x3x4x4xf32>, tensor<4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) loc("in")
  %gs = graph.reshape %g : tensor<3xf32> to tensor<3x1x1xf32>
  %m = graph.mul %n#0, %gs : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %bs = graph.reshape %b : tensor<3xf32> to tensor<3x1x1xf32>
  %a = graph.add %m, %bs : (tensor<2x3x4x4xf32>, tensor<3x1x1xf32>) -> tensor<2x3x4x4xf32>
  %r = graph.relu %a : tensor<2x3x4x4xf32> loc("relu")
  %d = graph.conv2d %r, %k {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<2x3x4x4xf32>, tensor<3x3x1x1xf32>) -> tensor<2x3x4x4xf32> loc("conv2")
  %l:3 = graph.layer_norm %d, %ones {axis = 2 : i64, epsilon = 1.000000e-05 : f64} : (tensor<2x3x4x4xf32>, tensor<4x4xf32>) -> (tensor<2x3x4x4xf32>, tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) loc("ln")
  return %l#0 : tensor<2x3x4x4xf32>
}

//--- rnnbias.mlir

// An RNN's biases summed from two parameters (as the LSTM lowering sums
// ONNX's Wb and Rb) are made from parameters alone: like a parameter, the
// sum is cast once where a low op reads it and does not make the add after
// the f16 gemm f32, so the cell's tanh stays f16 as well.
// RNNBIAS-LABEL: func.func @forward(
// RNNBIAS: %[[S:.*]] = graph.add %arg2, %arg3 : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
// RNNBIAS-NEXT: %[[SH:.*]] = amp.cast %[[S]] : tensor<5xf32> to tensor<5xf16>
// RNNBIAS: %[[G:.*]] = graph.gemm {{.*}} -> tensor<4x5xf16>
// RNNBIAS: %[[A:.*]] = graph.add %[[G]], %[[SH]] : (tensor<4x5xf16>, tensor<5xf16>) -> tensor<4x5xf16>
// RNNBIAS-NEXT: graph.tanh %[[A]] : tensor<4x5xf16>
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>, graph.name = "w", graph.trainable = true},
                   %wb: tensor<5xf32> {graph.init = dense<1.000000e-01> : tensor<5xf32>, graph.name = "wb", graph.trainable = true},
                   %rb: tensor<5xf32> {graph.init = dense<2.000000e-01> : tensor<5xf32>, graph.name = "rb", graph.trainable = true})
    -> (tensor<4x5xf32> {graph.name = "h"}) {
  %s = graph.add %wb, %rb : (tensor<5xf32>, tensor<5xf32>) -> tensor<5xf32>
  %g = graph.gemm %x, %w {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32>
  %a = graph.add %g, %s : (tensor<4x5xf32>, tensor<5xf32>) -> tensor<4x5xf32>
  %h = graph.tanh %a : tensor<4x5xf32>
  return %h : tensor<4x5xf32>
}
