//===- OptionalNumber.h - a pass option that may be left unset --*- C++ -*-===//
//
// A number option whose default depends on other options (Adam's epsilon is
// 1e-8, Adagrad's 1e-10; AdamW's weight decay 0.01, the others' 0). It is
// unset until given, so no number stands for "the default" and every number
// a user gives is checked: a sentinel such as -1 would let `--epsilon -1`
// through as the default. Spelt `default` in a textual pipeline.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_COMPILER_TRANSFORMS_OPTIONALNUMBER_H
#define AMPC_COMPILER_TRANSFORMS_OPTIONALNUMBER_H

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace ampc {

struct OptionalNumber {
  OptionalNumber() = default;
  OptionalNumber(double v) : number(v) {}
  bool operator==(const OptionalNumber &o) const { return number == o.number; }
  bool operator!=(const OptionalNumber &o) const { return !(*this == o); }

  std::optional<double> number; // unset: the optimizer's default
};

/// Prints the number as a double option prints it, or `default`.
inline llvm::raw_ostream &operator<<(llvm::raw_ostream &os,
                                     const OptionalNumber &n) {
  if (n.number)
    return os << *n.number;
  return os << "default";
}

} // namespace ampc

namespace llvm::cl {
template <>
class parser<ampc::OptionalNumber> : public basic_parser<ampc::OptionalNumber> {
public:
  parser(Option &o) : basic_parser(o) {}

  // Returns true on error, as every cl parser.
  bool parse(Option &o, StringRef, StringRef arg, ampc::OptionalNumber &v) {
    if (arg == "default") {
      v = ampc::OptionalNumber();
      return false;
    }
    double d;
    if (!to_float(arg, d))
      return o.error("'" + arg + "' is not a number (nor 'default')");
    v = d;
    return false;
  }
  StringRef getValueName() const override { return "number|default"; }
  void printOptionDiff(const Option &o, const ampc::OptionalNumber &,
                       const OptVal &, size_t globalWidth) const {
    printOptionNoValue(o, globalWidth);
  }
};
} // namespace llvm::cl

#endif // AMPC_COMPILER_TRANSFORMS_OPTIONALNUMBER_H
