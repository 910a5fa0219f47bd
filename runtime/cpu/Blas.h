//===- Blas.h - the one OpenBLAS GEMM entry point of the CPU kernels ------===//
//
// Row-major sgemm/dgemm for the f64 contractions, the empty shapes and the
// convolutions, with the degenerate sizes BLAS rejects handled here.
// OpenBLAS runs on the calling thread only: its callers split their work
// over the kernels' team (Parallel.h) or run outside it, and a pool of
// OpenBLAS's own would compete with the team for the same cores.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_RUNTIME_CPU_BLAS_H
#define AMPC_RUNTIME_CPU_BLAS_H

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <type_traits>

namespace ampc::rt::cpu::kh {

// C[M, N] = alpha * op(A) * op(B) + beta * C, row major. Handles the empty
// cases BLAS rejects (K == 0 gives beta * C; lda must be >= 1).
template <typename T>
void gemmRM(bool ta, bool tb, int64_t m, int64_t n, int64_t k, T alpha,
            const T *a, int64_t lda, const T *b, int64_t ldb, T beta, T *c,
            int64_t ldc) {
  static const bool singleThreaded = (openblas_set_num_threads(1), true);
  (void)singleThreaded;
  if (m == 0 || n == 0)
    return;
  if (k == 0) {
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        c[i * ldc + j] = beta == T(0) ? T(0) : beta * c[i * ldc + j];
    return;
  }
  auto tA = ta ? CblasTrans : CblasNoTrans;
  auto tB = tb ? CblasTrans : CblasNoTrans;
  lda = std::max<int64_t>(lda, 1);
  ldb = std::max<int64_t>(ldb, 1);
  ldc = std::max<int64_t>(ldc, 1);
  if constexpr (std::is_same<T, double>::value)
    cblas_dgemm(CblasRowMajor, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
  else
    cblas_sgemm(CblasRowMajor, tA, tB, m, n, k, alpha, a, lda, b, ldb, beta, c,
                ldc);
}

} // namespace ampc::rt::cpu::kh

#endif // AMPC_RUNTIME_CPU_BLAS_H
