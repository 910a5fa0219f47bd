//===- ConvertElements.h - rounding stored tensors to a float type -*- C++
//-*-===//
//
// Rounds the initial value of a parameter (inline dense or a resource blob,
// as the importer leaves it) to a narrower float type, for the passes that
// store a parameter or its working copy in low precision.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_CONVERTELEMENTS_H
#define AMPC_COMPILER_TRANSFORMS_CONVERTELEMENTS_H

#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinTypes.h"

#include <optional>

namespace ampc {

/// `attr` with every element rounded to `to` (nearest even, as amp.cast
/// rounds). Small results are inline; large ones a resource blob keyed
/// "amp_<name>". Fails when `attr` is not float dense elements or a
/// resource of the right size.
mlir::FailureOr<mlir::ElementsAttr> convertElements(mlir::ElementsAttr attr,
                                                    mlir::FloatType to,
                                                    llvm::StringRef name);

/// The first inf or NaN element of float `attr` (inline dense or a resource
/// blob): its row-major index and "NaN", "inf" or "-inf"; none when every
/// element is finite, or when `attr` is neither. Reads the stored bits: no
/// element is converted.
struct NonFiniteElement {
  int64_t index;
  const char *what;
};
std::optional<NonFiniteElement> firstNonFinite(mlir::ElementsAttr attr);

} // namespace ampc

#endif // AMPC_COMPILER_TRANSFORMS_CONVERTELEMENTS_H
