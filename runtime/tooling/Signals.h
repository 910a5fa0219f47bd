//===- Signals.h - SIGINT and SIGTERM end a run between steps --*- C++ -*-===//
//
// While a training loop runs, SIGINT and SIGTERM must not lose the steps done
// since the last checkpoint: an InterruptScope turns them into a flag that
// the loop reads between steps, so it can write a final checkpoint and exit.
// The handler only records the signal and puts the default actions back, so
// a second Ctrl-C (a stuck step, an impatient user) kills at once; the atomic
// checkpoint writer makes that safe.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_SIGNALS_H
#define AMPC_RUNTIME_TOOLING_SIGNALS_H

#include <csignal>
#include <signal.h> // struct sigaction

namespace ampc::tools {

/// One at a time: the handler's state is the process's.
class InterruptScope {
public:
  /// Installs the handlers for SIGINT and SIGTERM (with SA_RESTART, so a
  /// signal does not fail the file reads and writes of a step). A signal
  /// ignored when the scope starts stays ignored.
  InterruptScope();
  /// Puts back the actions that were there before.
  ~InterruptScope();
  InterruptScope(const InterruptScope &) = delete;
  InterruptScope &operator=(const InterruptScope &) = delete;

  /// The first SIGINT or SIGTERM received while in scope; 0 for none.
  int received() const;

private:
  struct sigaction oldInt_, oldTerm_;
};

/// "SIGINT" or "SIGTERM" (else "a signal").
const char *signalName(int sig);

/// Whether `rc` is the exit code of a run that SIGINT or SIGTERM stopped
/// (128 + the signal). Under data parallelism every rank stops so after the
/// same step (TrainLoop), so no rank need end the others.
inline bool isSignalExit(int rc) {
  return rc == 128 + SIGINT || rc == 128 + SIGTERM;
}

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_SIGNALS_H
