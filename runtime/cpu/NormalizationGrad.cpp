//===- NormalizationGrad.cpp - batch norm and layer norm backward ---------===//
//
// batch_norm_grad (batch statistics, as PyTorch's native_batch_norm_backward
// in training mode) and layer_norm_grad. The sums over the normalized
// elements and the scale/bias gradients accumulate in double over a fixed
// split of the data (partial sums added in split order), so results do not
// depend on the thread count; the elementwise part runs in f32 (f64 when an
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

// Partial sums are kept for at most this many slices of the batch (rows):
// enough to spread over threads, few enough to add up cheaply.
constexpr int64_t kSlices = 16;

// sum(g * (x - mean)) over a contiguous run, in double.
template <typename T>
double dotCenteredD(const T *g, const T *x, int64_t n, double mean) {
  return laneSumD(n, [g, x, mean](int64_t i) {
    return static_cast<double>(g[i]) * (static_cast<double>(x[i]) - mean);
  });
}

bool wantsF64(const OpCall &call) {
  return call.inputs[1].dtype == DType::F64 ||
         call.inputs[2].dtype == DType::F64;
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

// With M values per channel, xhat = (x - mean) * inv_std:
//   bias_grad = sum(g), scale_grad = sum(g * xhat),
//   input_grad = scale * inv_std * (g - bias_grad / M - xhat * scale_grad / M).
//
// With sync_ranks = N, M counts the N ranks' values and the two sums in
// input_grad are the N ranks' (exchanged in double); the scale and bias
// gradients stay this rank's sums, which the gradient all-reduce averages.
template <typename T>
Status runBatchNormGradT(const OpCall &call, CpuContext &ctx) {
  int64_t ranks = 1;
  AMPC_RETURN_IF_ERROR(ops::syncRanksOf(call, sessionRanks(ctx), ranks));
  const TensorView &g = call.inputs[0], &x = call.inputs[1];
  int64_t n = x.shape[0], c = x.shape[1];
  int64_t inner = product(x.shape, 2, x.shape.size());
  std::vector<double> scale(c), mean(c), invStd(c);
  loadF64(call.inputs[2], 0, c, scale.data());
  loadF64(call.inputs[3], 0, c, mean.data());
  loadF64(call.inputs[4], 0, c, invStd.data());
  std::vector<double> sumG(c, 0.0), sumGX(c, 0.0);
  if (x.numElements() > 0) {
    // Pass 1: per (slice of N, channel) partial sums.
    int64_t slices = std::min(n, kSlices);
    std::vector<double> pg(slices * c), pgx(slices * c);
    int64_t perTask = (n + slices - 1) / slices * inner;
    parallelFor(ctx, slices * c,
                std::max<int64_t>(1, 16384 / std::max<int64_t>(1, perTask)),
                [&](int64_t b, int64_t e) {
                  std::vector<T> gb(inner), xb(inner);
                  for (int64_t t = b; t < e; ++t) {
                    int64_t s = t / c, ch = t % c;
                    int64_t n0 = s * n / slices, n1 = (s + 1) * n / slices;
                    double s1 = 0, s2 = 0;
                    for (int64_t i = n0; i < n1; ++i) {
                      int64_t off = (i * c + ch) * inner;
                      loadC(g, off, inner, gb.data());
                      loadC(x, off, inner, xb.data());
                      s1 += sumD(gb.data(), inner);
                      s2 += dotCenteredD(gb.data(), xb.data(), inner, mean[ch]);
                    }
                    pg[t] = s1;
                    pgx[t] = s2;
                  }
                });
    for (int64_t s = 0; s < slices; ++s)
      for (int64_t ch = 0; ch < c; ++ch) {
        sumG[ch] += pg[s * c + ch];
        sumGX[ch] += pgx[s * c + ch];
      }
    // The sums input_grad takes: over every rank's batch when synchronised.
    // One exchange carries both: [sumG..., sumGX...].
    std::vector<double> all(sumG);
    all.insert(all.end(), sumGX.begin(), sumGX.end());
    if (ranks > 1)
      AMPC_RETURN_IF_ERROR(ctx.collective->sumOverRanks(all.data(), 2 * c));
    const double *allG = all.data(), *allGX = all.data() + c;
    // Pass 2: input_grad = k1 * (g - k2 - (x - mean) * k3).
    double m = static_cast<double>(n * inner * ranks);
    std::vector<T> k1(c), k2(c), k3(c), mu(c);
    for (int64_t ch = 0; ch < c; ++ch) {
      k1[ch] = static_cast<T>(scale[ch] * invStd[ch]);
      k2[ch] = static_cast<T>(allG[ch] / m);
      k3[ch] = static_cast<T>(invStd[ch] * invStd[ch] * allGX[ch] / m);
      mu[ch] = static_cast<T>(mean[ch]);
    }
    parallelFor(ctx, n * c,
                std::max<int64_t>(1, 16384 / std::max<int64_t>(1, inner)),
                [&](int64_t b, int64_t e) {
                  std::vector<T> gb(inner), xb(inner);
                  for (int64_t t = b; t < e; ++t) {
                    int64_t ch = t % c, off = t * inner;
                    loadC(g, off, inner, gb.data());
                    loadC(x, off, inner, xb.data());
                    const T a = k1[ch], bb = k2[ch], q = k3[ch], u = mu[ch];
                    for (int64_t k = 0; k < inner; ++k)
                      gb[k] = a * (gb[k] - bb - (xb[k] - u) * q);
                    storeC(gb.data(), inner, call.outputs[0], off);
                  }
                });
  }
  std::vector<double> scaleGrad(c);
  for (int64_t ch = 0; ch < c; ++ch)
    scaleGrad[ch] = invStd[ch] * sumGX[ch];
  storeF64(scaleGrad.data(), c, call.outputs[1], 0);
  storeF64(sumG.data(), c, call.outputs[2], 0);
  return Status::ok();
}

Status runBatchNormGrad(const OpCall &call, CpuContext &ctx) {
  if (wantsF64(call))
    return runBatchNormGradT<double>(call, ctx);
  return runBatchNormGradT<float>(call, ctx);
}

//===----------------------------------------------------------------------===//
// layer_norm_grad
//===----------------------------------------------------------------------===//

// Per row, with D normalized elements, xhat = (x - mean) * inv_std and
// gs = g * scale: input_grad = inv_std * (gs - mean(gs) - xhat * mean(gs *
// xhat)); scale_grad and bias_grad sum g * xhat and g over the rows and
// then over the dimensions the scale was broadcast along.
template <typename T>
void runLayerNormGradT(const OpCall &call, const CpuContext &ctx) {
  const TensorView &g = call.inputs[0], &x = call.inputs[1],
                   &scaleT = call.inputs[2];
  int64_t axis = call.attrs->getInt("axis");
  Shape normalized(x.shape.begin() + axis, x.shape.end());
  int64_t d = numElements(normalized), rows = product(x.shape, 0, axis);
  std::vector<T> scale = expandTo<T>(scaleT, normalized);
  // Where each normalized element's scale came from: its gradients add
  // there.
  std::vector<int64_t> src = broadcastIndex(scaleT.shape, normalized);
  std::vector<double> mean(rows), invStd(rows);
  loadF64(call.inputs[3], 0, rows, mean.data());
  loadF64(call.inputs[4], 0, rows, invStd.data());
  int64_t slices = std::min(rows, kSlices);
  std::vector<double> pScale(static_cast<size_t>(slices * d), 0.0),
      pBias(static_cast<size_t>(slices * d), 0.0);
  const double invD = d > 0 ? 1.0 / static_cast<double>(d) : 0.0;
  parallelFor(ctx, slices, 1, [&](int64_t b, int64_t e) {
    std::vector<T> gb(d), xb(d), gs(d);
    for (int64_t s = b; s < e; ++s) {
      double *ps = pScale.data() + s * d, *pb = pBias.data() + s * d;
      for (int64_t r = s * rows / slices; r < (s + 1) * rows / slices; ++r) {
        loadC(g, r * d, d, gb.data());
        loadC(x, r * d, d, xb.data());
        const T mu = static_cast<T>(mean[r]), is = static_cast<T>(invStd[r]);
        for (int64_t k = 0; k < d; ++k) {
          xb[k] = (xb[k] - mu) * is; // xhat
          gs[k] = gb[k] * scale[k];
          ps[k] += static_cast<double>(gb[k]) * static_cast<double>(xb[k]);
          pb[k] += static_cast<double>(gb[k]);
        }
        double s1 = 0, s2 = 0;
        for (int64_t k = 0; k < d; ++k) {
          s1 += static_cast<double>(gs[k]);
          s2 += static_cast<double>(gs[k]) * static_cast<double>(xb[k]);
        }
        const T m1 = static_cast<T>(s1 * invD), m2 = static_cast<T>(s2 * invD);
        for (int64_t k = 0; k < d; ++k)
          gb[k] = is * (gs[k] - m1 - xb[k] * m2);
        storeC(gb.data(), d, call.outputs[0], r * d);
      }
    }
  });
  std::vector<double> scaleGrad(scaleT.numElements(), 0.0),
      biasGrad(scaleT.numElements(), 0.0);
  for (int64_t k = 0; k < d; ++k) {
    double sg = 0, bg = 0;
    for (int64_t s = 0; s < slices; ++s) {
      sg += pScale[s * d + k];
      bg += pBias[s * d + k];
    }
    scaleGrad[src[k]] += sg;
    biasGrad[src[k]] += bg;
  }
  storeF64(scaleGrad.data(), scaleT.numElements(), call.outputs[1], 0);
  storeF64(biasGrad.data(), scaleT.numElements(), call.outputs[2], 0);
}

Status runLayerNormGrad(const OpCall &call, CpuContext &ctx) {
  if (wantsF64(call))
    runLayerNormGradT<double>(call, ctx);
  else
    runLayerNormGradT<float>(call, ctx);
  return Status::ok();
}

} // namespace

void addNormalizationGradKernels(std::vector<KernelEntry> &out) {
  out.push_back({"batch_norm_grad", runBatchNormGrad});
  out.push_back({"layer_norm_grad", runLayerNormGrad});
}

} // namespace ampc::rt::cpu
