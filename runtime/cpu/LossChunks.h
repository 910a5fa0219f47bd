//===- LossChunks.h - softmax cross-entropy's steps, shared ---*- C++ -*-===//
//
// softmax_cross_entropy (and nll_loss), softmax_cross_entropy_grad (and
// nll_loss_grad) and softmax_cross_entropy_with_grad, which computes the
// loss and the gradient of the first two without storing the
// log-probabilities, run these steps, so they give the same bits. A chunk is
// [C, w]: the classes of w consecutive samples of one n (row-major, C rows).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_LOSSCHUNKS_H
#define AMPC_RUNTIME_CPU_LOSSCHUNKS_H

#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/LossRules.h"

#include <vector>

namespace ampc::rt::cpu::loss {

/// The class weights of input `at` as doubles, or none when the call has
/// no such input (every class weighs 1).
inline std::vector<double> classWeights(const OpCall &call, size_t at,
                                        int64_t c) {
  std::vector<double> weights;
  if (hasInput(call, at)) {
    weights.resize(static_cast<size_t>(c));
    loadF64(call.inputs[at], 0, c, weights.data());
  }
  return weights;
}

/// Every sample's label, checked before anything is written (one outside
/// [0, C) that is not ignore_index is the error), and the mean's
/// denominator: the weights of the labels not ignored, summed in sample
/// order.
inline Status readLabels(const TensorView &labels, int64_t c,
                         const ops::LossAttrs &la,
                         const std::vector<double> &weights,
                         std::vector<int64_t> &lab, double &denom) {
  lab.resize(static_cast<size_t>(labels.numElements()));
  loadI64(labels, 0, labels.numElements(), lab.data());
  denom = 0;
  for (int64_t s = 0; s < static_cast<int64_t>(lab.size()); ++s) {
    int64_t l = lab[s];
    if (la.ignoreIndex && l == *la.ignoreIndex)
      continue;
    if (l < 0 || l >= c)
      return ops::labelOutOfRange(l, s, c, la);
    denom += weights.empty() ? 1.0 : weights[l];
  }
  return Status::ok();
}

/// The loss terms of a chunk: -log_prob * weight for each sample not
/// ignored (0 for an ignored one) into `terms`, their sum and their weights
/// added into `ls` and `ws` in sample order. `logProbAt(label, j)` reads
/// sample j's log-probability of its label.
template <typename LogProbAt>
void lossTerms(const int64_t *lr, int64_t w, const std::vector<double> &weights,
               const ops::LossAttrs &la, LogProbAt logProbAt, double *terms,
               double &ls, double &ws) {
  for (int64_t j = 0; j < w; ++j) {
    int64_t l = lr[j];
    if (la.ignoreIndex && l == *la.ignoreIndex)
      continue;
    double wt = weights.empty() ? 1.0 : weights[l];
    double v = -logProbAt(l, j) * wt;
    terms[j] = v;
    ls += v;
    ws += wt;
  }
}

/// Per sample of a chunk: weight * grad / D, where grad is `gs[j]` without
/// reduction, else `g0`, and D divides only for "mean" (0 when D is 0: no
/// sample shares the gradient); an ignored sample gets 0.
template <typename T>
void gradCoefs(const int64_t *lr, int64_t w, const std::vector<double> &weights,
               const ops::LossAttrs &la, const double *gs, double g0,
               double denom, T *coef) {
  const bool none = la.reduction == "none", mean = la.reduction == "mean";
  for (int64_t j = 0; j < w; ++j) {
    int64_t l = lr[j];
    if (la.ignoreIndex && l == *la.ignoreIndex) {
      coef[j] = T(0);
      continue;
    }
    double v = (weights.empty() ? 1.0 : weights[l]) * (none ? gs[j] : g0);
    if (mean)
      v = denom != 0 ? v / denom : 0.0;
    coef[j] = static_cast<T>(v);
  }
}

/// The gradient of a chunk of log-probabilities, in place:
/// (exp(log_prob) - onehot(label)) * coef; an ignored sample's column is 0
/// (its log_prob may be anything, even NaN: 0 is written, not 0 * exp).
template <typename T>
void softmaxCrossEntropyGrad(T *buf, const int64_t *lr, const T *coef,
                             int64_t c, int64_t w, const ops::LossAttrs &la) {
  auto ignored = [&](int64_t l) {
    return la.ignoreIndex && l == *la.ignoreIndex;
  };
  kh::expAll(buf, c * w);
  for (int64_t j = 0; j < w; ++j)
    if (!ignored(lr[j]))
      buf[lr[j] * w + j] -= T(1);
  if (w == 1) {
    for (int64_t r = 0; r < c; ++r)
      buf[r] *= coef[0];
  } else {
    for (int64_t r = 0; r < c; ++r) {
      T *row = buf + r * w;
      for (int64_t j = 0; j < w; ++j)
        row[j] *= coef[j];
    }
  }
  for (int64_t j = 0; j < w; ++j)
    if (ignored(lr[j]))
      for (int64_t r = 0; r < c; ++r)
        buf[r * w + j] = T(0);
}

/// The loss of reduction "sum" or "mean" from the tasks' partial sums of
/// the loss terms and of their weights, added in task order (so the result
/// does not depend on the thread count); "mean" divides by the summed
/// weights (0/0 is NaN when every label is ignored, as in the ONNX
/// reference).
inline void storeReducedLoss(const std::vector<double> &lossSum,
                             const std::vector<double> &weightSum,
                             const ops::LossAttrs &la, const TensorView &loss) {
  double total = 0, totalWeight = 0;
  for (size_t t = 0; t < lossSum.size(); ++t) {
    total += lossSum[t];
    totalWeight += weightSum[t];
  }
  double result = la.reduction == "sum" ? total : total / totalWeight;
  storeF64(&result, 1, loss, 0);
}

} // namespace ampc::rt::cpu::loss

#endif // AMPC_RUNTIME_CPU_LOSSCHUNKS_H
