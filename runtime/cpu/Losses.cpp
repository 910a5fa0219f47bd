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
  const TensorView &x = call.inputs[0], &loss = call.outputs[0];
  loss::LossSetup s;
  AMPC_RETURN_IF_ERROR(loss::readLossSetup(call, x.shape, 1, s));
  loss::PartialSums sums(s);
  struct Buffers {
    std::vector<T> logProb;
    std::vector<double> terms;
  };
  loss::forEachChunk<Buffers>(ctx, s, [&](Buffers &bf, const loss::Chunk &ch) {
    if (softmax) {
      bf.logProb.resize(static_cast<size_t>(s.c * ch.w));
      loadRows(x, ch.base, s.c, s.d, ch.w, bf.logProb.data());
      softmaxColumns(bf.logProb.data(), s.c, ch.w, /*log=*/true);
      storeRows(bf.logProb.data(), s.c, s.d, ch.w, call.outputs[1], ch.base);
    }
    loss::chunkLoss(
        s, ch,
        [&](int64_t l, int64_t j) {
          return softmax ? static_cast<double>(bf.logProb[l * ch.w + j])
                         : elementAsDouble(x, ch.base + l * s.d + j);
        },
        bf.terms, loss, sums);
  });
  if (!s.none())
    loss::storeReducedLoss(sums, s.la, loss);
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
  const TensorView &grad = call.inputs[0], &x = call.inputs[1],
                   &loss = call.outputs[0], &out = call.outputs[1];
  loss::LossSetup s;
  AMPC_RETURN_IF_ERROR(loss::readLossSetup(call, x.shape, 2, s));
  const double g0 = s.none() ? 0.0 : elementAsDouble(grad, 0);
  loss::PartialSums sums(s);
  struct Buffers {
    std::vector<T> buf, coef;
    std::vector<double> terms, gs;
  };
  loss::forEachChunk<Buffers>(ctx, s, [&](Buffers &bf, const loss::Chunk &ch) {
    bf.buf.resize(static_cast<size_t>(s.c * ch.w));
    loadRows(x, ch.base, s.c, s.d, ch.w, bf.buf.data());
    softmaxColumns(bf.buf.data(), s.c, ch.w, /*log=*/true);
    loss::chunkLoss(
        s, ch,
        [&](int64_t l, int64_t j) {
          return static_cast<double>(bf.buf[l * ch.w + j]);
        },
        bf.terms, loss, sums);
    loss::chunkCoefs(s, ch, grad, g0, bf.gs, bf.coef);
    loss::softmaxCrossEntropyGrad(bf.buf.data(),
                                  s.labels.data() + ch.i * s.d + ch.j0,
                                  bf.coef.data(), s.c, ch.w, s.la);
    storeRows(bf.buf.data(), s.c, s.d, ch.w, out, ch.base);
  });
  if (!s.none())
    loss::storeReducedLoss(sums, s.la, loss);
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
