//===- Dnnl.cpp - oneDNN's engine, ISA and matmul primitives --------------===//
//
// oneDNN reports errors by throwing dnnl::error; every call into it is
// inside a try block here and comes out as a Status.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/DnnlEngine.h"
#include "runtime/cpu/GompTeam.h"

namespace ampc::rt::cpu {

const dnnl::engine &dnnlEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Status dnnlError(const char *what, const dnnl::error &e) {
  return Status::error(std::string("oneDNN ") + what + " failed: " + e.what() +
                       " (status " + std::to_string(e.status) + ")");
}

namespace {

// A [rows, cols] view of a row-major matrix stored with leading dimension
// ld, transposed when `trans` (the stored matrix is [cols, rows]); batched
// `batch` times `batchStride` apart, or one matrix broadcast (stride 0).
dnnl::memory::desc matrixDesc(int64_t batch, int64_t batchStride, int64_t rows,
                              int64_t cols, bool trans, int64_t ld,
                              dnnl::memory::data_type type) {
  using dims = dnnl::memory::dims;
  dims strides2 = trans ? dims{1, ld} : dims{ld, 1};
  if (batch == 1)
    return dnnl::memory::desc(dims{rows, cols}, type, strides2);
  if (batchStride == 0)
    return dnnl::memory::desc(dims{1, rows, cols}, type,
                              dims{rows * cols, strides2[0], strides2[1]});
  return dnnl::memory::desc(dims{batch, rows, cols}, type,
                            dims{batchStride, strides2[0], strides2[1]});
}

} // namespace

bool nativeBf16Contractions() {
  static const bool native = [] {
    try {
      auto isa = static_cast<unsigned>(dnnl::get_effective_cpu_isa());
      auto bf16 = static_cast<unsigned>(dnnl::cpu_isa::avx512_core_bf16);
      return (isa & bf16) == bf16; // each ISA's bits contain its subsets'
    } catch (const dnnl::error &) {
      return false;
    }
  }();
  return native;
}

std::string dnnlIsaName() {
  using I = dnnl::cpu_isa;
  switch (dnnl::get_effective_cpu_isa()) {
  case I::avx512_core_amx:
    return "avx512_core_amx";
  case I::avx512_core_bf16:
    return "avx512_core_bf16";
  case I::avx512_core_vnni:
    return "avx512_core_vnni";
  case I::avx512_core:
    return "avx512_core";
  case I::avx2_vnni:
    return "avx2_vnni";
  case I::avx2:
    return "avx2";
  case I::avx:
    return "avx";
  case I::sse41:
    return "sse41";
  default:
    return "other";
  }
}

std::string describeCpuCompute(const std::string &dtype) {
  const std::string isa = "oneDNN on " + dnnlIsaName();
  if (dtype == "bf16" && nativeBf16Contractions())
    return "bf16 GEMMs and convolutions multiply bf16 natively (" + isa +
           " and, for image inputs of under 4 channels, AVX512_BF16 loops; "
           "f32 accumulation); the other bf16 kernels compute in f32 and "
           "round once";
  return dtype + " is emulated on this CPU: every " + dtype +
         " kernel, GEMMs and convolutions (" + isa +
         ") included, widens to f32 and rounds each result once";
}

void setDnnlThreads(int threads) { omp_set_num_threads(threads); }

struct DnnlMatmul::Impl {
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul prim;
  dnnl::stream stream;
};

DnnlMatmul::DnnlMatmul(const DnnlMatmulShape &shape, std::unique_ptr<Impl> impl)
    : shape_(shape), impl_(std::move(impl)) {}
DnnlMatmul::~DnnlMatmul() = default;

Status DnnlMatmul::create(const DnnlMatmulShape &s,
                          std::unique_ptr<DnnlMatmul> &out) {
  using dt = dnnl::memory::data_type;
  dt in = s.bf16 ? dt::bf16 : dt::f32;
  try {
    auto a = matrixDesc(s.batch, s.batchStrideA, s.m, s.k, s.transA, s.lda, in);
    auto b = matrixDesc(s.batch, s.batchStrideB, s.k, s.n, s.transB, s.ldb, in);
    using dims = dnnl::memory::dims;
    auto c = s.batch == 1
                 ? dnnl::memory::desc(dims{s.m, s.n}, dt::f32, dims{s.n, 1})
                 : dnnl::memory::desc(dims{s.batch, s.m, s.n}, dt::f32,
                                      dims{s.m * s.n, s.n, 1});
    dnnl::primitive_attr attr;
    if (s.alpha != 1.0f)
      attr.set_output_scales(0, {s.alpha});
    if (s.accumulate) {
      dnnl::post_ops ops;
      ops.append_sum(1.0f);
      attr.set_post_ops(ops);
    }
    auto impl = std::make_unique<Impl>();
    impl->pd = dnnl::matmul::primitive_desc(dnnl::matmul::desc(a, b, c), attr,
                                            dnnlEngine());
    impl->prim = dnnl::matmul(impl->pd);
    impl->stream = dnnl::stream(dnnlEngine());
    out.reset(new DnnlMatmul(s, std::move(impl)));
  } catch (const dnnl::error &e) {
    return dnnlError("matmul creation", e);
  }
  return Status::ok();
}

std::string DnnlMatmul::implementation() const {
  return impl_->pd.impl_info_str();
}

Status DnnlMatmul::run(const void *a, const void *b, float *c) const {
  try {
    const auto &pd = impl_->pd;
    const dnnl::engine &eng = dnnlEngine();
    dnnl::memory ma(pd.src_desc(), eng, const_cast<void *>(a));
    dnnl::memory mb(pd.weights_desc(), eng, const_cast<void *>(b));
    dnnl::memory mc(pd.dst_desc(), eng, c);
    impl_->prim.execute(
        impl_->stream,
        {{DNNL_ARG_SRC, ma}, {DNNL_ARG_WEIGHTS, mb}, {DNNL_ARG_DST, mc}});
    impl_->stream.wait();
  } catch (const dnnl::error &e) {
    return dnnlError("matmul", e);
  }
  return Status::ok();
}

} // namespace ampc::rt::cpu
