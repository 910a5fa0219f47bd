//===- Dnnl.h - oneDNN matmul primitives for the CPU contractions ---------===//
//
// The CPU backend's f32 and bf16 GEMMs run as oneDNN matmul primitives,
// created once per call shape when a session prepares its kernels. bf16
// operands are read as they are stored (AVX512_BF16 dot products or AMX
// tiles, f32 accumulation) when the CPU has such instructions; elsewhere
// the caller widens them to f32 first. The result is always f32, so the
// caller's epilogue and its one rounding to the stored dtype stay as they
// were with OpenBLAS.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_DNNL_H
#define AMPC_RUNTIME_CPU_DNNL_H

#include "runtime/Status.h"

#include <cstdint>
#include <memory>
#include <string>

namespace ampc::rt::cpu {

// Whether this CPU multiplies bf16 natively (AVX512_BF16 or AMX-BF16) as
// oneDNN sees it; DNNL_MAX_CPU_ISA=AVX512_CORE turns it off (the tests run
// both paths that way). Checked once.
bool nativeBf16Contractions();

// The ISA oneDNN dispatches to, for amp-run's summary ("avx512_core_amx").
std::string dnnlIsaName();

// The OpenMP team oneDNN runs its primitives on, for primitives executed
// from the calling thread from now on. The session sets it to its thread
// count before every run, so that --threads N means N cores for every
// kernel.
void setDnnlThreads(int threads);

// C[b] = alpha * op(A[b]) * op(B[b]) (+ C[b] when accumulate), for b in
// [0, batch): A, B row-major with leading dimensions lda, ldb (as stored,
// before op), batchStrideA/B elements apart (0: one matrix for every b);
// C contiguous f32 [batch, m, n].
struct DnnlMatmulShape {
  int64_t batch = 1, m = 0, n = 0, k = 0;
  bool transA = false, transB = false;
  int64_t lda = 0, ldb = 0;
  int64_t batchStrideA = 0, batchStrideB = 0;
  bool bf16 = false; // A and B are bf16 (else f32)
  float alpha = 1;
  bool accumulate = false;
};

class DnnlMatmul {
public:
  // m, n, k >= 1. Fails (with oneDNN's reason) only on a shape oneDNN
  // cannot describe; callers then keep their OpenBLAS path.
  static Status create(const DnnlMatmulShape &shape,
                       std::unique_ptr<DnnlMatmul> &out);
  ~DnnlMatmul();
  const DnnlMatmulShape &shape() const { return shape_; }
  // A one-word name of oneDNN's implementation ("brg:avx512_core_amx").
  std::string implementation() const;
  Status run(const void *a, const void *b, float *c) const;

private:
  struct Impl;
  DnnlMatmul(const DnnlMatmulShape &shape, std::unique_ptr<Impl> impl);
  DnnlMatmulShape shape_;
  std::unique_ptr<Impl> impl_;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_DNNL_H
