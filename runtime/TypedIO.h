//===- TypedIO.h - moving tensor elements to and from compute types -------===//
//
// Kernels compute f16/bf16/f32 in f32 and f64 in f64. These copy a run of
// elements of any stored dtype into a compute buffer and back, rounding to
// nearest even on the way out (the only place a low-precision value is
// created), so every stored value is rounded exactly once.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_TYPEDIO_H
#define AMPC_RUNTIME_TYPEDIO_H

#include "runtime/Tensor.h"

namespace ampc::rt {

// Element `offset` .. offset+n of `t`, converted. Integers and bools convert
// by value; float to int truncates toward zero (saturating NaN to 0).
void loadF32(const TensorView &t, int64_t offset, int64_t n, float *out);
void storeF32(const float *in, int64_t n, const TensorView &t, int64_t offset);
void loadF64(const TensorView &t, int64_t offset, int64_t n, double *out);
void storeF64(const double *in, int64_t n, const TensorView &t, int64_t offset);
void loadI64(const TensorView &t, int64_t offset, int64_t n, int64_t *out);
void storeI64(const int64_t *in, int64_t n, const TensorView &t,
              int64_t offset);

// Reads one element as double / int64 (slow path for indices and tests).
double elementAsDouble(const TensorView &t, int64_t index);
int64_t elementAsInt(const TensorView &t, int64_t index);

} // namespace ampc::rt

#endif // AMPC_RUNTIME_TYPEDIO_H
