// RUN: %amp-opt %s -split-input-file --convert-graph-to-rt="memory-budget=524288" -verify-diagnostics
// RUN: %amp-opt %s -split-input-file --convert-graph-to-rt="memory-budget=1048576" 2>&1 | FileCheck %s --check-prefix=LARGER
// RUN: %amp-opt %s -split-input-file --convert-graph-to-rt 2>&1 | FileCheck %s --check-prefix=LARGER
//
// With memory-budget (here 512 KiB), a value or a planned arena larger than
// the budget is an error naming it and the sizes. Under a 1 MiB budget, or
// none, both compile (LARGER).

// One value larger than the budget: 1 MiB of f32 under 512 KiB.
// LARGER-LABEL: func.func @one_value()
// LARGER-SAME: rt.arena_size = 1048576
// expected-error @+1 {{graph input 'x' of type 'tensor<512x512xf32>' has 262144 elements, 1 MiB (1048576 bytes), more than the memory budget of 512 KiB (524288 bytes, --memory-budget)}}
func.func @one_value(%x: tensor<512x512xf32> {graph.name = "x"})
    -> (tensor<512x512xf32> {graph.name = "y"}) {
  %0 = graph.relu %x : tensor<512x512xf32>
  return %0 : tensor<512x512xf32>
}

// -----

// Each value fits, the arena of all three does not: 768 KiB.
// LARGER-LABEL: func.func @arena()
// LARGER-SAME: rt.arena_size = 786432
// expected-error @+1 {{function 'arena' needs an arena of 768 KiB (786432 bytes), more than the memory budget of 512 KiB (524288 bytes, --memory-budget); its largest values: graph input 'x' (256 KiB), parameter 'w' (256 KiB), (kernel matmul) result 0 (256 KiB)}}
func.func @arena(%x: tensor<256x256xf32> {graph.name = "x"},
                 %w: tensor<256x256xf32> {graph.name = "w", graph.init = dense<1.0> : tensor<256x256xf32>})
    -> (tensor<256x256xf32> {graph.name = "y"}) {
  %0 = graph.matmul %x, %w : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}
