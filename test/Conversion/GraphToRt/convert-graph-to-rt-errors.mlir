// RUN: %amp-opt %s -split-input-file --convert-graph-to-rt -verify-diagnostics
//
// Sizes convert-graph-to-rt refuses with no budget: a value whose element
// count or bytes overflow int64, and an arena whose size would.

// 2^40 x 2^40 elements.
// expected-error @+1 {{graph input 'x' of type 'tensor<1099511627776x1099511627776xf32>' has 1099511627776 x 1099511627776 elements, more than int64 can count}}
func.func @huge(%x: tensor<1099511627776x1099511627776xf32> {graph.name = "x"})
    -> (tensor<1099511627776x1099511627776xf32> {graph.name = "y"}) {
  %0 = graph.relu %x : tensor<1099511627776x1099511627776xf32>
  return %0 : tensor<1099511627776x1099511627776xf32>
}

// -----

// 2^61 f32 elements fit int64; their bytes do not.
func.func @wide(%x: tensor<1xf32> {graph.name = "x"})
    -> (tensor<2305843009213693952xf32> {graph.name = "y"}) {
  // expected-error @+1 {{(graph.broadcast_to) result 0 of type 'tensor<2305843009213693952xf32>' has 2305843009213693952 elements of 4 bytes, more bytes than int64 can count}}
  %0 = graph.broadcast_to %x : tensor<1xf32> to tensor<2305843009213693952xf32>
  return %0 : tensor<2305843009213693952xf32>
}

// -----

// Two values of 2^62 bytes each: their sum does not fit an arena.
// expected-error @+1 {{function 'sum' needs an arena of more bytes than int64 can count}}
func.func @sum(%a: tensor<1152921504606846976xf32> {graph.name = "a"},
               %b: tensor<1152921504606846976xf32> {graph.name = "b"})
    -> (tensor<1152921504606846976xf32> {graph.name = "c"}) {
  %0 = graph.add %a, %b : (tensor<1152921504606846976xf32>, tensor<1152921504606846976xf32>) -> tensor<1152921504606846976xf32>
  return %0 : tensor<1152921504606846976xf32>
}
