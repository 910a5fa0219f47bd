// amp-fold-casts removes amp.cast round trips through a wider type, shortens
// chains whose first steps are exact, shares the casts of one value to one
// type, converts casts of constants and erases casts nobody uses. It leaves
// graph.cast (a cast the model wrote) alone. Every function of the module is
// folded, and a second run changes nothing.

// RUN: amp-opt %s -amp-fold-casts | FileCheck %s
// RUN: amp-opt %s -amp-fold-casts | amp-opt -amp-fold-casts | FileCheck %s
// RUN: amp-opt %s -amp-fold-casts -o %t.once.mlir
// RUN: amp-opt %t.once.mlir -amp-fold-casts -o %t.twice.mlir
// RUN: diff %t.once.mlir %t.twice.mlir

// f32 holds every f16 and every bf16: the round trips are the identity.
// CHECK-LABEL: func.func @exact_round_trips(
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>, %[[B:.*]]: tensor<4xbf16>)
// CHECK-NEXT: return %[[H]], %[[B]]
func.func @exact_round_trips(%h: tensor<4xf16>, %b: tensor<4xbf16>)
    -> (tensor<4xf16>, tensor<4xbf16>) {
  %h32 = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %h16 = amp.cast %h32 : tensor<4xf32> to tensor<4xf16>
  %b32 = amp.cast %b : tensor<4xbf16> to tensor<4xf32>
  %b16 = amp.cast %b32 : tensor<4xf32> to tensor<4xbf16>
  return %h16, %b16 : tensor<4xf16>, tensor<4xbf16>
}

// Several exact steps fold as one.
// CHECK-LABEL: func.func @exact_chain(
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>)
// CHECK-NEXT: return %[[H]]
func.func @exact_chain(%h: tensor<4xf16>) -> tensor<4xf16> {
  %0 = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %1 = amp.cast %0 : tensor<4xf32> to tensor<4xf64>
  %2 = amp.cast %1 : tensor<4xf64> to tensor<4xf16>
  return %2 : tensor<4xf16>
}

// Through a narrower type the round trip rounds, and neither of f16 and bf16
// holds the other: all kept.
// CHECK-LABEL: func.func @rounding_round_trips(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>, %[[H:.*]]: tensor<4xf16>, %[[B:.*]]: tensor<4xbf16>)
// CHECK-NEXT: %[[XH:.*]] = amp.cast %[[X]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[XF:.*]] = amp.cast %[[XH]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[HB:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: %[[HH:.*]] = amp.cast %[[HB]] : tensor<4xbf16> to tensor<4xf16>
// CHECK-NEXT: %[[BH:.*]] = amp.cast %[[B]] : tensor<4xbf16> to tensor<4xf16>
// CHECK-NEXT: %[[BB:.*]] = amp.cast %[[BH]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: return %[[XF]], %[[HH]], %[[BB]]
func.func @rounding_round_trips(%x: tensor<4xf32>, %h: tensor<4xf16>,
                                %b: tensor<4xbf16>)
    -> (tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>) {
  %0 = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = amp.cast %0 : tensor<4xf16> to tensor<4xf32>
  %2 = amp.cast %h : tensor<4xf16> to tensor<4xbf16>
  %3 = amp.cast %2 : tensor<4xbf16> to tensor<4xf16>
  %4 = amp.cast %b : tensor<4xbf16> to tensor<4xf16>
  %5 = amp.cast %4 : tensor<4xf16> to tensor<4xbf16>
  return %1, %3, %5 : tensor<4xf32>, tensor<4xf16>, tensor<4xbf16>
}

// f16 -> f32 -> bf16 is f16 -> bf16: only the last step rounds. The f32 cast
// stays only where something else reads it.
// CHECK-LABEL: func.func @shortened(
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>, %[[G:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[HB:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: %[[G32:.*]] = amp.cast %[[G]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[G32]]
// CHECK-NEXT: %[[GB:.*]] = amp.cast %[[G]] : tensor<4xf16> to tensor<4xbf16>
// CHECK-NEXT: return %[[HB]], %[[R]], %[[GB]]
func.func @shortened(%h: tensor<4xf16>, %g: tensor<4xf16>)
    -> (tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>) {
  %h32 = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %hb = amp.cast %h32 : tensor<4xf32> to tensor<4xbf16>
  %g32 = amp.cast %g : tensor<4xf16> to tensor<4xf32>
  %r = graph.relu %g32 : tensor<4xf32>
  %gb = amp.cast %g32 : tensor<4xf32> to tensor<4xbf16>
  return %hb, %r, %gb : tensor<4xbf16>, tensor<4xf32>, tensor<4xbf16>
}

// Two casts of one result to f16 become one, right after the result's
// definition, and both users read it; the cast to bf16 is not a duplicate.
// CHECK-LABEL: func.func @duplicates(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[Y:.*]] = graph.relu %[[X]]
// CHECK-NEXT: %[[YH:.*]] = amp.cast %[[Y]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[Z:.*]] = graph.tanh %[[Y]]
// CHECK-NEXT: %[[A:.*]] = graph.relu %[[YH]]
// CHECK-NEXT: %[[YB:.*]] = amp.cast %[[Y]] : tensor<4xf32> to tensor<4xbf16>
// CHECK-NEXT: %[[B:.*]] = graph.sigmoid %[[YH]]
// CHECK-NEXT: return %[[Z]], %[[A]], %[[B]], %[[YB]]
func.func @duplicates(%x: tensor<4xf32>)
    -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf16>, tensor<4xbf16>) {
  %y = graph.relu %x : tensor<4xf32>
  %z = graph.tanh %y : tensor<4xf32>
  %c1 = amp.cast %y : tensor<4xf32> to tensor<4xf16>
  %a = graph.relu %c1 : tensor<4xf16>
  %cb = amp.cast %y : tensor<4xf32> to tensor<4xbf16>
  %c2 = amp.cast %y : tensor<4xf32> to tensor<4xf16>
  %b = graph.sigmoid %c2 : tensor<4xf16>
  return %z, %a, %b, %cb
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf16>, tensor<4xbf16>
}

// Shared casts of arguments go to the top of the block, after the casts of
// arguments already there, in the order they are met.
// CHECK-LABEL: func.func @argument_duplicates(
// CHECK-SAME: %[[P:.*]]: tensor<4xf32>, %[[Q:.*]]: tensor<4xf32>, %[[R:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[PH:.*]] = amp.cast %[[P]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[RH:.*]] = amp.cast %[[R]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[QH:.*]] = amp.cast %[[Q]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[A:.*]] = graph.relu %[[PH]]
// CHECK-NEXT: %[[B:.*]] = graph.add %[[A]], %[[RH]]
// CHECK-NEXT: %[[C:.*]] = graph.add %[[B]], %[[QH]]
// CHECK-NEXT: %[[D:.*]] = graph.add %[[C]], %[[RH]]
// CHECK-NEXT: %[[E:.*]] = graph.add %[[D]], %[[QH]]
// CHECK-NEXT: return %[[E]]
func.func @argument_duplicates(%p: tensor<4xf32>, %q: tensor<4xf32>,
                               %r: tensor<4xf32>) -> tensor<4xf16> {
  %ph = amp.cast %p : tensor<4xf32> to tensor<4xf16>
  %a = graph.relu %ph : tensor<4xf16>
  %r1 = amp.cast %r : tensor<4xf32> to tensor<4xf16>
  %b = graph.add %a, %r1 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %q1 = amp.cast %q : tensor<4xf32> to tensor<4xf16>
  %c = graph.add %b, %q1 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %r2 = amp.cast %r : tensor<4xf32> to tensor<4xf16>
  %d = graph.add %c, %r2 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %q2 = amp.cast %q : tensor<4xf32> to tensor<4xf16>
  %e = graph.add %d, %q2 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  return %e : tensor<4xf16>
}

// A round trip made of shared casts folds too: after the duplicates merge,
// the f32 cast of %h reaches back to %h itself.
// CHECK-LABEL: func.func @duplicate_round_trip(
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[F:.*]] = amp.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[F]]
// CHECK-NEXT: return %[[R]], %[[H]]
func.func @duplicate_round_trip(%h: tensor<4xf16>)
    -> (tensor<4xf32>, tensor<4xf16>) {
  %f1 = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %r = graph.relu %f1 : tensor<4xf32>
  %f2 = amp.cast %h : tensor<4xf16> to tensor<4xf32>
  %back = amp.cast %f2 : tensor<4xf32> to tensor<4xf16>
  return %r, %back : tensor<4xf32>, tensor<4xf16>
}

// Casts of constants become constants, rounded to nearest even: 0.1 is
// 0.0999755859375 in f16 and 0.10009765625 in bf16, 2049 (a tie) rounds down
// to 2048 and 2051 up to 2052, 1e5 overflows to inf. Two casts of one
// constant to one type give one constant, in the place of the original.
// CHECK-LABEL: func.func @constants(
// CHECK-NEXT: %[[SH:.*]] = graph.constant dense<9.997550e-02> : tensor<4xf16>
// CHECK-NEXT: %[[SB:.*]] = graph.constant dense<1.000980e-01> : tensor<4xbf16>
// CHECK-NEXT: %[[VH:.*]] = graph.constant dense<[9.997550e-02, 2.048000e+03, 2.052000e+03, 0x7C00]> : tensor<4xf16>
// CHECK-NEXT: %[[A:.*]] = graph.add %[[SH]], %[[VH]]
// CHECK-NEXT: %[[B:.*]] = graph.add %[[A]], %[[SH]]
// CHECK-NEXT: return %[[B]], %[[SB]]
func.func @constants() -> (tensor<4xf16>, tensor<4xbf16>) {
  %s = graph.constant dense<0.1> : tensor<4xf32>
  %v = graph.constant dense<[0.1, 2049.0, 2051.0, 1.0e5]> : tensor<4xf32>
  %sh = amp.cast %s : tensor<4xf32> to tensor<4xf16>
  %vh = amp.cast %v : tensor<4xf32> to tensor<4xf16>
  %a = graph.add %sh, %vh : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %sh2 = amp.cast %s : tensor<4xf32> to tensor<4xf16>
  %b = graph.add %a, %sh2 : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xf16>
  %sb = amp.cast %s : tensor<4xf32> to tensor<4xbf16>
  return %b, %sb : tensor<4xf16>, tensor<4xbf16>
}

// A constant still read in f32 stays beside its conversion.
// CHECK-LABEL: func.func @constant_still_used(
// CHECK-NEXT: %[[H:.*]] = graph.constant dense<5.000000e-01> : tensor<2xf16>
// CHECK-NEXT: %[[K:.*]] = graph.constant dense<5.000000e-01> : tensor<2xf32>
// CHECK-NEXT: return %[[K]], %[[H]]
func.func @constant_still_used() -> (tensor<2xf32>, tensor<2xf16>) {
  %k = graph.constant dense<0.5> : tensor<2xf32>
  %h = amp.cast %k : tensor<2xf32> to tensor<2xf16>
  return %k, %h : tensor<2xf32>, tensor<2xf16>
}

// Elements held as a resource are not read: the cast stays.
// CHECK-LABEL: func.func @resource_constant(
// CHECK-NEXT: %[[K:.*]] = graph.constant dense_resource<blob> : tensor<2xf32>
// CHECK-NEXT: %[[H:.*]] = amp.cast %[[K]] : tensor<2xf32> to tensor<2xf16>
// CHECK-NEXT: return %[[H]]
func.func @resource_constant() -> tensor<2xf16> {
  %k = graph.constant dense_resource<blob> : tensor<2xf32>
  %h = amp.cast %k : tensor<2xf32> to tensor<2xf16>
  return %h : tensor<2xf16>
}

// graph.cast is the model's own: its round trips and duplicates stay, and an
// amp.cast does not look through it.
// CHECK-LABEL: func.func @graph_cast_untouched(
// CHECK-SAME: %[[H:.*]]: tensor<4xf16>)
// CHECK-NEXT: %[[A:.*]] = graph.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[B:.*]] = graph.cast %[[A]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: %[[C:.*]] = graph.cast %[[H]] : tensor<4xf16> to tensor<4xf32>
// CHECK-NEXT: %[[D:.*]] = amp.cast %[[C]] : tensor<4xf32> to tensor<4xf16>
// CHECK-NEXT: return %[[A]], %[[B]], %[[C]], %[[D]]
func.func @graph_cast_untouched(%h: tensor<4xf16>)
    -> (tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf16>) {
  %a = graph.cast %h : tensor<4xf16> to tensor<4xf32>
  %b = graph.cast %a : tensor<4xf32> to tensor<4xf16>
  %c = graph.cast %h : tensor<4xf16> to tensor<4xf32>
  %d = amp.cast %c : tensor<4xf32> to tensor<4xf16>
  return %a, %b, %c, %d
      : tensor<4xf32>, tensor<4xf16>, tensor<4xf32>, tensor<4xf16>
}

// Casts without users go, chains of them too; other dead ops are not this
// pass's business.
// CHECK-LABEL: func.func @unused(
// CHECK-SAME: %[[X:.*]]: tensor<4xf32>)
// CHECK-NEXT: %[[R:.*]] = graph.relu %[[X]]
// CHECK-NEXT: return %[[X]]
func.func @unused(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = amp.cast %x : tensor<4xf32> to tensor<4xf16>
  %1 = amp.cast %0 : tensor<4xf16> to tensor<4xbf16>
  %r = graph.relu %x : tensor<4xf32>
  %2 = amp.cast %r : tensor<4xf32> to tensor<4xbf16>
  return %x : tensor<4xf32>
}

// An update of an f32 parameter and the overflow check read the f16/bf16
// gradient itself instead of its exact f32 cast; another user keeps the
// cast, a rounding (narrowing) cast is never skipped, and a low-precision
// parameter's update keeps its own type.
// CHECK-LABEL: func @gradients_as_made
// CHECK-SAME: (%[[LR:.*]]: tensor<f32>, %[[P:.*]]: tensor<4xf32>, %[[G:.*]]: tensor<4xf16>, %[[H:.*]]: tensor<4xbf16>, %[[S:.*]]: tensor<f32>, %[[Q:.*]]: tensor<4xf16>, %[[D:.*]]: tensor<4xf32>)
// CHECK: %[[HW:.*]] = amp.cast %[[H]] : tensor<4xbf16> to tensor<4xf32>
// CHECK: %[[DN:.*]] = amp.cast %[[D]] : tensor<4xf32> to tensor<4xf16>
// CHECK: %[[F:.*]] = amp.check_finite(%[[G]], %[[H]], %[[DN]]), %[[S]] : (tensor<4xf16>, tensor<4xbf16>, tensor<4xf16>, tensor<f32>) -> tensor<i1>
// CHECK: graph.sgd_update %[[LR]], %[[P]], %[[G]] skip %[[F]] loss_scale %[[S]] : (tensor<f32>, tensor<4xf32>, tensor<4xf16>, tensor<i1>, tensor<f32>) -> tensor<4xf32>
// CHECK: graph.sgd_update %[[LR]], %{{.*}}, %[[H]] skip %[[F]] loss_scale %[[S]] : (tensor<f32>, tensor<4xf32>, tensor<4xbf16>, tensor<i1>, tensor<f32>) -> tensor<4xf32>
// CHECK: graph.sgd_update %[[LR]], %[[Q]], %[[DN]] skip %[[F]] loss_scale %[[S]] : (tensor<f32>, tensor<4xf16>, tensor<4xf16>, tensor<i1>, tensor<f32>) -> tensor<4xf16>
// CHECK: return %{{.*}}, %{{.*}}, %{{.*}}, %[[HW]]
func.func @gradients_as_made(%lr: tensor<f32>, %p: tensor<4xf32>, %g: tensor<4xf16>, %h: tensor<4xbf16>, %s: tensor<f32>, %q: tensor<4xf16>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>) {
  %gw = amp.cast %g : tensor<4xf16> to tensor<4xf32>
  %hw = amp.cast %h : tensor<4xbf16> to tensor<4xf32>
  %dn = amp.cast %d : tensor<4xf32> to tensor<4xf16>
  %f = amp.check_finite(%gw, %hw, %dn), %s : (tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<f32>) -> tensor<i1>
  %0 = graph.sgd_update %lr, %p, %gw skip %f loss_scale %s : (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<f32>) -> tensor<4xf32>
  %1 = graph.sgd_update %lr, %0, %hw skip %f loss_scale %s : (tensor<f32>, tensor<4xf32>, tensor<4xf32>, tensor<i1>, tensor<f32>) -> tensor<4xf32>
  %2 = graph.sgd_update %lr, %q, %dn skip %f loss_scale %s : (tensor<f32>, tensor<4xf16>, tensor<4xf16>, tensor<i1>, tensor<f32>) -> tensor<4xf16>
  return %0, %1, %2, %hw : tensor<4xf32>, tensor<4xf32>, tensor<4xf16>, tensor<4xf32>
}

{-#
  dialect_resources: {
    builtin: {
      blob: "0x040000000000803F00000040"
    }
  }
#-}
