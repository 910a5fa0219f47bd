//===- VectorExp.h - exp of many floats at once, for softmax and losses ---===//
//
// glibc's expf is a scalar call per element: it was 11% of a transformer's
// CPU training step (the softmaxes and the loss). expInPlace evaluates
// exp in double, four lanes at a time (AVX2 + FMA), and rounds once to
// float; the remainder runs the same operations in scalar code, so every
// element gets the same bits wherever it lies in the array. The result is
// the correctly rounded exp but in rare boundary cases (8 of VectorExpTest's
// 23M samples, glibc's expf 1802; within 1 ulp always), subnormal results
// included; overflow gives inf and NaN stays NaN.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_VECTOREXP_H
#define AMPC_RUNTIME_CPU_VECTOREXP_H

#include <cstdint>

namespace ampc::rt::cpu {

/// x[i] = exp(x[i]) for i in [0, n).
void expInPlace(float *x, int64_t n);

/// One element, the remainder's code (the same bits as a lane).
float expOne(float x);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_VECTOREXP_H
