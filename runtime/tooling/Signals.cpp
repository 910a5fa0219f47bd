//===- Signals.cpp - SIGINT and SIGTERM end a run between steps -----------===//

#include "runtime/tooling/Signals.h"

#include <atomic>

namespace ampc::tools {
namespace {

// The only state the handler touches: the first signal, read by the loop
// between steps, and which of the two signals have our handler. Lock-free
// atomics, since the handler may run on another thread than the loop.
std::atomic<int> receivedSignal{0};
std::atomic<bool> handlesInt{false}, handlesTerm{false};
static_assert(std::atomic<int>::is_always_lock_free &&
                  std::atomic<bool>::is_always_lock_free,
              "a signal handler may only use lock-free atomics");

void setDefault(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigemptyset(&dfl.sa_mask);
  sigaction(sig, &dfl, nullptr);
}

extern "C" void onInterrupt(int sig) {
  int none = 0;
  receivedSignal.compare_exchange_strong(none, sig);
  // sigaction is async-signal-safe: the next SIGINT or SIGTERM kills.
  if (handlesInt)
    setDefault(SIGINT);
  if (handlesTerm)
    setDefault(SIGTERM);
}

// Installs `sa` for `sig` unless the signal is ignored: whoever ignored it
// did not want it to stop the run. (Under InitLLVM it never is: LLVM's own
// handlers are there.)
bool install(int sig, const struct sigaction &sa, struct sigaction &old) {
  sigaction(sig, nullptr, &old);
  return old.sa_handler != SIG_IGN && sigaction(sig, &sa, nullptr) == 0;
}

} // namespace

InterruptScope::InterruptScope() {
  receivedSignal = 0;
  struct sigaction sa {};
  sa.sa_handler = onInterrupt;
  // Both are blocked while the handler runs, so it resets both before
  // either can arrive again.
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sa.sa_flags = SA_RESTART;
  handlesInt = install(SIGINT, sa, oldInt_);
  handlesTerm = install(SIGTERM, sa, oldTerm_);
}

InterruptScope::~InterruptScope() {
  if (handlesInt)
    sigaction(SIGINT, &oldInt_, nullptr);
  if (handlesTerm)
    sigaction(SIGTERM, &oldTerm_, nullptr);
  handlesInt = false;
  handlesTerm = false;
}

int InterruptScope::received() const { return receivedSignal; }

const char *signalName(int sig) {
  switch (sig) {
  case SIGINT:
    return "SIGINT";
  case SIGTERM:
    return "SIGTERM";
  }
  return "a signal";
}

} // namespace ampc::tools
