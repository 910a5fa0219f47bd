//===- ScalarMath.h - one element of each float elementwise op ------------===//
//
// The value of every float elementwise op of Elementwise.def, and of the
// activation gradients, for one element in compute type T (float for
// f32/f16/bf16, double for f64): the CPU loops (cpu/Elementwise.cpp) and the
// CUDA step interpreter (cuda/kernels/Elementwise.cu) both call these, so
// the two backends compute each op by the same expression. Under nvcc the
// functions are host and device code and call CUDA's float and double
// overloads of the libm names; elsewhere they call <cmath>'s.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_OPS_SCALARMATH_H
#define AMPC_RUNTIME_OPS_SCALARMATH_H

#include "runtime/ops/HostDevice.h"

#ifndef __CUDACC__
#include <cmath>
#endif

namespace ampc::rt::ops::math {

#ifndef __CUDACC__
using std::cos;
using std::erf;
using std::exp;
using std::fabs;
using std::log;
using std::log1p;
using std::pow;
using std::sin;
using std::sqrt;
using std::tanh;
#endif

// NaN propagates; -0 and negatives give +0.
template <typename T> AMPC_HOST_DEVICE T relu(T x) {
  return (x > T(0) || x != x) ? x : T(0);
}
template <typename T> AMPC_HOST_DEVICE T sigmoid(T x) {
  return T(1) / (T(1) + exp(-x));
}
template <typename T> AMPC_HOST_DEVICE T reciprocal(T x) { return T(1) / x; }

// ln(1 + e^x) (ONNX Softplus, PyTorch's nn.Softplus at beta 1), without
// overflow: e^x is taken of -|x| only. NaN propagates.
template <typename T> AMPC_HOST_DEVICE T softplus(T x) {
  return x > T(0) ? x + log1p(exp(-x)) : log1p(exp(x));
}

// PyTorch / ONNX: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), or with
// approximate = "none" 0.5 x (1 + erf(x / sqrt 2)).
template <typename T> AMPC_HOST_DEVICE T geluTanh(T x) {
  const T c = T(0.7978845608028654), a = T(0.044715);
  return T(0.5) * x * (T(1) + tanh(c * (x + a * x * x * x)));
}
template <typename T> AMPC_HOST_DEVICE T geluErf(T x) {
  return T(0.5) * x * (T(1) + erf(x * T(0.7071067811865476)));
}

template <typename T> AMPC_HOST_DEVICE T leakyRelu(T x, T alpha) {
  return x >= T(0) ? x : alpha * x;
}

// NaN passes through (like torch.clamp); an absent bound is infinite.
template <typename T> AMPC_HOST_DEVICE T clip(T x, T lo, T hi) {
  T v = x < lo ? lo : x;
  return v > hi ? hi : v;
}

// max(0, min(1, alpha x + beta)); NaN propagates.
template <typename T> AMPC_HOST_DEVICE T hardSigmoid(T x, T alpha, T beta) {
  return clip(alpha * x + beta, T(0), T(1));
}

// PyTorch's nn.Hardswish: x * min(max(x + 3, 0), 6) / 6 (ONNX HardSwish,
// x * hard_sigmoid(x) with alpha = 1/6 and beta = 0.5, in PyTorch's
// rounding); NaN propagates.
template <typename T> AMPC_HOST_DEVICE T hardSwish(T x) {
  return x * clip(x + T(3), T(0), T(6)) / T(6);
}

//===----------------------------------------------------------------------===//
// Gradients: (g, x) -> d loss / d x, g the incoming gradient and x the
// forward input. Where the derivative is piecewise the gradient is
// selected, not multiplied by 0/1, so an inf or NaN g in a cut-off region
// does not leak through (PyTorch's rule); bounds compare in T, as the
// forward compares them.
//===----------------------------------------------------------------------===//

template <typename T> AMPC_HOST_DEVICE T reluGrad(T g, T x) {
  return x > T(0) ? g : T(0);
}

// g * sign(x): sign is +-1, 0 at +-0 and NaN at NaN.
template <typename T> AMPC_HOST_DEVICE T absGrad(T g, T x) {
  T sg = x > T(0) ? T(1) : x < T(0) ? T(-1) : x * T(0);
  return g * sg;
}

template <typename T> AMPC_HOST_DEVICE T leakyReluGrad(T g, T x, T alpha) {
  return x > T(0) ? g : alpha * g;
}

// d/dx 0.5 x (1 + tanh(u)), u = c (x + a x^3):
// 0.5 (1 + tanh u) + 0.5 x (1 - tanh^2 u) c (1 + 3 a x^2).
template <typename T> AMPC_HOST_DEVICE T geluTanhGrad(T g, T x) {
  const T c = T(0.7978845608028654), a = T(0.044715);
  T x2 = x * x;
  T t = tanh(c * (x + a * x2 * x));
  T d = T(0.5) * (T(1) + t) +
        T(0.5) * x * (T(1) - t * t) * c * (T(1) + T(3) * a * x2);
  return g * d;
}

// Phi(x) + x phi(x).
template <typename T> AMPC_HOST_DEVICE T geluErfGrad(T g, T x) {
  const T r = T(0.7071067811865476), invSqrt2Pi = T(0.3989422804014327);
  T cdf = T(0.5) * (T(1) + erf(x * r));
  T pdf = exp(T(-0.5) * x * x) * invSqrt2Pi;
  return g * (cdf + x * pdf);
}

// alpha g where the forward is on its slope (0 < alpha x + beta < 1), as
// PyTorch's hardsigmoid_backward keeps grad / 6 for -3 < x < 3.
template <typename T>
AMPC_HOST_DEVICE T hardSigmoidGrad(T g, T x, T alpha, T beta) {
  T v = alpha * x + beta;
  return (v > T(0) && v < T(1)) ? alpha * g : T(0);
}

// PyTorch's hardswish_backward: 0 below -3, grad * (x / 3 + 0.5) up to 3,
// grad above (and at NaN).
template <typename T> AMPC_HOST_DEVICE T hardSwishGrad(T g, T x) {
  T slope = g * (x / T(3) + T(0.5));
  return x < T(-3) ? T(0) : x <= T(3) ? slope : g;
}

template <typename T>
AMPC_HOST_DEVICE T clipGrad(T g, T x, bool hasLo, T lo, bool hasHi, T hi) {
  bool keep = (!hasLo || x >= lo) && (!hasHi || x <= hi);
  return keep ? g : T(0);
}

} // namespace ampc::rt::ops::math

#endif // AMPC_RUNTIME_OPS_SCALARMATH_H
