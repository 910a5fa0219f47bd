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

#include <algorithm>
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

/// What every chunk of a loss call reads: its attributes, [N, C, D] (D the
/// product of the trailing dims of `scores`), the class weights and the
/// checked labels with the mean's denominator (readLabels).
struct LossSetup {
  ops::LossAttrs la;
  int64_t n = 0, c = 0, d = 0;
  std::vector<double> weights;
  std::vector<int64_t> labels;
  double denom = 0;
  bool none() const { return la.reduction == "none"; }
};
inline Status readLossSetup(const OpCall &call, const Shape &scores,
                            size_t labelsAt, LossSetup &s) {
  AMPC_RETURN_IF_ERROR(ops::readLossAttrs(*call.attrs, s.la));
  s.n = scores[0];
  s.c = scores[1];
  s.d = ops::product(scores, 2, scores.size());
  s.weights = classWeights(call, labelsAt + 1, s.c);
  return readLabels(call.inputs[labelsAt], s.c, s.la, s.weights, s.labels,
                    s.denom);
}

/// Samples [j0, j0 + w) of row i of an [N, C, D] loss: `base` is the offset
/// of its first score, `task` its index among chunkTasks(s) (the slot of
/// its partial sums).
struct Chunk {
  int64_t task, i, j0, w, base;
};

constexpr int64_t kLossChunk = 512;
inline int64_t chunksPerRow(const LossSetup &s) {
  return std::max<int64_t>(1, (s.d + kLossChunk - 1) / kLossChunk);
}
inline int64_t chunkTasks(const LossSetup &s) { return s.n * chunksPerRow(s); }

/// fn(state, chunk) for every chunk, in parallel; each range of chunks a
/// thread takes has one State (its buffers).
template <typename State, typename Fn>
void forEachChunk(const CpuContext &ctx, const LossSetup &s, Fn fn) {
  const int64_t chunks = chunksPerRow(s);
  const int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, s.c));
  parallelFor(ctx, chunkTasks(s), grain, [&](int64_t b, int64_t e) {
    State state;
    for (int64_t t = b; t < e; ++t) {
      int64_t i = t / chunks, j0 = (t % chunks) * kLossChunk;
      int64_t w = std::min(kLossChunk, s.d - j0);
      if (w > 0)
        fn(state, Chunk{t, i, j0, w, i * s.c * s.d + j0});
    }
  });
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

/// Per task, the sum of its loss terms and of their weights.
struct PartialSums {
  std::vector<double> loss, weight;
  explicit PartialSums(const LossSetup &s)
      : loss(static_cast<size_t>(chunkTasks(s)), 0.0),
        weight(static_cast<size_t>(chunkTasks(s)), 0.0) {}
};

/// A chunk's loss terms (lossTerms): stored per sample into `loss` without
/// reduction, and summed into the chunk's slots of `sums`; `terms` is
/// scratch.
template <typename LogProbAt>
void chunkLoss(const LossSetup &s, const Chunk &ch, LogProbAt logProbAt,
               std::vector<double> &terms, const TensorView &loss,
               PartialSums &sums) {
  terms.assign(static_cast<size_t>(ch.w), 0.0);
  double ls = 0, ws = 0;
  lossTerms(s.labels.data() + ch.i * s.d + ch.j0, ch.w, s.weights, s.la,
            logProbAt, terms.data(), ls, ws);
  if (s.none())
    storeF64(terms.data(), ch.w, loss, ch.i * s.d + ch.j0);
  sums.loss[ch.task] = ls;
  sums.weight[ch.task] = ws;
}

/// A chunk's gradient coefficients (gradCoefs) into `coef`: the incoming
/// gradient is `grad`'s per-sample value without reduction (read into the
/// scratch `gs`), else its scalar `g0`.
template <typename T>
void chunkCoefs(const LossSetup &s, const Chunk &ch, const TensorView &grad,
                double g0, std::vector<double> &gs, std::vector<T> &coef) {
  if (s.none()) {
    gs.resize(static_cast<size_t>(ch.w));
    loadF64(grad, ch.i * s.d + ch.j0, ch.w, gs.data());
  }
  coef.resize(static_cast<size_t>(ch.w));
  gradCoefs(s.labels.data() + ch.i * s.d + ch.j0, ch.w, s.weights, s.la,
            gs.data(), g0, s.denom, coef.data());
}

/// The loss of reduction "sum" or "mean" from the tasks' partial sums of
/// the loss terms and of their weights, added in task order (so the result
/// does not depend on the thread count); "mean" divides by the summed
/// weights (0/0 is NaN when every label is ignored, as in the ONNX
/// reference).
inline void storeReducedLoss(const PartialSums &sums, const ops::LossAttrs &la,
                             const TensorView &loss) {
  double total = 0, totalWeight = 0;
  for (size_t t = 0; t < sums.loss.size(); ++t) {
    total += sums.loss[t];
    totalWeight += sums.weight[t];
  }
  double result = la.reduction == "sum" ? total : total / totalWeight;
  storeF64(&result, 1, loss, 0);
}

} // namespace ampc::rt::cpu::loss

#endif // AMPC_RUNTIME_CPU_LOSSCHUNKS_H
