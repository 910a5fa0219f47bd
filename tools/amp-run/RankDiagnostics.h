//===- RankDiagnostics.h - compiler errors said by a rank -------*- C++ -*-===//
//
// In a data-parallel run every rank compiles the model, and the ranks share
// one stderr: a compiler diagnostic must say whose it is, as fail()'s
// errors do, and must not interleave with another rank's.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_RANKDIAGNOSTICS_H
#define AMPC_TOOLS_AMPRUN_RANKDIAGNOSTICS_H

#include "mlir/IR/Diagnostics.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace ampc::tools {

namespace detail {
/// Holds the text one diagnostic formats to; a base, so that it exists
/// before the handler that writes into it.
struct DiagnosticText {
  std::string text;
  llvm::raw_string_ostream stream{text};
};
} // namespace detail

/// Prints each diagnostic as mlir::SourceMgrDiagnosticHandler does, every
/// line of it (notes included) after `linePrefix` ("amp-run: rank R: "), in
/// one write to stderr.
class RankDiagnostics : private detail::DiagnosticText,
                        public mlir::SourceMgrDiagnosticHandler {
public:
  RankDiagnostics(llvm::SourceMgr &sourceMgr, mlir::MLIRContext &context,
                  std::string linePrefix);

private:
  std::string linePrefix_;
};

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_RANKDIAGNOSTICS_H
