//===- NonFinite.h - inf and NaN in the data a run is fed -------*- C++ -*-===//
//
// amp-run refuses data holding inf or NaN: a training step fed one computes
// a non-finite loss or gradient, which loss scaling would skip step after
// step without saying why. These checks find the first such element and say
// where it is and what it is. MLIR-free, so amp-exec can share them.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TOOLING_NONFINITE_H
#define AMPC_RUNTIME_TOOLING_NONFINITE_H

#include "runtime/Status.h"
#include "runtime/Tensor.h"

namespace ampc::tools {

/// Checks that every element of the float tensor `t` is finite (any other
/// dtype passes). Otherwise the error names the first element that is not
/// and what it is (NaN, +inf, -inf), and counts them all: with `samples`,
/// axis 0 holds samples ("sample 17, element [2, 3] is NaN (3 values in 2
/// of the 60 samples are NaN or inf)"), else the index is the whole
/// tensor's ("element [0, 5] is -inf (1 of the 12 values is NaN or inf)").
/// `before`, when given, is the same data before it was rounded to t's
/// dtype (a file's f32 or f64 values fed to an f16 input): a finite value
/// there is reported as out of t's range.
rt::Status checkFinite(const rt::TensorView &t, bool samples,
                       const rt::TensorView *before = nullptr);

} // namespace ampc::tools

#endif // AMPC_RUNTIME_TOOLING_NONFINITE_H
