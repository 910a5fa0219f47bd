//===- PassEnums.h - the choices pass options name --------------*- C++ -*-===//
//
// The enums of PassEnums.td, and the llvm::cl parser that lets a pass
// option (or a tool's flag) be of one: it reads a case by its name and
// refuses anything else naming the cases.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_PASSENUMS_H
#define AMPC_COMPILER_TRANSFORMS_PASSENUMS_H

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

#include "compiler/Transforms/PassEnums.h.inc"

namespace ampc {

/// The cases of E as users write them: "a, b or c". The generated
/// stringify gives "" past the last case (cases are numbered from 0).
template <typename E> std::string enumCases() {
  std::string out;
  for (uint32_t i = 0;; ++i) {
    llvm::StringRef name = stringifyEnum(static_cast<E>(i));
    if (name.empty())
      break;
    bool last = stringifyEnum(static_cast<E>(i + 1)).empty();
    out += (i == 0 ? "" : last ? " or " : ", ") + name.str();
  }
  return out;
}

/// An llvm::cl parser of an enum of PassEnums.td (see the specializations
/// below).
template <typename E>
class EnumOptionParser : public llvm::cl::basic_parser<E> {
public:
  EnumOptionParser(llvm::cl::Option &o) : llvm::cl::basic_parser<E>(o) {}

  // Returns true on error, as every cl parser.
  bool parse(llvm::cl::Option &o, llvm::StringRef, llvm::StringRef arg, E &v) {
    if (std::optional<E> e = symbolizeEnum<E>(arg)) {
      v = *e;
      return false;
    }
    return o.error("'" + arg + "' is not " + enumCases<E>());
  }
  llvm::StringRef getValueName() const override { return "value"; }
  void printOptionDiff(const llvm::cl::Option &o, E,
                       const llvm::cl::OptionValue<E> &,
                       size_t globalWidth) const {
    this->printOptionNoValue(o, globalWidth);
  }
};

} // namespace ampc

namespace llvm::cl {
template <>
class parser<ampc::AmpLevel> : public ampc::EnumOptionParser<ampc::AmpLevel> {
  using EnumOptionParser::EnumOptionParser;
};
template <>
class parser<ampc::AmpDtype> : public ampc::EnumOptionParser<ampc::AmpDtype> {
  using EnumOptionParser::EnumOptionParser;
};
template <>
class parser<ampc::LossScaleMode>
    : public ampc::EnumOptionParser<ampc::LossScaleMode> {
  using EnumOptionParser::EnumOptionParser;
};
} // namespace llvm::cl

#endif // AMPC_COMPILER_TRANSFORMS_PASSENUMS_H
