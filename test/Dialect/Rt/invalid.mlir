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

// -----

// A gemm kernel's epilogue (runtime/GemmEpilogue.h) fixes its body.
func.func @unknown_epilogue(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op has epilogue 'swish', which is none of relu, gelu, gelu_aux, drelu, dgelu, bgrad}}
  %k = rt.kernel "gemm"(%x, %x) at [0] {epilogue = "swish"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    rt.yield %0 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_kind(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op of kind 'relu' has epilogue 'relu': only gemm kernels have epilogues}}
  %k = rt.kernel "relu"(%x) at [0] {epilogue = "relu"} : (tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>):
    %0 = graph.relu %a : tensor<2x2xf32>
    rt.yield %0 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_body(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'relu' must compute graph.gemm then graph.relu}}
  %k = rt.kernel "gemm"(%x, %x) at [0] {epilogue = "relu"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = graph.gelu %0 : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_bias(%x: tensor<2x2xf32>, %c: tensor<2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'drelu' has a gemm with c, which this epilogue does not add}}
  %k = rt.kernel "gemm"(%x, %x, %c, %x) at [0] {epilogue = "drelu"} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>, %bc: tensor<2xf32>, %y: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b, %bc : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
    %1 = graph.relu_grad %0, %y : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_counts(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'gelu_aux' must have 2 inputs and 2 results, has 2 and 1}}
  %k = rt.kernel "gemm"(%x, %x) at [0] {epilogue = "gelu_aux"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = graph.gelu %0 : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_wiring(%x: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'relu': graph.relu does not read or yield what the epilogue says}}
  %k = rt.kernel "gemm"(%x, %x) at [0] {epilogue = "relu"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = graph.relu %a : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}

// -----

func.func @epilogue_gemm_operands(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'relu': the gemm must take the leading inputs in order}}
  %k = rt.kernel "gemm"(%x, %y) at [0] {epilogue = "relu"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %b, %a : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = graph.relu %0 : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}

// -----

// A gemm with c over a body of two arguments: c cannot be a third input.
func.func @epilogue_gemm_more_operands_than_inputs(%x: tensor<2x2xf32>, %y: tensor<2x2xf32>) {
  // expected-error @+1 {{'rt.kernel' op with epilogue 'relu': the gemm must take the leading inputs in order}}
  %k = rt.kernel "gemm"(%x, %y) at [0] {epilogue = "relu"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32> {
  ^bb0(%a: tensor<2x2xf32>, %b: tensor<2x2xf32>):
    %0 = graph.gemm %a, %b, %b : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
    %1 = graph.relu %0 : tensor<2x2xf32>
    rt.yield %1 : tensor<2x2xf32>
  }
  return
}
