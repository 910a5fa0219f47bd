// Every bad amp-auto-cast option is refused with a message that names the
// option and what is wrong with it.

// RUN: rm -rf %t && split-file %s %t
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=level=O4 2>&1 | FileCheck %s --check-prefix=LEVEL
// LEVEL: for the --level option: 'O4' is not O0, O1, O2 or O3
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=dtype=f8 2>&1 | FileCheck %s --check-prefix=DTYPE
// DTYPE: for the --dtype option: 'f8' is not f16 or bf16
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=allow=convolution 2>&1 | FileCheck %s --check-prefix=OPNAME
// OPNAME: error: amp-auto-cast: option 'allow' names 'convolution', which is not a graph op on the AMP lists (known: abs, add,
// OPNAME-SAME: conv2d,
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=deny=cast 2>&1 | FileCheck %s --check-prefix=CAST
// CAST: error: amp-auto-cast: option 'deny' names 'cast', which is not a graph op on the AMP lists (a model's own casts and constants keep their types)
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=allow=-softmax 2>&1 | FileCheck %s --check-prefix=REMOVE
// REMOVE: error: amp-auto-cast: option 'allow' removes 'softmax', which is on the deny list, not the allow list
// RUN: not amp-opt %t/f.mlir -amp-auto-cast="allow=softmax deny=softmax" 2>&1 | FileCheck %s --check-prefix=TWOLISTS
// TWOLISTS: error: amp-auto-cast: 'softmax' is named by option 'allow' and by option 'deny'; an op can be on one AMP list only
// RUN: not amp-opt %t/f.mlir -amp-auto-cast="infer=relu clear=relu" 2>&1 | FileCheck %s --check-prefix=TWOLISTS2
// TWOLISTS2: error: amp-auto-cast: 'relu' is named by option 'infer' and by option 'clear'; an op can be on one AMP list only
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=fp32-nodes=fc9 2>&1 | FileCheck %s --check-prefix=NODE
// NODE: error: amp-auto-cast: option 'fp32-nodes' names node 'fc9', which no op of @forward comes from (nodes: fc1, relu, softmax)
// RUN: not amp-opt %t/f.mlir -amp-auto-cast="fp32-nodes=fc1 low-nodes=fc1" 2>&1 | FileCheck %s --check-prefix=BOTH
// BOTH: error: amp-auto-cast: node 'fc1' is in both fp32-nodes and low-nodes
// RUN: not amp-opt %t/f.mlir -amp-auto-cast=report=%t/no/such/dir/r.json 2>&1 | FileCheck %s --check-prefix=REPORT
// REPORT: error: amp-auto-cast: cannot write the AMP report '{{.*}}no/such/dir/r.json': {{.*}}
// RUN: not amp-opt %t/noforward.mlir -amp-auto-cast 2>&1 | FileCheck %s --check-prefix=NOFWD
// NOFWD: error: amp-auto-cast: the module has no @forward function with a body; run it before graph-build-training

//--- f.mlir
func.func @forward(%x: tensor<4x3xf32> {graph.name = "x"},
                   %w: tensor<5x3xf32> {graph.init = dense<5.000000e-01> : tensor<5x3xf32>, graph.name = "w", graph.trainable = true})
    -> tensor<4x5xf32> {
  %h = graph.gemm %x, %w {trans_b = true} : (tensor<4x3xf32>, tensor<5x3xf32>) -> tensor<4x5xf32> loc("fc1")
  %r = graph.relu %h : tensor<4x5xf32> loc("relu")
  %s = graph.softmax %r {axis = 1 : i64} : tensor<4x5xf32> loc("softmax")
  return %s : tensor<4x5xf32>
}

//--- noforward.mlir
func.func @train_step(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}
