//===- GemmPostOp.h - a gemm kernel's epilogue on the CPU -------*- C++ -*-===//
//
// The epilogues of runtime/GemmEpilogue.h for cpu/Contraction.cpp's gemm:
// storing the GEMM's result with the post-op applied to each chunk of the
// compute-type (f32, or f64) values just before they are rounded to the
// stored dtype. Reading and checking a call's epilogue is
// ops/EpilogueChecks.h's.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_GEMMPOSTOP_H
#define AMPC_RUNTIME_CPU_GEMMPOSTOP_H

#include "runtime/GemmEpilogue.h"
#include "runtime/cpu/CpuKernels.h"

namespace ampc::rt::cpu {

// Writes the call's outputs from C, the GEMM's [m, n] result in compute type
// T (float or double), which it may overwrite: the result with `e`'s post-op
// (none when null) applied before rounding, and `e`'s extra output. A is the
// compute-type copy of input a (the bias gradient sums its columns), or
// null when the GEMM read a as stored (bf16 on oneDNN).
template <typename T>
void storeGemmResult(const OpCall &call, const EpilogueInfo *e, T *C,
                     const T *A, const CpuContext &ctx);

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_GEMMPOSTOP_H
