//===- GradCheckUtil.h - finite-difference checks of gradient kernels -----===//
//
// A gradient kernel is checked against central finite differences of its
// forward kernel, run through the same CPU backend in f64: for the loss
// L(x) = sum(dy * forward(x)), dL/dx_i is (L(x + h e_i) - L(x - h e_i)) / 2h.
// Its f32/f16/bf16 runs are checked against the f64 run on the same stored
// values (lowPrecisionTol); the random shapes and inputs those tests draw
// come from here too.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_GRADCHECKUTIL_H
#define AMPC_TEST_RUNTIME_GRADCHECKUTIL_H

#include "NumericKernelTestUtil.h"

#include <algorithm>
#include <numeric>

namespace ampc::rt::nktest {

// sum(dy * y) over the forward call's first output. Terms with dy == 0 are
// left out, so an output that is -inf (a max-pool window of padding only)
// can be excluded by giving it no gradient.
inline double weightedSum(const Call &forward, const Buf &dy) {
  Status s = forward.run();
  EXPECT_TRUE(s.isOk()) << s.message();
  const Buf &y = *forward.outs[0];
  double sum = 0;
  for (int64_t i = 0; i < y.size(); ++i)
    if (dy.get(i) != 0)
      sum += dy.get(i) * y.get(i);
  return sum;
}

// dL/dx for every element of `x`, an f64 input of `forward`, with the step
// h = 1e-6 * max(1, |x_i|). `x` is restored afterwards.
inline std::vector<double> numericGrad(const Call &forward, Buf &x,
                                       const Buf &dy) {
  EXPECT_EQ(x.dtype, DType::F64);
  std::vector<double> grad(static_cast<size_t>(x.size()));
  for (int64_t i = 0; i < x.size(); ++i) {
    double v = x.get(i), h = 1e-6 * std::max(1.0, std::fabs(v));
    x.set(i, v + h);
    double up = weightedSum(forward, dy);
    x.set(i, v - h);
    double down = weightedSum(forward, dy);
    x.set(i, v);
    grad[i] = (up - down) / (2 * h);
  }
  return grad;
}

// The finite differences are accurate to about 1e-9 for the O(1) values
// the tests use; 1e-6 relative (absolute below 1) leaves room for that and
// still catches any misplaced or missing contribution.
inline void expectMatchesNumeric(const Buf &analytic,
                                 const std::vector<double> &numeric,
                                 const std::string &what) {
  ASSERT_EQ(analytic.size(), static_cast<int64_t>(numeric.size())) << what;
  int failures = 0;
  for (int64_t i = 0; i < analytic.size(); ++i) {
    double a = analytic.get(i), n = numeric[i];
    double tol = 1e-6 * std::max(1.0, std::fabs(n));
    if (!(std::fabs(a - n) <= tol) && failures++ < 10)
      ADD_FAILURE() << what << " element " << i << ": kernel " << a
                    << ", finite differences " << n;
  }
}

// An f64 copy of `b`'s stored values (exact for every float dtype), so a
// low-precision run can be compared with the f64 run on the same inputs.
inline Buf asF64(const Buf &b) {
  return makeBuf(DType::F64, b.shape, b.values());
}

// The dtypes whose kernels are compared with the f64 kernel on the same
// stored values.
inline const DType kLowFloats[] = {DType::F32, DType::F16, DType::BF16};

// Uniform in [lo, hi], for random shapes and attributes.
inline int randInt(std::mt19937 &rng, int lo, int hi) {
  return std::uniform_int_distribution<int>(lo, hi)(rng);
}

// Distinct values 0.01 apart in random order, the smallest 0.01 * `lowest`:
// no perturbation of 1e-6 changes which element is a maximum or ties one.
inline Buf distinctBuf(DType t, const Shape &s, uint32_t seed, double lowest) {
  Buf b(t, s);
  std::vector<double> v(static_cast<size_t>(b.size()));
  std::iota(v.begin(), v.end(), 0.0);
  std::shuffle(v.begin(), v.end(), std::mt19937(seed));
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, 0.01 * (v[i] + lowest));
  return b;
}

// Low-precision kernels compute in f32 (sums in f64) and round each result
// once, so on the same stored inputs they differ from the f64 kernel by
// that rounding (half an ulp: 2^-11 relative for f16, 2^-8 for bf16, 2^-24
// for f32; f16 results below 2^-14 are subnormal, with a fixed spacing of
// 2^-24) plus f32 arithmetic error: in sums, and in erf/exp/tanh and in
// Phi(x) + x phi(x) or 1 - tanh^2 for the activations. That error is
// relative to the terms (a few f32 ulps of 1 times |grad| for gelu) rather
// than to a result that is their small difference, as in the tails and
// near gelu's zero crossing: hence an absolute floor that is a fraction of
// the largest value.
struct LowPrecisionTol {
  double rel, absOfMax, absMin;
};
inline LowPrecisionTol lowPrecisionTol(DType t) {
  switch (t) {
  case DType::F16:
    return {1e-3, 1e-5, 0x1p-24};
  case DType::BF16:
    return {8e-3, 1e-4, 0};
  default:
    return {2e-6, 1e-6, 0};
  }
}

// `got` (a low-precision run) against `ref` (the f64 run on the same stored
// values) within lowPrecisionTol.
inline void expectCloseToF64(const Buf &got, const Buf &ref,
                             const std::string &what) {
  std::vector<double> want = ref.values();
  double maxAbs = 0;
  for (double v : want)
    maxAbs = std::max(maxAbs, std::fabs(v));
  LowPrecisionTol tol = lowPrecisionTol(got.dtype);
  expectNear(got, want, tol.absOfMax * maxAbs + tol.absMin, tol.rel, what);
}

} // namespace ampc::rt::nktest

#endif // AMPC_TEST_RUNTIME_GRADCHECKUTIL_H
