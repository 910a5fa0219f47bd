//===- Fail.h - how amp-run reports an error --------------------*- C++ -*-===//
//
// amp-run prints its errors; the Python module (tools/amp-run/Api.h) calls
// the same code and raises them instead. A CapturedErrors scope makes the
// difference: while one is alive on the thread, fail() appends to it rather
// than printing.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TOOLS_AMPRUN_FAIL_H
#define AMPC_TOOLS_AMPRUN_FAIL_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace ampc::tools {

/// Collects the errors fail() reports on this thread while it lives.
class CapturedErrors {
public:
  CapturedErrors() : outer_(current()) { current() = this; }
  ~CapturedErrors() { current() = outer_; }
  CapturedErrors(const CapturedErrors &) = delete;
  CapturedErrors &operator=(const CapturedErrors &) = delete;

  /// Every error so far, one per line, without amp-run's prefix.
  const std::string &text() const { return text_; }
  void add(const std::string &line) {
    if (!text_.empty())
      text_ += "\n";
    text_ += line;
  }
  /// The innermost live scope on this thread; null when none.
  static CapturedErrors *&current() {
    thread_local CapturedErrors *scope = nullptr;
    return scope;
  }

private:
  CapturedErrors *outer_;
  std::string text_;
};

/// What an error line starts with: "amp-run: error: ", and in a
/// data-parallel run "amp-run: rank R: error: ", so that each rank's errors
/// say whose they are.
inline std::string &failPrefix() {
  static std::string prefix = "amp-run: error: ";
  return prefix;
}

/// Prints "amp-run: error: MSG" on stderr, after what stdout holds (so the
/// two keep their order in one log), or adds MSG to the live
/// CapturedErrors; returns 1, amp-run's exit code for an error.
inline int fail(const llvm::Twine &msg) {
  if (CapturedErrors *scope = CapturedErrors::current()) {
    scope->add(msg.str());
    return 1;
  }
  llvm::outs().flush();
  // One write: the ranks of a data-parallel run share the stream.
  llvm::errs() << failPrefix() + msg.str() + "\n";
  return 1;
}

} // namespace ampc::tools

#endif // AMPC_TOOLS_AMPRUN_FAIL_H
