//===- Normalization.cpp - batch norm and layer norm on the CPU -----------===//
//
// Statistics (means, variances) accumulate in double with a two-pass scheme,
// so they are at least as accurate as the GPU's f32 Welford and independent
// of the reduction order; the normalization itself runs in f32 (f64 when an
// operand is f64) and each stored value is rounded once.
//
//===----------------------------------------------------------------------===//
#include "runtime/Collective.h"
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/cpu/Ranks.h"

#include <cmath>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

// Sum of squared deviations from `mean` of a contiguous run, in double.
template <typename T> double sqDevD(const T *x, int64_t n, double mean) {
  return laneSumD(n, [x, mean](int64_t i) {
    double d = static_cast<double>(x[i]) - mean;
    return d * d;
  });
}

//===----------------------------------------------------------------------===//
// batch_norm_inference / batch_norm_training
//===----------------------------------------------------------------------===//

// Visits x[n, c0:c1, :] for every n as one contiguous block, for channel
// ranges split across threads and into blocks of bounded size.
template <typename Fn>
void forChannelBlocks(const CpuContext &ctx, int64_t channels, int64_t inner,
                      Fn fn) {
  constexpr int64_t kBlock = 1 << 16;
  int64_t perBlock = std::max<int64_t>(1, kBlock / std::max<int64_t>(inner, 1));
  parallelFor(ctx, channels, 1, [&](int64_t b, int64_t e) {
    for (int64_t c0 = b; c0 < e; c0 += perBlock)
      fn(c0, std::min(e, c0 + perBlock));
  });
}

/// Synchronised batch norm's statistics: the sums per channel of the
/// rank's batch, then of its squared deviations from the mean of all the
/// ranks' batches, each summed over the ranks (in double), over `count`
/// values per channel on each of `ranks` ranks.
template <typename T>
Status syncedStatistics(const OpCall &call, CpuContext &ctx, int64_t ranks,
                        double eps, std::vector<double> &mean,
                        std::vector<double> &invStd, std::vector<double> &var) {
  const TensorView &x = call.inputs[0];
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t inner = product(x.shape, 2, x.shape.size());
  double total = static_cast<double>(n * inner * ranks);
  std::vector<double> sums(c, 0.0);
  for (int pass = 0; pass < 2; ++pass) {
    forChannelBlocks(ctx, c, inner, [&](int64_t c0, int64_t c1) {
      std::vector<T> buf(static_cast<size_t>((c1 - c0) * inner));
      for (int64_t i = 0; i < n; ++i) {
        loadC(x, (i * c + c0) * inner, (c1 - c0) * inner, buf.data());
        for (int64_t ch = c0; ch < c1; ++ch) {
          const T *p = buf.data() + (ch - c0) * inner;
          sums[ch] += pass == 0 ? sumD(p, inner) : sqDevD(p, inner, mean[ch]);
        }
      }
    });
    AMPC_RETURN_IF_ERROR(ctx.collective->sumOverRanks(sums.data(), c));
    for (int64_t ch = 0; ch < c; ++ch) {
      if (pass == 0) {
        mean[ch] = sums[ch] / total;
      } else {
        var[ch] = sums[ch] / total;
        invStd[ch] = 1.0 / std::sqrt(var[ch] + eps);
      }
      sums[ch] = 0.0;
    }
  }
  return Status::ok();
}

template <typename T>
Status runBatchNormT(const OpCall &call, bool training, CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t inner = product(x.shape, 2, x.shape.size());
  double eps = call.attrs->getFloat("epsilon");
  double momentum = call.attrs->getFloat("momentum");
  int64_t ranks = 1;
  if (training)
    AMPC_RETURN_IF_ERROR(ops::syncRanksOf(call, sessionRanks(ctx), ranks));
  std::vector<double> scale(c), bias(c), m(c), v(c);
  loadF64(call.inputs[1], 0, c, scale.data());
  loadF64(call.inputs[2], 0, c, bias.data());
  loadF64(call.inputs[3], 0, c, m.data());
  loadF64(call.inputs[4], 0, c, v.data());
  // Per channel: y = (x - mean) * a + bias with a = scale / sqrt(var + eps).
  std::vector<double> mean(c), invStd(c), batchVar(c);
  int64_t count = n * inner;
  if (ranks > 1)
    AMPC_RETURN_IF_ERROR(
        syncedStatistics<T>(call, ctx, ranks, eps, mean, invStd, batchVar));
  forChannelBlocks(ctx, c, inner, [&](int64_t c0, int64_t c1) {
    std::vector<T> buf(static_cast<size_t>((c1 - c0) * inner));
    if (training && ranks == 1) {
      std::vector<double> s(c1 - c0, 0.0), q(c1 - c0, 0.0);
      for (int64_t i = 0; i < n; ++i) {
        loadC(x, (i * c + c0) * inner, (c1 - c0) * inner, buf.data());
        for (int64_t ch = c0; ch < c1; ++ch)
          s[ch - c0] += sumD(buf.data() + (ch - c0) * inner, inner);
      }
      for (int64_t ch = c0; ch < c1; ++ch)
        mean[ch] = s[ch - c0] / static_cast<double>(count);
      for (int64_t i = 0; i < n; ++i) {
        loadC(x, (i * c + c0) * inner, (c1 - c0) * inner, buf.data());
        for (int64_t ch = c0; ch < c1; ++ch)
          q[ch - c0] += sqDevD(buf.data() + (ch - c0) * inner, inner, mean[ch]);
      }
      for (int64_t ch = c0; ch < c1; ++ch) {
        double var = q[ch - c0] / static_cast<double>(count);
        invStd[ch] = 1.0 / std::sqrt(var + eps);
        batchVar[ch] = var;
      }
    } else if (!training) {
      for (int64_t ch = c0; ch < c1; ++ch) {
        mean[ch] = m[ch];
        invStd[ch] = 1.0 / std::sqrt(v[ch] + eps);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      loadC(x, (i * c + c0) * inner, (c1 - c0) * inner, buf.data());
      for (int64_t ch = c0; ch < c1; ++ch) {
        T mu = static_cast<T>(mean[ch]);
        T a = static_cast<T>(scale[ch] * invStd[ch]);
        T b = static_cast<T>(bias[ch]);
        T *p = buf.data() + (ch - c0) * inner;
        for (int64_t k = 0; k < inner; ++k)
          p[k] = (p[k] - mu) * a + b;
      }
      storeC(buf.data(), (c1 - c0) * inner, out, (i * c + c0) * inner);
    }
  });
  if (!training)
    return Status::ok();
  std::vector<double> newMean(c), newVar(c);
  for (int64_t ch = 0; ch < c; ++ch) {
    newMean[ch] = m[ch] * momentum + mean[ch] * (1 - momentum);
    // ONNX (BatchNormalization-15 and its reference) updates the running
    // variance with the biased batch variance; PyTorch uses the unbiased one.
    newVar[ch] = v[ch] * momentum + batchVar[ch] * (1 - momentum);
  }
  storeF64(newMean.data(), c, call.outputs[1], 0);
  storeF64(newVar.data(), c, call.outputs[2], 0);
  storeF64(mean.data(), c, call.outputs[3], 0);
  storeF64(invStd.data(), c, call.outputs[4], 0);
  return Status::ok();
}

bool wantsF64(const OpCall &call) {
  return call.inputs[0].dtype == DType::F64 ||
         call.inputs[1].dtype == DType::F64;
}

Status runBNInference(const OpCall &call, CpuContext &ctx) {
  if (wantsF64(call))
    return runBatchNormT<double>(call, false, ctx);
  return runBatchNormT<float>(call, false, ctx);
}
Status runBNTraining(const OpCall &call, CpuContext &ctx) {
  if (wantsF64(call))
    return runBatchNormT<double>(call, true, ctx);
  return runBatchNormT<float>(call, true, ctx);
}

//===----------------------------------------------------------------------===//
// layer_norm
//===----------------------------------------------------------------------===//

template <typename T>
void runLayerNormT(const OpCall &call, const CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  int64_t axis = call.attrs->getInt("axis");
  double eps = call.attrs->getFloat("epsilon");
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  int64_t d = numElements(normalized);
  int64_t rows = product(x.shape, 0, axis);
  std::vector<T> scale = expandTo<T>(call.inputs[1], normalized);
  std::vector<T> bias;
  if (hasInput(call, 2))
    bias = expandTo<T>(call.inputs[2], normalized);
  int64_t grain = std::max<int64_t>(1, 4096 / std::max<int64_t>(d, 1));
  parallelFor(ctx, rows, grain, [&](int64_t b, int64_t e) {
    std::vector<T> buf(static_cast<size_t>(d));
    for (int64_t r = b; r < e; ++r) {
      loadC(x, r * d, d, buf.data());
      double mean = sumD(buf.data(), d) / static_cast<double>(d);
      double var = sqDevD(buf.data(), d, mean) / static_cast<double>(d);
      double inv = 1.0 / std::sqrt(var + eps);
      storeF64(&mean, 1, call.outputs[1], r);
      storeF64(&inv, 1, call.outputs[2], r);
      T mu = static_cast<T>(mean), is = static_cast<T>(inv);
      T *p = buf.data();
      if (bias.empty())
        for (int64_t k = 0; k < d; ++k)
          p[k] = (p[k] - mu) * is * scale[k];
      else
        for (int64_t k = 0; k < d; ++k)
          p[k] = (p[k] - mu) * is * scale[k] + bias[k];
      storeC(p, d, out, r * d);
    }
  });
}

Status runLayerNorm(const OpCall &call, CpuContext &ctx) {
  if (wantsF64(call))
    runLayerNormT<double>(call, ctx);
  else
    runLayerNormT<float>(call, ctx);
  return Status::ok();
}

} // namespace

void addNormalizationKernels(std::vector<KernelEntry> &out) {
  out.push_back({"batch_norm_inference", runBNInference});
  out.push_back({"batch_norm_training", runBNTraining});
  out.push_back({"layer_norm", runLayerNorm});
}

} // namespace ampc::rt::cpu
