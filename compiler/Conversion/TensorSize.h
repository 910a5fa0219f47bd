//===- TensorSize.h - element counts and bytes of tensor types --*- C++ -*-===//
//
// The checked sizes of a static tensor type (runtime/ByteSize.h on MLIR
// types) and the words the conversions use when one overflows, so that an
// ONNX node and a graph op that compute a tensor too large for int64 are
// reported alike.
//
//===----------------------------------------------------------------------===//

#ifndef AMPC_COMPILER_CONVERSION_TENSORSIZE_H
#define AMPC_COMPILER_CONVERSION_TENSORSIZE_H

#include "runtime/ByteSize.h"

#include "mlir/IR/BuiltinTypes.h"

#include <optional>
#include <string>

namespace ampc {

/// Bytes of one element as the runtime stores it (i1: one byte).
inline int64_t elementBytes(mlir::Type element) {
  return element.isInteger(1) ? 1 : element.getIntOrFloatBitWidth() / 8;
}

/// The element count of a static shaped type, or std::nullopt when it
/// overflows int64 (zero dimensions do not hide an overflowing product).
inline std::optional<int64_t> checkedNumElements(mlir::ShapedType t) {
  return rt::checkedNumElements(t.getShape().data(), t.getRank());
}

/// The bytes of a static shaped type, or std::nullopt on overflow.
inline std::optional<int64_t> checkedByteSize(mlir::ShapedType t) {
  return rt::checkedByteSize(t.getShape().data(), t.getRank(),
                             elementBytes(t.getElementType()));
}

/// Empty when the sizes of `t` (static, int or float elements) fit int64;
/// else what overflows: "has 1099511627776 x 1099511627776 elements, more
/// than int64 can count" or "has 2305843009213693952 elements of 4 bytes,
/// more bytes than int64 can count".
inline std::string sizeOverflow(mlir::ShapedType t) {
  if (!t.hasStaticShape() || checkedByteSize(t))
    return "";
  std::string dims;
  for (int64_t d : t.getShape())
    if (d != 0)
      dims += (dims.empty() ? "" : " x ") + std::to_string(d);
  if (!checkedNumElements(t))
    return "has " + dims + " elements, more than int64 can count";
  return "has " + dims + " elements of " +
         std::to_string(elementBytes(t.getElementType())) +
         " bytes, more bytes than int64 can count";
}

} // namespace ampc

#endif // AMPC_COMPILER_CONVERSION_TENSORSIZE_H
