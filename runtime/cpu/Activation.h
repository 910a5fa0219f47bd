//===- Activation.h - one elementwise op over values a kernel holds -------===//
//
// The elementwise kernels' own loops (Elementwise.cpp) for a kernel that
// applies an activation, or an activation's gradient, to values it already
// holds in its compute type: the GEMM epilogues. Given the same values, it
// computes bit for bit what the standalone op computes.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_ACTIVATION_H
#define AMPC_RUNTIME_CPU_ACTIVATION_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

#include <cstdint>
#include <string>

namespace ampc::rt::cpu {

class Activation {
public:
  // `op` is a float unary elementwise op (relu, gelu, ...) or an activation
  // gradient (relu_grad, gelu_grad, ...: grad, input); `attrs` holds its
  // attributes (gelu's `approximate`), checked here.
  static Status make(const std::string &op, const Attrs &attrs,
                     Activation &out);

  bool isGradient() const { return gradient_; }

  // y = op(x), or y = op(g, x) for a gradient; y may be x or g. T is float
  // or double.
  template <typename T> void apply(const T *x, T *y, int64_t n) const;
  template <typename T>
  void apply(const T *g, const T *x, T *y, int64_t n) const;

private:
  int kind_ = -1;
  bool gradient_ = false;
  // Elementwise.cpp's parsed attributes.
  bool geluTanh_ = false, hasMin_ = false, hasMax_ = false;
  double alpha_ = 0.01, min_ = 0, max_ = 0;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_ACTIVATION_H
