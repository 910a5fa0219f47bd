//===- RecognitionMatchers.h - matching written-out ops ---------*- C++ -*-===//
//
// What the patterns that recognise an op written out as its formula
// (GeluRecognition.cpp, LayerNormRecognition.cpp) ask of the values they
// walk: splat constants, the other operand of a binary op, single users.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_RECOGNITIONMATCHERS_H
#define AMPC_DIALECTS_GRAPH_RECOGNITIONMATCHERS_H

#include "dialects/Graph/GraphOps.h"

#include <optional>

namespace ampc::graph::recognition {

/// The splat value of a float graph.constant, if `v` is one.
inline std::optional<mlir::APFloat> splatOf(mlir::Value v) {
  auto c = v.getDefiningOp<ConstantOp>();
  auto dense =
      c ? mlir::dyn_cast<mlir::DenseElementsAttr>(c.getValue()) : nullptr;
  if (!dense || !dense.isSplat() ||
      !mlir::isa<mlir::FloatType>(dense.getElementType()))
    return std::nullopt;
  return dense.getSplatValue<mlir::APFloat>();
}

/// How a constant of a formula may be written: exactly (0.5, 1, 2, 3 are
/// exact in every float type), or, for an irrational one (GELU's sqrt(2),
/// sqrt(2 / pi), 0.044715), rounded to the model's type (f32, f16, bf16):
/// the value rounded to the constant's own type, give or take one unit in
/// the last place (an exporter's own rounding of a double).
enum Match : bool { kExact = false, kRounded = true };

/// `v` is a graph.constant splat of `want`, as `match` says.
inline bool isSplat(mlir::Value v, double want, Match match = kExact) {
  std::optional<mlir::APFloat> splat = splatOf(v);
  if (!splat)
    return false;
  const mlir::APFloat &got = *splat;
  mlir::APFloat w(want);
  bool lost;
  w.convert(got.getSemantics(), mlir::APFloat::rmNearestTiesToEven, &lost);
  if (got.bitwiseIsEqual(w))
    return true;
  if (match == kExact)
    return false;
  mlir::APFloat up = w, down = w;
  up.next(/*nextDown=*/false);
  down.next(/*nextDown=*/true);
  return got.bitwiseIsEqual(up) || got.bitwiseIsEqual(down);
}

/// The operand of the binary op `op` other than `v` when the other is a
/// splat `want`; null otherwise.
template <typename Op>
mlir::Value otherThanSplat(mlir::Operation *op, double want,
                           Match match = kExact) {
  auto b = mlir::dyn_cast_or_null<Op>(op);
  if (!b)
    return {};
  for (unsigned i = 0; i < 2; ++i)
    if (isSplat(b->getOperand(i), want, match))
      return b->getOperand(1 - i);
  return {};
}

/// The operand of the binary op `op` other than `v`; null when `op` is no
/// `Op` reading `v`.
template <typename Op>
mlir::Value partnerOf(mlir::Operation *op, mlir::Value v) {
  auto b = mlir::dyn_cast_or_null<Op>(op);
  if (!b)
    return {};
  if (b.getLhs() == v)
    return b.getRhs();
  if (b.getRhs() == v)
    return b.getLhs();
  return {};
}

/// The only user of `v`, or null.
inline mlir::Operation *onlyUser(mlir::Value v) {
  return v.hasOneUse() ? *v.getUsers().begin() : nullptr;
}

} // namespace ampc::graph::recognition

#endif // AMPC_DIALECTS_GRAPH_RECOGNITIONMATCHERS_H
