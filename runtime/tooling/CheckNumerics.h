//===- CheckNumerics.h - amp-run --check-numerics ---------------*- C++ -*-===//
//
// With --check-numerics every run of a function goes through the Session's
// non-finite probe, and this decides what the first inf or NaN it found
// means. In a training step with loss scaling, an overflow of the scaled
// gradients that the step's check caught (found_inf set) is what loss
// scaling is for: a note, and the run goes on. Anything else stops the run,
// naming the first op that produced the value: any inf or NaN in a run
// without loss scaling, and, with it, a non-finite loss, a non-finite value
// in the ops the loss is computed from (the forward pass: scaling does not
// reach them), or one the check did not catch.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_CHECKNUMERICS_H
#define AMPC_RUNTIME_TOOLING_CHECKNUMERICS_H

#include "runtime/Session.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ampc::tools {

/// Checks the float parameters of `session` (the initializers, or the state
/// a checkpoint restored): the probe can only say that a non-finite value
/// "came in", so the values that come in are checked before the first run.
/// The error names the parameter and its first non-finite element.
rt::Status checkParamsFinite(const rt::Session &session);

/// The probe's finding in a run without loss scaling (an inference, or any
/// run where every non-finite value is a fault): the error text, naming
/// the first op that produced one; empty when every value was finite.
std::string nonFiniteFault(const rt::Session &session);

/// What the training loop read after one step.
struct StepFacts {
  int64_t step = 0;
  bool updates = true;    // the step ends an accumulation and checks
  bool lossFinite = true; // the loss output
  bool foundInf = false;  // the step's overflow check fired
  double scaleBefore = 1, scaleAfter = 1;
};

struct NumericsVerdict {
  enum Kind { Clean, Note, Stop } kind = Clean;
  std::string text; // Note: one line; Stop: the error, after "step N: "
};

/// Judges each step of one training Session run with the probe on.
class StepNumerics {
public:
  /// `loss` names the step's loss output; `scaled`: the step has an
  /// overflow check (it returns found_inf).
  StepNumerics(const rt::Session &train, const std::string &loss, bool scaled);

  NumericsVerdict judge(const StepFacts &facts);

private:
  /// Whether the probe's value is one the loss is computed from.
  bool inForward(const rt::NonFiniteReport &r) const;

  const rt::Session &train_;
  bool scaled_;
  bool dynamic_ = false;      // the scale is state (it changes), not a constant
  std::vector<bool> forward_; // by value id
  // In an accumulating run, the first non-finite gradient of the
  // micro-steps since the last update: the update's check decides on it.
  std::optional<int64_t> pendingStep_;
  std::string pending_;
};

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_CHECKNUMERICS_H
