//===- VerifyHelpers.h - shared pieces of the graph op verifiers -*- C++
//-*-===//
//
// Messages in the form MLIR's verifiers use ("'graph.x' op ..."), usable
// from inferReturnTypes, where no op exists yet.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_VERIFYHELPERS_H
#define AMPC_DIALECTS_GRAPH_VERIFYHELPERS_H

#include "dialects/Graph/GraphEnums.h"
#include "dialects/Graph/ShapeInference.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc::graph::detail {
using namespace mlir;
namespace sh = ampc::shape;

inline LogicalResult fail(std::optional<Location> loc, StringRef op,
                          const Twine &msg) {
  return emitOptionalError(loc, "'", op, "' op ", msg.str());
}

inline RankedTensorType tensorOf(ArrayRef<int64_t> shape, Type elementType) {
  return RankedTensorType::get(shape, elementType);
}

inline ArrayRef<int64_t> shapeOf(Value v) {
  return cast<ShapedType>(v.getType()).getShape();
}

inline Type elemOf(Value v) {
  return cast<ShapedType>(v.getType()).getElementType();
}

/// All present values share one element type.
inline LogicalResult
sameElementType(std::optional<Location> loc, StringRef op,
                ArrayRef<std::pair<StringRef, Value>> values) {
  Type first;
  StringRef firstName;
  for (auto [name, v] : values) {
    if (!v)
      continue;
    if (!first) {
      first = elemOf(v);
      firstName = name;
      continue;
    }
    if (elemOf(v) != first) {
      std::string s;
      llvm::raw_string_ostream os(s);
      os << name << " has element type " << elemOf(v) << " but " << firstName
         << " has " << first;
      return fail(loc, op, os.str());
    }
  }
  return success();
}

/// Shape rule result -> inferred type, or the rule's error.
inline LogicalResult infer(std::optional<Location> loc, StringRef op,
                           const std::optional<sh::Shape> &shape,
                           const std::string &error, Type elementType,
                           SmallVectorImpl<Type> &types) {
  if (!shape)
    return fail(loc, op, error);
  types.push_back(tensorOf(*shape, elementType));
  return success();
}

/// The per-channel operands of a normalization are 1-D of size `c`.
inline LogicalResult checkChannelVector(std::optional<Location> loc,
                                        StringRef op, StringRef name, Value v,
                                        int64_t c) {
  ArrayRef<int64_t> s = shapeOf(v);
  if (s.size() != 1 || s[0] != c)
    return fail(loc, op,
                name + " must have shape [" + Twine(c) + "], got " +
                    sh::str(s));
  return success();
}
/// Shared by the two losses: input [N, C, d...], target [N, d...],
/// weight [C].
inline LogicalResult inferLoss(std::optional<Location> loc, StringRef op,
                               Value input, Value target, Value weight,
                               StringRef reduction,
                               SmallVectorImpl<Type> &types) {
  ArrayRef<int64_t> in = shapeOf(input), tg = shapeOf(target);
  if (in.size() < 2)
    return fail(loc, op,
                "expects input [N, C, d...] of rank >= 2, got " + sh::str(in));
  sh::Shape expected{in[0]};
  expected.append(in.begin() + 2, in.end());
  if (ArrayRef<int64_t>(expected) != tg)
    return fail(loc, op,
                "target " + sh::str(tg) + " must have shape " +
                    sh::str(expected) + " for input " + sh::str(in));
  if (weight) {
    if (elemOf(weight) != elemOf(input))
      return fail(loc, op, "weight element type differs from the input's");
    if (failed(checkChannelVector(loc, op, "weight", weight, in[1])))
      return failure();
  }
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return fail(loc, op,
                "reduction must be none, sum or mean, got \"" + reduction +
                    "\"");
  types.push_back(reduction == "none" ? tensorOf(expected, elemOf(input))
                                      : tensorOf({}, elemOf(input)));
  return success();
}

/// An axis attribute names a dimension of a rank-`rank` value. I64Attr's
/// getter is unsigned, so the attribute is read as signed here.
inline LogicalResult verifyAxis(Operation *op, IntegerAttr axis, int64_t rank) {
  int64_t a = axis.getInt();
  if (a < 0 || a >= rank)
    return op->emitOpError("axis ")
           << a << " is out of range [0, " << rank << ")";
  return success();
}

/// A string attribute `what` that names a case of E (GraphEnums.td).
template <typename E>
LogicalResult verifyCase(Operation *op, StringRef what, StringRef value) {
  if (std::optional<std::string> error = notACase<E>(what, value))
    return op->emitOpError(*error);
  return success();
}

/// Clip and its gradient: an absent bound does not cut.
inline LogicalResult verifyClipBounds(Operation *op, std::optional<APFloat> min,
                                      std::optional<APFloat> max) {
  if (min && max && min->convertToDouble() > max->convertToDouble())
    return op->emitOpError("min ")
           << min->convertToDouble() << " is greater than max "
           << max->convertToDouble();
  return success();
}

} // namespace ampc::graph::detail

#endif // AMPC_DIALECTS_GRAPH_VERIFYHELPERS_H
