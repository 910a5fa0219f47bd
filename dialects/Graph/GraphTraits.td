//===- GraphTraits.td - what passes ask of a graph op ------*- tablegen -*-===//
//
// Facts about an op that passes need and that used to be class lists in
// the passes (isa<A, B, ...>): each op states them once, where it is
// declared, and a pass asks op->hasTrait<graph::OpTrait::X>(). The C++
// side is GraphTraits.h; OptimizerUpdateOpInterface.td has the updates'.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_DIALECTS_GRAPH_GRAPHTRAITS_TD
#define AMPC_DIALECTS_GRAPH_GRAPHTRAITS_TD

include "mlir/IR/OpBase.td"

class Graph_Trait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::ampc::graph::OpTrait";
}

// One result; element i is a function of element i of each operand after
// numpy broadcasting (nothing else). convert-graph-to-rt fuses chains of
// these into one kernel, and the planner may write the result over an
// input read for the last time.
def Graph_Fusible : Graph_Trait<"Fusible">;

// Sums many products or many elements: contractions, average pooling,
// sum/mean reductions, softmax, losses and normalization, and the
// gradients that sum. In f16/bf16 such an op carries graph.accumulate = f32.
def Graph_Accumulating : Graph_Trait<"Accumulating">;

// Takes and returns f16/bf16 data but computes in f32 or wider inside
// (its sums, exponentials and statistics) and rounds each result once:
// layer norm and softmax. At O2 amp-auto-cast lets such an op follow its
// input although it is on the deny list, as apex's O2 and the fused
// layer-norm and attention kernels run it; at O1 the deny list holds.
def Graph_WideCompute : Graph_Trait<"WideCompute">;

// Built by graph-build-training for the backward pass; never in a model's
// @forward, so the AMP lists do not name it.
def Graph_Backward : Graph_Trait<"Backward">;

// Part of the optimizer (the updates and the learning-rate schedule):
// built by graph-build-training after the backward pass.
def Graph_Optimizer : Graph_Trait<"Optimizer">;

#endif // AMPC_DIALECTS_GRAPH_GRAPHTRAITS_TD
