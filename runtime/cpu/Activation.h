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
#include "runtime/ops/ElementwisePlan.h"

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

  bool isGradient() const { return op_->sig == ops::ew::Sig::Grad; }

  // y = op(x), or y = op(g, x) for a gradient; y may be x or g. T is float
  // or double.
  template <typename T> void apply(const T *x, T *y, int64_t n) const;
  template <typename T>
  void apply(const T *g, const T *x, T *y, int64_t n) const;

private:
  const ops::ew::OpInfo *op_ = nullptr;
  ops::ew::Params params_;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_ACTIVATION_H
