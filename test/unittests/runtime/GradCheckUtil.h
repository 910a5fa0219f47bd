//===- GradCheckUtil.h - finite-difference checks of gradient kernels -----===//
//
// A gradient kernel is checked against central finite differences of its
// forward kernel, run through the same CPU backend in f64: for the loss
// L(x) = sum(dy * forward(x)), dL/dx_i is (L(x + h e_i) - L(x - h e_i)) / 2h.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_GRADCHECKUTIL_H
#define AMPC_TEST_RUNTIME_GRADCHECKUTIL_H

#include "NumericKernelTestUtil.h"

#include <algorithm>

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

} // namespace ampc::rt::nktest

#endif // AMPC_TEST_RUNTIME_GRADCHECKUTIL_H
