//===- Dnnl.h - oneDNN primitives for the CPU contractions ----------------===//
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

// What the CPU kernels compute `dtype` ("f16" or "bf16") in on this CPU,
// as one sentence for amp-run's summary.
std::string describeCpuCompute(const std::string &dtype);

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
  // cannot describe; the matmul and gemm kernels pass that on, so the
  // Session is not made (only convolutions fall back to OpenBLAS).
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

// A 2-D convolution pass on NCHW activations and OIHW filters as stored:
// Forward y = conv(x, w) (+ bias), BackwardData dx from (dy, w),
// BackwardFilter dw from (dy, x); the result is f32 in the layout of the
// tensor it stands for. Inside, oneDNN picks blocked layouts (its fast
// kernels need them) and the operands are reordered to and from them on
// every run; those buffers live only during the run.
enum class DnnlConvPass { Forward, BackwardData, BackwardFilter };

struct DnnlConvShape {
  DnnlConvPass pass = DnnlConvPass::Forward;
  int64_t n = 0, c = 0, h = 0, w = 0;     // input
  int64_t o = 0, kh = 0, kw = 0;          // filter: [o, c / group, kh, kw]
  int64_t oh = 0, ow = 0, group = 1;      // output
  int64_t sh = 1, sw = 1, dh = 1, dw = 1; // strides, dilations
  int64_t pt = 0, pl = 0;                 // leading pads
  bool bias = false;                      // Forward only
  bool bf16 = false; // operands bf16 (else f32); the result is f32
};

class DnnlConvolution {
public:
  // Fails (with oneDNN's reason) on a geometry oneDNN does not take;
  // callers then keep their im2col path.
  static Status create(const DnnlConvShape &shape,
                       std::unique_ptr<DnnlConvolution> &out);
  ~DnnlConvolution();
  std::string implementation() const;
  // Forward: (x, w, bias or null); BackwardData: (dy, w, null);
  // BackwardFilter: (dy, x, null).
  Status run(const void *in0, const void *in1, const void *bias,
             float *out) const;

private:
  struct Impl;
  explicit DnnlConvolution(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

} // namespace ampc::rt::cpu

#endif // AMPC_RUNTIME_CPU_DNNL_H
