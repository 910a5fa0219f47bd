//===- CheckNumerics.cpp - amp-run --check-numerics -----------------------===//

#include "runtime/tooling/CheckNumerics.h"

#include "runtime/tooling/Format.h"
#include "runtime/tooling/NonFinite.h"

namespace ampc::tools {
namespace {

constexpr const char *kScaleParam = "loss_scale";
constexpr const char *kTag = " (--check-numerics)";

} // namespace

rt::Status checkParamsFinite(const rt::Session &session) {
  for (const rt::BindingInfo &b : session.function().params) {
    rt::TensorView v;
    if (rt::Status s = session.param(b.name, v); !s)
      return s;
    if (rt::Status s = checkFinite(v, /*samples=*/false); !s)
      return rt::Status::error("parameter '" + b.name + "': " + s.message());
  }
  return rt::Status::ok();
}

std::string nonFiniteFault(const rt::Session &session) {
  const auto &origin = session.firstNonFinite();
  if (!origin)
    return "";
  return "inf or NaN; the first op that produced one: " + origin->message() +
         kTag;
}

StepNumerics::StepNumerics(const rt::Session &train, const std::string &loss,
                           bool scaled)
    : train_(train), scaled_(scaled) {
  const rt::FunctionInfo &fn = train.function();
  for (const rt::BindingInfo &p : fn.params)
    dynamic_ |= p.name == kScaleParam;
  // The values the loss is computed from: walk back from it through the
  // kernels that wrote each value (and the values a view shares bytes
  // with). Gradients and updates are computed from the loss, not the other
  // way round, so none of them is reached.
  std::vector<int> producer(fn.values.size(), -1);
  for (size_t k = 0; k < fn.kernels.size(); ++k)
    for (int v : fn.kernels[k].outputs)
      producer[v] = static_cast<int>(k);
  forward_.assign(fn.values.size(), false);
  std::vector<int> work;
  for (const rt::BindingInfo &b : fn.outputs)
    if (b.name == loss)
      work.push_back(b.value);
  while (!work.empty()) {
    int v = work.back();
    work.pop_back();
    if (v < 0 || forward_[v])
      continue;
    forward_[v] = true;
    work.push_back(fn.values[v].viewOf);
    if (producer[v] >= 0)
      for (int in : fn.kernels[producer[v]].inputs)
        work.push_back(in);
  }
}

bool StepNumerics::inForward(const rt::NonFiniteReport &r) const {
  const rt::KernelInfo &k = train_.function().kernels[r.kernel];
  return r.output < k.outputs.size() && forward_[k.outputs[r.output]];
}

NumericsVerdict StepNumerics::judge(const StepFacts &f) {
  const auto &origin = train_.firstNonFinite();
  if (!origin && !pendingStep_)
    return {};
  std::string first =
      origin ? "; the first op that produced one: " + origin->message() : "";
  if (!scaled_)
    return {NumericsVerdict::Stop,
            "inf or NaN in a run without loss scaling" + first + kTag};
  if (origin && inForward(*origin))
    return {NumericsVerdict::Stop,
            "inf or NaN in the forward pass (the ops the loss is computed "
            "from), which loss scaling does not handle" +
                first + kTag};
  if (!f.lossFinite)
    return {NumericsVerdict::Stop,
            "the loss is inf or NaN, which loss scaling does not handle" +
                first + kTag};
  // A micro-step's gradients only add up: the update's check decides.
  if (!f.updates) {
    if (origin && !pendingStep_) {
      pendingStep_ = f.step;
      pending_ = origin->message();
    }
    return {};
  }
  std::string at =
      pendingStep_ ? "step " + std::to_string(*pendingStep_) + ", " + pending_
      : origin     ? origin->message()
                   : "";
  std::optional<int64_t> pendingStep = pendingStep_;
  pendingStep_.reset();
  if (f.foundInf) {
    std::string scale = dynamic_ ? "scale " + nineDigits(f.scaleBefore) +
                                       " -> " + nineDigits(f.scaleAfter)
                                 : "static scale " + nineDigits(f.scaleBefore);
    return {NumericsVerdict::Note, "step " + std::to_string(f.step) +
                                       ": overflow handled by loss scaling (" +
                                       scale + ", update skipped)" +
                                       (at.empty() ? "" : "; first at " + at)};
  }
  if (pendingStep)
    return {NumericsVerdict::Stop,
            "the update's overflow check found no inf or NaN, but step " +
                std::to_string(*pendingStep) +
                " made one; the first op that produced it: " + pending_ + kTag};
  return {NumericsVerdict::Stop,
          "inf or NaN that the step's overflow check did not catch "
          "(found_inf is 0)" +
              first + kTag};
}

} // namespace ampc::tools
