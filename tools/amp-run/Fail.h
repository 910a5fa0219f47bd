//===- Fail.h - how amp-run reports an error --------------------*- C++ -*-===//
#ifndef AMPC_TOOLS_AMPRUN_FAIL_H
#define AMPC_TOOLS_AMPRUN_FAIL_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

namespace ampc::tools {

/// Prints "amp-run: error: MSG" on stderr, after what stdout holds (so the
/// two keep their order in one log), and returns 1, amp-run's exit code for
/// an error.
inline int fail(const llvm::Twine &msg) {
  llvm::outs().flush();
  llvm::errs() << "amp-run: error: " << msg << "\n";
  return 1;
}

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_FAIL_H
