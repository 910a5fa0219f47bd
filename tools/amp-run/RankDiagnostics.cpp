//===- RankDiagnostics.cpp - the compiler's errors, said by one rank ------===//

#include "tools/amp-run/RankDiagnostics.h"

#include "llvm/ADT/StringRef.h"

namespace ampc::tools {

RankDiagnostics::RankDiagnostics(llvm::SourceMgr &sourceMgr,
                                 mlir::MLIRContext &context,
                                 std::string linePrefix)
    : SourceMgrDiagnosticHandler(sourceMgr, &context, stream),
      linePrefix_(std::move(linePrefix)) {
  setHandler([this](mlir::Diagnostic &diag) {
    text.clear();
    emitDiagnostic(diag);
    std::string lines;
    llvm::StringRef rest(text);
    while (!rest.empty()) {
      auto [line, after] = rest.split('\n');
      lines += linePrefix_ + line.str() + "\n";
      rest = after;
    }
    llvm::outs().flush();
    llvm::errs() << lines;
    return mlir::success();
  });
}

} // namespace ampc::tools
