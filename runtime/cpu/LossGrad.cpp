//===- LossGrad.cpp - softmax, loss and reduce_max gradients on the CPU ---===//
//
// softmax_grad, log_softmax_grad, softmax_cross_entropy_grad, nll_loss_grad
// and reduce_max_grad. Tensors are viewed as [outer, len, inner] (softmax)
// or [N, C, D] (losses) and worked on in (row, column-chunk) tasks, so each
// thread writes its own block. Sums along the reduced axis accumulate in
// double; elementwise work runs in f32 (f64 for f64) and each stored value
// is rounded once. Labels are validated as the forward losses do: one
// outside [0, C) that is not ignore_index is an error naming it.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/LossChunks.h"
#include "runtime/ops/LossRules.h"
#include "runtime/ops/ReducePlan.h"

#include <cmath>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

//===----------------------------------------------------------------------===//
// softmax_grad / log_softmax_grad
//===----------------------------------------------------------------------===//

// softmax: y * (g - sum(g * y)); log_softmax: g - exp(y) * sum(g).
template <typename T>
void runSoftmaxGradT(const OpCall &call, bool log, const CpuContext &ctx) {
  const TensorView &g = call.inputs[0], &y = call.inputs[1],
                   &out = call.outputs[0];
  int64_t axis = call.attrs->getInt("axis");
  int64_t outer = product(g.shape, 0, axis), len = g.shape[axis];
  int64_t inner = product(g.shape, axis + 1, g.shape.size());
  if (g.numElements() == 0)
    return;
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len));
  parallelFor(ctx, outer * chunks, grain, [&](int64_t b, int64_t e) {
    std::vector<T> gb, yb, s;
    std::vector<double> sum;
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, inner - j0);
      int64_t base = o * len * inner + j0;
      gb.resize(static_cast<size_t>(len * w));
      yb.resize(static_cast<size_t>(len * w));
      loadRows(g, base, len, inner, w, gb.data());
      loadRows(y, base, len, inner, w, yb.data());
      if (w == 1) {
        // One contiguous row (the last axis): plain loops over it.
        const T sr = static_cast<T>(log ? sumD(gb.data(), len)
                                        : dotD(gb.data(), yb.data(), len));
        T *gr = gb.data();
        const T *yr = yb.data();
        if (log)
          for (int64_t r = 0; r < len; ++r)
            gr[r] = gr[r] - std::exp(yr[r]) * sr;
        else
          for (int64_t r = 0; r < len; ++r)
            gr[r] = yr[r] * (gr[r] - sr);
        storeRows(gb.data(), len, inner, w, out, base);
        continue;
      }
      sum.assign(static_cast<size_t>(w), 0.0);
      for (int64_t r = 0; r < len; ++r) {
        const T *gr = gb.data() + r * w, *yr = yb.data() + r * w;
        if (log)
          for (int64_t j = 0; j < w; ++j)
            sum[j] += static_cast<double>(gr[j]);
        else
          for (int64_t j = 0; j < w; ++j)
            sum[j] += static_cast<double>(gr[j]) * static_cast<double>(yr[j]);
      }
      s.assign(sum.begin(), sum.end());
      for (int64_t r = 0; r < len; ++r) {
        T *gr = gb.data() + r * w;
        const T *yr = yb.data() + r * w;
        if (log)
          for (int64_t j = 0; j < w; ++j)
            gr[j] = gr[j] - std::exp(yr[j]) * s[j];
        else
          for (int64_t j = 0; j < w; ++j)
            gr[j] = yr[j] * (gr[j] - s[j]);
      }
      storeRows(gb.data(), len, inner, w, out, base);
    }
  });
}

template <bool Log> Status runSoftmaxGrad(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[0].dtype == DType::F64)
    runSoftmaxGradT<double>(call, Log, ctx);
  else
    runSoftmaxGradT<float>(call, Log, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax_cross_entropy_grad / nll_loss_grad
//===----------------------------------------------------------------------===//

template <typename T>
Status runLossGradT(const OpCall &call, bool softmax, const CpuContext &ctx) {
  const TensorView &grad = call.inputs[0], &out = call.outputs[0];
  loss::LossSetup s;
  AMPC_RETURN_IF_ERROR(
      loss::readLossSetup(call, out.shape, softmax ? 2 : 1, s));
  if (out.numElements() == 0)
    return Status::ok();
  const double g0 = s.none() ? 0.0 : elementAsDouble(grad, 0);
  struct Buffers {
    std::vector<T> buf, coef;
    std::vector<double> gs;
  };
  loss::forEachChunk<Buffers>(ctx, s, [&](Buffers &bf, const loss::Chunk &ch) {
    const int64_t *lr = s.labels.data() + ch.i * s.d + ch.j0;
    loss::chunkCoefs(s, ch, grad, g0, bf.gs, bf.coef);
    bf.buf.resize(static_cast<size_t>(s.c * ch.w));
    if (softmax) {
      loadRows(call.inputs[1], ch.base, s.c, s.d, ch.w, bf.buf.data());
      loss::softmaxCrossEntropyGrad(bf.buf.data(), lr, bf.coef.data(), s.c,
                                    ch.w, s.la);
    } else {
      std::fill(bf.buf.begin(), bf.buf.end(), T(0));
      for (int64_t j = 0; j < ch.w; ++j)
        if (!(s.la.ignoreIndex && lr[j] == *s.la.ignoreIndex))
          bf.buf[lr[j] * ch.w + j] = -bf.coef[j];
    }
    storeRows(bf.buf.data(), s.c, s.d, ch.w, out, ch.base);
  });
  return Status::ok();
}

template <bool Softmax>
Status runLossGrad(const OpCall &call, CpuContext &ctx) {
  if (call.outputs[0].dtype == DType::F64)
    return runLossGradT<double>(call, Softmax, ctx);
  return runLossGradT<float>(call, Softmax, ctx);
}

//===----------------------------------------------------------------------===//
// reduce_max_grad
//===----------------------------------------------------------------------===//

template <typename T> inline bool isMax(T v, T m) {
  return v == m || (m != m && v != v);
}

template <typename T>
void runReduceMaxGradT(const OpCall &call, const CpuContext &ctx) {
  const TensorView &x = call.inputs[1], &out = call.outputs[0];
  if (x.numElements() == 0)
    return;
  Scratch<T> gStore, mStore;
  const T *gv = computeView<T>(call.inputs[0], gStore, ctx);
  const T *mv = computeView<T>(call.inputs[2], mStore, ctx);
  const ReducePlan p = planReduce(x.shape, call.attrs->getInts("axes"));
  const size_t last = p.last();
  const std::vector<int64_t> &redOffs = p.redOffs;
  const int64_t groups = call.inputs[0].numElements();
  if (p.reduced[last]) {
    // Group o is redOffs.size() contiguous rows of length len.
    int64_t len = p.dims[last];
    int64_t grain = std::max<int64_t>(
        1, 16384 / std::max<int64_t>(
                       1, len * static_cast<int64_t>(redOffs.size())));
    parallelFor(ctx, groups, grain, [&](int64_t b, int64_t e) {
      std::vector<T> row(static_cast<size_t>(len));
      for (int64_t o = b; o < e; ++o) {
        int64_t base = p.keptBase(o), count = 0;
        const T m = mv[o];
        for (int64_t r : redOffs) {
          loadC(x, base + r, len, row.data());
          for (int64_t j = 0; j < len; ++j)
            count += isMax(row[j], m);
        }
        const T share = count ? gv[o] / static_cast<T>(count) : T(0);
        for (int64_t r : redOffs) {
          loadC(x, base + r, len, row.data());
          for (int64_t j = 0; j < len; ++j)
            row[j] = isMax(row[j], m) ? share : T(0);
          storeC(row.data(), len, out, base + r);
        }
      }
    });
    return;
  }
  // The last dim is kept: group (pre, j) is column j of the rows at
  // keptBase(pre) + redOffs, worked on in column chunks.
  int64_t vec = p.dims[last], prefixes = groups / vec;
  constexpr int64_t kChunk = 2048;
  int64_t chunks = (vec + kChunk - 1) / kChunk;
  parallelFor(ctx, prefixes * chunks, 1, [&](int64_t b, int64_t e) {
    std::vector<T> row(kChunk), share(kChunk);
    std::vector<int64_t> count(kChunk);
    for (int64_t t = b; t < e; ++t) {
      int64_t pre = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, vec - j0);
      int64_t base = p.keptBase(pre) + j0, g0 = pre * vec + j0;
      std::fill(count.begin(), count.begin() + w, 0);
      for (int64_t r : redOffs) {
        loadC(x, base + r, w, row.data());
        for (int64_t j = 0; j < w; ++j)
          count[j] += isMax(row[j], mv[g0 + j]);
      }
      for (int64_t j = 0; j < w; ++j)
        share[j] = count[j] ? gv[g0 + j] / static_cast<T>(count[j]) : T(0);
      for (int64_t r : redOffs) {
        loadC(x, base + r, w, row.data());
        for (int64_t j = 0; j < w; ++j)
          row[j] = isMax(row[j], mv[g0 + j]) ? share[j] : T(0);
        storeC(row.data(), w, out, base + r);
      }
    }
  });
}

Status runReduceMaxGrad(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[1].dtype == DType::F64)
    runReduceMaxGradT<double>(call, ctx);
  else
    runReduceMaxGradT<float>(call, ctx);
  return Status::ok();
}

} // namespace

void addLossGradKernels(std::vector<KernelEntry> &out) {
  out.push_back({"softmax_grad", runSoftmaxGrad<false>});
  out.push_back({"log_softmax_grad", runSoftmaxGrad<true>});
  out.push_back({"softmax_cross_entropy_grad", runLossGrad<true>});
  out.push_back({"nll_loss_grad", runLossGrad<false>});
  out.push_back({"reduce_max_grad", runReduceMaxGrad});
}

} // namespace ampc::rt::cpu
