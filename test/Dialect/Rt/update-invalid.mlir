// RUN: amp-opt %s --split-input-file --verify-diagnostics

func.func @input_not_param() {
  %x = rt.input "x" at 0 : tensor<4xf32>
  %y = rt.input "y" at 64 : tensor<4xf32>
  // expected-error @+1 {{'rt.update' op updates a value that is not an rt.param}}
  rt.update %x, %y : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @kernel_result_not_param() {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %k = rt.kernel "relu"(%w) at [64] : (tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%a: tensor<4xf32>):
    %0 = graph.relu %a : tensor<4xf32>
    rt.yield %0 : tensor<4xf32>
  }
  // expected-error @+1 {{'rt.update' op updates a value that is not an rt.param}}
  rt.update %k, %w : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

// A view of a parameter is not the parameter.
func.func @view_of_param() {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %v = rt.view %w : tensor<4xf32> to tensor<2x2xf32>
  %x = rt.input "x" at 64 : tensor<2x2xf32>
  // expected-error @+1 {{'rt.update' op updates a value that is not an rt.param}}
  rt.update %v, %x : tensor<2x2xf32>, tensor<2x2xf32>
  return
}

// -----

func.func @block_argument(%w: tensor<4xf32>) {
  %x = rt.input "x" at 0 : tensor<4xf32>
  // expected-error @+1 {{'rt.update' op updates a value that is not an rt.param}}
  rt.update %w, %x : tensor<4xf32>, tensor<4xf32>
  return
}

// -----

func.func @type_mismatch() {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %x = rt.input "x" at 64 : tensor<4xf16>
  // expected-error @+1 {{'rt.update' op gives parameter 'w' of type 'tensor<4xf32>' a value of type 'tensor<4xf16>'}}
  rt.update %w, %x : tensor<4xf32>, tensor<4xf16>
  return
}

// -----

func.func @shape_mismatch() {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %x = rt.input "x" at 64 : tensor<2x2xf32>
  // expected-error @+1 {{'rt.update' op gives parameter 'w' of type 'tensor<4xf32>' a value of type 'tensor<2x2xf32>'}}
  rt.update %w, %x : tensor<4xf32>, tensor<2x2xf32>
  return
}

// -----

// The second update of a parameter is the one reported.
func.func @second_update() {
  %w = rt.param "w" at 0 {init = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
  %x = rt.input "x" at 64 : tensor<4xf32>
  %y = rt.input "y" at 128 : tensor<4xf32>
  rt.update %w, %x : tensor<4xf32>, tensor<4xf32>
  // expected-error @+1 {{'rt.update' op is the second update of parameter 'w'}}
  rt.update %w, %y : tensor<4xf32>, tensor<4xf32>
  return
}
