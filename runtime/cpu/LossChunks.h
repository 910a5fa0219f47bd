//===- LossChunks.h - softmax cross-entropy's steps, shared ---*- C++ -*-===//
//
// softmax_cross_entropy_grad and softmax_cross_entropy_with_grad compute
// the same gradient, the second without storing the log-probabilities:
// both run these steps, so they give the same bits. A chunk is [C, w]:
// the classes of w consecutive samples of one n (row-major, C rows).
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_LOSSCHUNKS_H
#define AMPC_RUNTIME_CPU_LOSSCHUNKS_H

#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/LossRules.h"

#include <vector>

namespace ampc::rt::cpu::loss {

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

} // namespace ampc::rt::cpu::loss

#endif // AMPC_RUNTIME_CPU_LOSSCHUNKS_H
