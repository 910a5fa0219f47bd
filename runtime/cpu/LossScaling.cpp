//===- LossScaling.cpp - check_finite and update_scale --------------------===//
//
// The two kernels of dynamic loss scaling. check_finite reads every
// gradient once and raises one found_inf flag if anything is inf or NaN
// (the check of PyTorch's _amp_foreach_non_finite_check_and_unscale_,
// without the unscale: the optimizer updates apply 1/scale as they read the
// gradients); update_scale is the scale's state machine (Paddle's
// update_loss_scaling, which covers PyTorch's _amp_update_scale_ and
// MindSpore's DynamicLossScaleUpdateCell through its attributes).
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/OptimizerRules.h"

#include <atomic>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

//===----------------------------------------------------------------------===//
// check_finite(g_0 .. g_{n-1}, scale[, skip]) -> found_inf
//===----------------------------------------------------------------------===//
//
// found_inf = 1 if any element g of any g_i, or g * (1.0f / scale) formed in
// f32 (f64 for f64 gradients), is inf or NaN: the product the updates form
// when they read g with their loss_scale, so a gradient that overflows only
// once unscaled (a scale below 1) counts. Nothing else is written. With
// skip nonzero, found_inf is 0 and nothing is read. skip is told from a
// gradient by its type (endsWithSkip).

constexpr int64_t kBlock = 256;

// Whether any of elements [off, off + len) of g, or of g * inv, is not
// finite. Testing g * inv alone says both: a non-finite g stays non-finite
// times any inv (inf * 0 is NaN).
template <typename T>
bool nonFiniteRun(const TensorView &g, int64_t off, int64_t len, T inv) {
  alignas(64) T in[kBlock];
  const T big = std::numeric_limits<T>::max();
  int bad = 0;
  for (int64_t b = off; b < off + len; b += kBlock) {
    int64_t m = std::min(kBlock, off + len - b);
    loadC(g, b, m, in);
    for (int64_t i = 0; i < m; ++i)
      bad |= !(std::fabs(in[i] * inv) <= big);
  }
  return bad != 0;
}

Status runCheckFinite(const OpCall &call, CpuContext &ctx) {
  uint8_t *foundInf = call.outputs[0].as<uint8_t>();
  const bool skip = endsWithSkip(call);
  const size_t n = call.inputs.size() - (skip ? 2 : 1);
  if (skip && skipped(call, n + 1)) {
    *foundInf = 0;
    return Status::ok();
  }
  const float inv = unscaleFactor(call.inputs[n]);
  // Every gradient cut into chunks, so that one large tensor and many
  // small ones spread over the threads alike.
  constexpr int64_t kChunk = 16384;
  struct Chunk {
    size_t tensor;
    int64_t offset, length;
  };
  std::vector<Chunk> chunks;
  for (size_t i = 0; i < n; ++i) {
    int64_t count = call.inputs[i].numElements();
    for (int64_t off = 0; off < count; off += kChunk)
      chunks.push_back({i, off, std::min(kChunk, count - off)});
  }
  std::atomic<bool> found{false};
  parallelFor(ctx, static_cast<int64_t>(chunks.size()), 2,
              [&](int64_t b, int64_t e) {
                bool bad = false;
                for (int64_t c = b; c < e && !bad; ++c) {
                  const Chunk &ch = chunks[c];
                  const TensorView &g = call.inputs[ch.tensor];
                  bad = g.dtype == DType::F64
                            ? nonFiniteRun<double>(g, ch.offset, ch.length,
                                                   static_cast<double>(inv))
                            : nonFiniteRun<float>(g, ch.offset, ch.length, inv);
                }
                if (bad)
                  found.store(true, std::memory_order_relaxed);
              });
  *foundInf = found.load(std::memory_order_relaxed) ? 1 : 0;
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// update_scale(scale, good_steps, bad_steps, found_inf) -> new_scale,
// new_good_steps, new_bad_steps
//===----------------------------------------------------------------------===//
//
// An overflowing step clears good_steps and counts a bad one; after
// decr_every_n of them in a row the scale is multiplied by backoff (no
// lower than min_scale) and bad_steps restarts. A clean step clears
// bad_steps and counts a good one; after growth_interval of them in a row
// the scale is multiplied by growth (no higher than max_scale, and kept as
// it was if the product is not finite in f32) and good_steps restarts. The
// products are formed in double from the f32 scale and rounded to f32, as
// PyTorch does.

Status runUpdateScale(const OpCall &call, CpuContext &) {
  ScaleAttrs a;
  AMPC_RETURN_IF_ERROR(readScaleAttrs(*call.attrs, a));
  float scale = *call.inputs[0].as<const float>();
  int64_t good = *call.inputs[1].as<const int64_t>();
  int64_t bad = *call.inputs[2].as<const int64_t>();
  bool overflow = *call.inputs[3].as<const uint8_t>() != 0;
  if (overflow) {
    good = 0;
    if (++bad >= a.decrEveryN) {
      double s = static_cast<float>(static_cast<double>(scale) * a.backoff);
      scale = static_cast<float>(s < a.minScale ? a.minScale : s);
      bad = 0;
    }
  } else {
    bad = 0;
    if (++good >= a.growthInterval) {
      float g = static_cast<float>(static_cast<double>(scale) * a.growth);
      if (std::isfinite(g))
        scale = static_cast<double>(g) > a.maxScale
                    ? static_cast<float>(a.maxScale)
                    : g;
      good = 0;
    }
  }
  *call.outputs[0].as<float>() = scale;
  *call.outputs[1].as<int64_t>() = good;
  *call.outputs[2].as<int64_t>() = bad;
  return Status::ok();
}

} // namespace

void addLossScalingKernels(std::vector<KernelEntry> &out) {
  out.push_back({"check_finite", runCheckFinite});
  out.push_back({"update_scale", runUpdateScale});
}

} // namespace ampc::rt::cpu
