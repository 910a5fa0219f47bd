// RUN: amp-opt %s --split-input-file --verify-diagnostics

func.func @unaligned() {
  // expected-error @+1 {{'rt.input' op has arena offset 8, which is not a non-negative multiple of 64}}
  %x = rt.input "x" at 8 : tensor<4xf32>
  return
}

// -----

func.func @param_init_type() {
  // expected-error @+1 {{'rt.param' op has initial value of type 'tensor<3xf32>' for a parameter of type 'tensor<4xf32>'}}
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<3xf32>} : tensor<4xf32>
  return
}

// -----

func.func @view_size(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rt.view' op views 'tensor<4xf32>' as 'tensor<5xf32>': element type and count must match}}
  %v = rt.view %x : tensor<4xf32> to tensor<5xf32>
  return
}

// -----

func.func @offsets_count(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op has 2 offsets for 1 results}}
  %k = rt.kernel "relu"(%x) at [0, 64] : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.relu %a : tensor<4xf32>
    rt.yield %0 : tensor<4xf32>
  }
  return
}

// -----

func.func @body_args(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op body argument 0 has type 'tensor<4xf16>' but input 0 is 'tensor<4xf32>'}}
  %k = rt.kernel "relu"(%x) at [0] : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf16>):
    %0 = graph.relu %a : tensor<4xf16>
    rt.yield %0 : tensor<4xf16>
  }
  return
}

// -----

func.func @yield_types(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op body yields 1 values whose types differ from the results}}
  %k = rt.kernel "relu"(%x) at [0] : (tensor<4xf32>) -> tensor<4xf16> {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.relu %a : tensor<4xf32>
    rt.yield %0 : tensor<4xf32>
  }
  return
}

// -----

func.func @empty_kind(%x: tensor<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op has an empty kernel kind}}
  %k = rt.kernel ""(%x) at [0] : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    rt.yield %a : tensor<4xf32>
  }
  return
}
