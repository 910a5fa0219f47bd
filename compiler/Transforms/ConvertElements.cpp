//===- ConvertElements.cpp - rounding stored tensors to a float type ------===//
//
// Reads the elements of a dense or resource attribute as APFloat, rounds
// them and writes them back in the storage the size calls for.
//
//===----------------------------------------------------------------------===//

#include "compiler/Transforms/ConvertElements.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

#include <cstring>

using namespace mlir;

namespace ampc {

FailureOr<ElementsAttr> convertElements(ElementsAttr attr, FloatType to,
                                        StringRef name) {
  auto type = cast<ShapedType>(attr.getType());
  auto from = dyn_cast<FloatType>(type.getElementType());
  if (!from)
    return failure();
  auto newType = RankedTensorType::get(type.getShape(), to);
  SmallVector<APFloat> values;
  values.reserve(type.getNumElements());
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    for (APFloat v : dense.getValues<APFloat>())
      values.push_back(v);
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    unsigned bytes = from.getWidth() / 8;
    if (!blob || blob->getData().size() !=
                     static_cast<size_t>(type.getNumElements()) * bytes)
      return failure();
    ArrayRef<char> data = blob->getData();
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      uint64_t word = 0;
      std::memcpy(&word, data.data() + i * bytes, bytes);
      values.emplace_back(from.getFloatSemantics(), APInt(bytes * 8, word));
    }
  } else {
    return failure();
  }
  SmallVector<char> raw;
  raw.reserve(values.size() * to.getWidth() / 8);
  for (APFloat &v : values) {
    bool lost;
    v.convert(to.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    uint64_t word = v.bitcastToAPInt().getZExtValue();
    for (unsigned b = 0; b < to.getWidth() / 8; ++b)
      raw.push_back(static_cast<char>(word >> (8 * b)));
  }
  // Small tensors print inline; large ones stay resources, as imported.
  if (raw.size() <= 256)
    return cast<ElementsAttr>(
        DenseElementsAttr::getFromRawBuffer(newType, raw));
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(ArrayRef<char>(raw),
                                                            alignof(uint64_t));
  return cast<ElementsAttr>(DenseResourceElementsAttr::get(
      newType, ("amp_" + name).str(), std::move(blob)));
}

std::optional<NonFiniteElement> firstNonFinite(ElementsAttr attr) {
  auto type = cast<ShapedType>(attr.getType());
  auto ft = dyn_cast<FloatType>(type.getElementType());
  if (!ft || type.getNumElements() == 0)
    return std::nullopt;
  ArrayRef<char> data;
  bool splat = false;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    data = dense.getRawData();
    splat = dense.isSplat();
  } else if (auto res = dyn_cast<DenseResourceElementsAttr>(attr)) {
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      data = blob->getData();
  }
  unsigned bytes = ft.getWidth() / 8;
  int64_t n = splat ? 1 : type.getNumElements();
  if (bytes == 0 || data.size() < static_cast<size_t>(n) * bytes)
    return std::nullopt;
  // An IEEE value is inf or NaN exactly when its exponent bits are all set.
  const llvm::fltSemantics &sem = ft.getFloatSemantics();
  unsigned mantissa = llvm::APFloat::semanticsPrecision(sem) - 1;
  unsigned exponent = ft.getWidth() - 1 - mantissa;
  uint64_t mask = ((uint64_t(1) << exponent) - 1) << mantissa;
  for (int64_t i = 0; i < n; ++i) {
    uint64_t word = 0;
    std::memcpy(&word, data.data() + i * bytes, bytes);
    if ((word & mask) != mask)
      continue;
    uint64_t fraction = word & ((uint64_t(1) << mantissa) - 1);
    bool negative = (word >> (ft.getWidth() - 1)) & 1;
    return NonFiniteElement{i, fraction ? "NaN" : negative ? "-inf" : "inf"};
  }
  return std::nullopt;
}

} // namespace ampc
