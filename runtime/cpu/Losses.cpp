//===- Losses.cpp - softmax_cross_entropy and nll_loss on the CPU ---------===//
//
// ONNX SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss. Inputs are
// viewed as [N, C, D] (D the product of the trailing dims) and worked on in
// (n, column-chunk) tasks. The loss of each element is formed from the
// unrounded log-probability, partial sums are kept per task in double and
// added in task order, so the result does not depend on the thread count.
// A label outside [0, C) that is not ignore_index is a run-time error naming
// the label and C, found before anything is written.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/LossChunks.h"
#include "runtime/ops/LossRules.h"

namespace ampc::rt::cpu {
namespace {
using namespace kh;

template <typename T>
Status runLossT(const OpCall &call, bool softmax, const CpuContext &ctx) {
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  const TensorView &x = call.inputs[0], &loss = call.outputs[0];
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t d = product(x.shape, 2, x.shape.size());
  std::vector<double> weights = loss::classWeights(call, 2, c);
  std::vector<int64_t> lab;
  double denom = 0; // the gradient's; the loss sums its weights per task
  AMPC_RETURN_IF_ERROR(
      loss::readLabels(call.inputs[1], c, la, weights, lab, denom));
  bool none = la.reduction == "none";
  constexpr int64_t kChunk = 512;
  int64_t chunks = std::max<int64_t>(1, (d + kChunk - 1) / kChunk);
  int64_t tasks = n * chunks;
  // Per task: summed loss and summed weight (for "mean").
  std::vector<double> lossSum(tasks, 0.0), weightSum(tasks, 0.0);
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, c));
  parallelFor(ctx, tasks, grain, [&](int64_t b, int64_t e) {
    std::vector<T> buf;
    std::vector<double> lossBuf;
    for (int64_t t = b; t < e; ++t) {
      int64_t i = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, d - j0);
      if (w <= 0)
        continue;
      int64_t base = i * c * d + j0;
      if (softmax) {
        buf.resize(static_cast<size_t>(c * w));
        loadRows(x, base, c, d, w, buf.data());
        softmaxColumns(buf.data(), c, w, /*log=*/true);
        storeRows(buf.data(), c, d, w, call.outputs[1], base);
      }
      lossBuf.assign(static_cast<size_t>(w), 0.0);
      double ls = 0, ws = 0;
      loss::lossTerms(
          lab.data() + i * d + j0, w, weights, la,
          [&](int64_t l, int64_t j) {
            return softmax ? static_cast<double>(buf[l * w + j])
                           : elementAsDouble(x, base + l * d + j);
          },
          lossBuf.data(), ls, ws);
      if (none)
        storeF64(lossBuf.data(), w, loss, i * d + j0);
      lossSum[t] = ls;
      weightSum[t] = ws;
    }
  });
  if (!none)
    loss::storeReducedLoss(lossSum, weightSum, la, loss);
  return Status::ok();
}

template <bool Softmax> Status runLoss(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[0].dtype == DType::F64)
    return runLossT<double>(call, Softmax, ctx);
  return runLossT<float>(call, Softmax, ctx);
}

// softmax_cross_entropy_with_grad: (grad, scores, labels, weights?) ->
// (loss, dscores). Each chunk's log-probabilities give its loss terms as
// runLossT forms them and then, in place, its gradient as
// softmax_cross_entropy_grad forms it (LossChunks.h): the same bits as the
// two kernels, without storing the log-probabilities. Labels are checked
// before anything is written.
template <typename T>
Status runLossWithGradT(const OpCall &call, const CpuContext &ctx) {
  LossAttrs la;
  AMPC_RETURN_IF_ERROR(readLossAttrs(*call.attrs, la));
  const TensorView &grad = call.inputs[0], &x = call.inputs[1],
                   &loss = call.outputs[0], &out = call.outputs[1];
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t d = product(x.shape, 2, x.shape.size());
  std::vector<double> weights = loss::classWeights(call, 3, c);
  std::vector<int64_t> lab;
  double denom = 0;
  AMPC_RETURN_IF_ERROR(
      loss::readLabels(call.inputs[2], c, la, weights, lab, denom));
  const bool none = la.reduction == "none";
  const double g0 = none ? 0.0 : elementAsDouble(grad, 0);
  constexpr int64_t kChunk = 512;
  int64_t chunks = std::max<int64_t>(1, (d + kChunk - 1) / kChunk);
  int64_t tasks = n * chunks;
  std::vector<double> lossSum(tasks, 0.0), weightSum(tasks, 0.0);
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(1, c));
  parallelFor(ctx, tasks, grain, [&](int64_t b, int64_t e) {
    std::vector<T> buf, coef;
    std::vector<double> lossBuf, gs;
    for (int64_t t = b; t < e; ++t) {
      int64_t i = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, d - j0);
      if (w <= 0)
        continue;
      int64_t base = i * c * d + j0;
      const int64_t *lr = lab.data() + i * d + j0;
      buf.resize(static_cast<size_t>(c * w));
      loadRows(x, base, c, d, w, buf.data());
      softmaxColumns(buf.data(), c, w, /*log=*/true);
      lossBuf.assign(static_cast<size_t>(w), 0.0);
      double ls = 0, ws = 0;
      loss::lossTerms(
          lr, w, weights, la,
          [&](int64_t l, int64_t j) {
            return static_cast<double>(buf[l * w + j]);
          },
          lossBuf.data(), ls, ws);
      if (none)
        storeF64(lossBuf.data(), w, loss, i * d + j0);
      lossSum[t] = ls;
      weightSum[t] = ws;
      if (none) {
        gs.resize(static_cast<size_t>(w));
        loadF64(grad, i * d + j0, w, gs.data());
      }
      coef.resize(static_cast<size_t>(w));
      loss::gradCoefs(lr, w, weights, la, gs.data(), g0, denom, coef.data());
      loss::softmaxCrossEntropyGrad(buf.data(), lr, coef.data(), c, w, la);
      storeRows(buf.data(), c, d, w, out, base);
    }
  });
  if (!none)
    loss::storeReducedLoss(lossSum, weightSum, la, loss);
  return Status::ok();
}

Status runLossWithGrad(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[1].dtype == DType::F64)
    return runLossWithGradT<double>(call, ctx);
  return runLossWithGradT<float>(call, ctx);
}

} // namespace

void addLossKernels(std::vector<KernelEntry> &out) {
  out.push_back({"softmax_cross_entropy", runLoss<true>});
  out.push_back({"nll_loss", runLoss<false>});
  out.push_back({"softmax_cross_entropy_with_grad", runLossWithGrad});
}

} // namespace ampc::rt::cpu
