//===- GraphEnums.h - the choices graph op attributes name ------*- C++ -*-===//
//
// The enums of GraphEnums.td and the check that a string attribute names
// one of an enum's cases, with the message every such check gives.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_DIALECTS_GRAPH_GRAPHENUMS_H
#define AMPC_DIALECTS_GRAPH_GRAPHENUMS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <optional>
#include <string>

#include "dialects/Graph/GraphEnums.h.inc"

namespace ampc::graph {

/// The cases of E as users write them: "a", "b" or "c". The generated
/// stringify gives "" past the last case (cases are numbered from 0).
template <typename E> std::string quotedCases() {
  llvm::SmallVector<std::string> names;
  for (uint32_t i = 0;; ++i) {
    llvm::StringRef name = stringifyEnum(static_cast<E>(i));
    if (name.empty())
      break;
    names.push_back(("\"" + name + "\"").str());
  }
  std::string out;
  for (size_t i = 0; i < names.size(); ++i)
    out += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  return out;
}

/// "<what> must be "a" or "b", got "<value>"", or nothing when `value`
/// names a case of E.
template <typename E>
std::optional<std::string> notACase(llvm::StringRef what,
                                    llvm::StringRef value) {
  if (symbolizeEnum<E>(value))
    return std::nullopt;
  return (what + " must be " + quotedCases<E>() + ", got \"" + value + "\"")
      .str();
}

} // namespace ampc::graph

#endif // AMPC_DIALECTS_GRAPH_GRAPHENUMS_H
