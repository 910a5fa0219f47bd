//===- contraction_cpu.cpp - the CPU backend's per-op library choices, timed
//===//
//
// Issue 22 asks that each CPU op run on oneDNN or on OpenBLAS (or on
// ampc's own loops) by measurement. This prints that measurement: for the
// shapes of the benchmark models (bench/amp_cpu.py), the median time of
//   * GEMM: OpenBLAS sgemm against the oneDNN matmul the kernel runs, f32,
//     the kernel's bf16 matmul, and the f32 gemm kernel with a bias without
//     and with its relu epilogue;
//   * each convolution pass through the CPU kernel: on a oneDNN primitive
//     against its im2col + OpenBLAS loops, f32, and the kernel as the
//     session prepares it (kFewConvChannels decides) in f32 and bf16;
//   * max pooling forward + gradient and batch norm training forward +
//     gradient: the CPU kernels against oneDNN's primitives on the same
//     NCHW tensors, f32 and bf16.
// All on one thread (the kernels' team and oneDNN's both sized 1), inputs
// uniform in [-1, 1). Times only; the kernel tests check the values.
//
// usage: ampc-contraction-bench [REPEATS]   (default 20)
//
//===----------------------------------------------------------------------===//
#include "runtime/Half.h"
#include "runtime/cpu/Blas.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/DnnlEngine.h"
#include "runtime/cpu/DnnlKernels.h"
#include "runtime/ops/Check.h"

#include <oneapi/dnnl/dnnl.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace ampc::rt;

namespace {

int repeats = 20;

double medianMs(const std::function<void()> &fn) {
  fn(); // warm: first-touch, oneDNN's JIT
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    fn();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

// A tensor with its storage: f32 or bf16, uniform in [-1, 1).
struct Buf {
  DType dtype;
  Shape shape;
  std::vector<float> f;
  std::vector<uint16_t> h;
  Buf(DType t, Shape s, uint32_t seed) : dtype(t), shape(std::move(s)) {
    int64_t n = 1;
    for (int64_t d : shape)
      n *= d;
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> u(-1, 1);
    f.resize(static_cast<size_t>(n));
    for (float &v : f)
      v = u(rng);
    if (t == DType::BF16) {
      h.resize(f.size());
      floatToBFloat(f.data(), h.data(), f.size());
    }
  }
  void *data() {
    return dtype == DType::BF16 ? static_cast<void *>(h.data()) : f.data();
  }
  TensorView view() { return TensorView{dtype, shape, data()}; }
};

[[noreturn]] void fail(const std::string &what, const Status &s) {
  std::fprintf(stderr, "%s: %s\n", what.c_str(), s.message().c_str());
  std::exit(1);
}

// Times `op` through the CPU kernel table. `prepare`: as the session does
// (oneDNN where the kernel uses it); otherwise `prepared` stands in.
double timeKernel(const std::string &op, const Attrs &attrs,
                  std::vector<Buf *> in, std::vector<Buf *> out,
                  cpu::CpuContext &ctx, bool prepare,
                  std::shared_ptr<const ops::PreparedKernel> prepared = {}) {
  ops::OpCall call;
  call.op = op;
  call.attrs = &attrs;
  for (Buf *b : in)
    call.inputs.push_back(b->view());
  call.present.assign(call.inputs.size(), true);
  for (Buf *b : out)
    call.outputs.push_back(b->view());
  if (Status s = ops::checkKernel(call); !s)
    fail(op, s);
  if (prepare) {
    if (Status s = cpu::prepareKernel(call); !s)
      fail(op, s);
  } else {
    call.prepared = std::move(prepared);
  }
  return medianMs([&] {
    if (Status s = cpu::runKernel(call, ctx); !s)
      fail(op, s);
  });
}

const char *dtypeName(DType t) { return t == DType::BF16 ? "bf16" : "f32"; }

void gemms(cpu::CpuContext &ctx) {
  struct Shape3 {
    const char *model;
    int64_t m, n, k;
  };
  const Shape3 shapes[] = {{"mlp9x1024 layer", 256, 1024, 1024},
                           {"mlp (784-512) layer 1", 64, 512, 784},
                           {"lenet5 fc1", 32, 120, 400},
                           {"resnet18 fc", 16, 10, 512}};
  std::printf("\n## GEMM C[m,n] = A[m,k] B[k,n], ms\n\n");
  std::printf("| shape | m x n x k | OpenBLAS f32 | oneDNN f32 | oneDNN/"
              "OpenBLAS | kernel bf16 | gemm + bias f32 | gemm + bias + relu "
              "f32 |\n|---|---|---|---|---|---|---|---|\n");
  // Every gemm attribute, as the compiler writes them (the runtime keeps no
  // defaults).
  Attrs none, bias;
  bias.setFloat("alpha", 1);
  bias.setFloat("beta", 1);
  bias.setInt("trans_a", 0);
  bias.setInt("trans_b", 0);
  Attrs biasRelu = bias;
  biasRelu.setString("epilogue", "relu");
  for (const Shape3 &s : shapes) {
    Buf a(DType::F32, {s.m, s.k}, 1), b(DType::F32, {s.k, s.n}, 2),
        c(DType::F32, {s.m, s.n}, 3);
    double blas = medianMs([&] {
      cpu::kh::gemmRM<float>(false, false, s.m, s.n, s.k, 1.0f, a.f.data(), s.k,
                             b.f.data(), s.n, 0.0f, c.f.data(), s.n);
    });
    double dnnl = timeKernel("matmul", none, {&a, &b}, {&c}, ctx, true);
    Buf a16(DType::BF16, {s.m, s.k}, 1), b16(DType::BF16, {s.k, s.n}, 2),
        c16(DType::BF16, {s.m, s.n}, 3);
    double bf16 = timeKernel("matmul", none, {&a16, &b16}, {&c16}, ctx, true);
    // The gemm kernel with a bias, without and with the relu epilogue that
    // the CPU applies after oneDNN's GEMM (GemmPostOp.h): what that pass
    // costs.
    Buf v(DType::F32, {s.n}, 4);
    double plain = timeKernel("gemm", bias, {&a, &b, &v}, {&c}, ctx, true);
    double relu = timeKernel("gemm", biasRelu, {&a, &b, &v}, {&c}, ctx, true);
    std::printf("| %s | %lldx%lldx%lld | %.3f | %.3f | %.2f | %.3f | %.3f | "
                "%.3f |\n",
                s.model, (long long)s.m, (long long)s.n, (long long)s.k, blas,
                dnnl, dnnl / blas, bf16, plain, relu);
  }
}

void convolutions(cpu::CpuContext &ctx) {
  struct Conv {
    const char *model;
    int64_t n, c, h, w, o, k, pad;
  };
  const Conv convs[] = {
      {"lenet5 conv1", 32, 1, 28, 28, 6, 5, 2},
      {"lenet5 conv2", 32, 6, 14, 14, 16, 5, 0},
      {"resnet18 stem 3x3, 3 ch", 16, 3, 32, 32, 64, 3, 1},
      {"resnet18 3x3, 64 ch", 16, 64, 32, 32, 64, 3, 1},
      {"resnet18 3x3, 256 ch", 16, 256, 8, 8, 256, 3, 1},
      // torchvision resnet18 at 32x32: layer4 on 1x1 maps, layer3 on 2x2
      // (at batch 16 and 32), layer2 on 4x4; the filter gradient's two
      // routes around SmallMapConv.h's 64 output pixels.
      {"resnet18tv 3x3, 512 ch, 1x1", 16, 512, 1, 1, 512, 3, 1},
      {"resnet18tv 3x3, 256 ch, 2x2", 16, 256, 2, 2, 256, 3, 1},
      {"resnet18tv 3x3, 256 ch, 2x2, batch 32", 32, 256, 2, 2, 256, 3, 1},
      {"resnet18tv 3x3, 128 ch, 4x4", 16, 128, 4, 4, 128, 3, 1}};
  std::printf("\n## Convolution passes through the CPU kernel, ms\n\n");
  std::printf("| layer | pass | im2col+OpenBLAS f32 | oneDNN f32 | oneDNN/"
              "im2col | kernel f32 | oneDNN bf16 | kernel bf16 |\n"
              "|---|---|---|---|---|---|---|---|\n");
  for (const Conv &cv : convs) {
    Attrs at;
    at.setInts("strides", {1, 1});
    at.setInts("pads", {cv.pad, cv.pad, cv.pad, cv.pad});
    at.setInts("dilations", {1, 1});
    at.setInt("group", 1);
    int64_t oh = cv.h + 2 * cv.pad - cv.k + 1,
            ow = cv.w + 2 * cv.pad - cv.k + 1;
    const std::pair<const char *, cpu::DnnlConvPass> passes[] = {
        {"conv2d", cpu::DnnlConvPass::Forward},
        {"conv2d_backward_data", cpu::DnnlConvPass::BackwardData},
        {"conv2d_backward_filter", cpu::DnnlConvPass::BackwardFilter}};
    for (auto [pass, dnnlPass] : passes) {
      // The routes: im2col (a prepared state without a primitive), a oneDNN
      // convolution primitive in f32 and in bf16 (as stored where the CPU
      // multiplies bf16) whatever kFewConvChannels and SmallMapConv.h
      // say, and the kernel as the session prepares it in f32 and in bf16.
      enum { Im2col, Dnnl, KernelF32, DnnlBf16, KernelBf16 };
      double t[5];
      for (int route : {Im2col, Dnnl, KernelF32, DnnlBf16, KernelBf16}) {
        bool bf16 = route == DnnlBf16 || route == KernelBf16;
        DType dt = bf16 ? DType::BF16 : DType::F32;
        Buf x(dt, {cv.n, cv.c, cv.h, cv.w}, 4),
            f(dt, {cv.o, cv.c, cv.k, cv.k}, 5), y(dt, {cv.n, cv.o, oh, ow}, 6);
        std::string p = pass;
        std::vector<Buf *> in = p == "conv2d" ? std::vector<Buf *>{&x, &f}
                                : p == "conv2d_backward_data"
                                    ? std::vector<Buf *>{&y, &f}
                                    : std::vector<Buf *>{&y, &x};
        Buf *out = p == "conv2d" ? &y : p == "conv2d_backward_data" ? &x : &f;
        auto prepared = std::make_shared<cpu::kh::ConvPrepared>();
        if (route == Dnnl || route == DnnlBf16) {
          prepared->bf16 = bf16 && cpu::nativeBf16Contractions();
          cpu::DnnlConvShape s;
          s.pass = dnnlPass;
          s.n = cv.n, s.c = cv.c, s.h = cv.h, s.w = cv.w;
          s.o = cv.o, s.kh = cv.k, s.kw = cv.k, s.oh = oh, s.ow = ow;
          s.pt = cv.pad, s.pl = cv.pad;
          s.bf16 = prepared->bf16;
          if (Status st = cpu::DnnlConvolution::create(s, prepared->conv); !st)
            fail(pass, st);
        }
        bool prepare = route == KernelF32 || route == KernelBf16;
        t[route] = timeKernel(pass, at, in, {out}, ctx, prepare,
                              prepare ? nullptr : prepared);
      }
      std::printf("| %s | %s | %.3f | %.3f | %.2f | %.3f | %.3f | %.3f |\n",
                  cv.model, pass, t[Im2col], t[Dnnl], t[Dnnl] / t[Im2col],
                  t[KernelF32], t[DnnlBf16], t[KernelBf16]);
    }
  }
}

dnnl::memory::data_type dnnlType(DType t) {
  return t == DType::BF16 ? dnnl::memory::data_type::bf16
                          : dnnl::memory::data_type::f32;
}

// The pooling and batch-norm tables: a kernel pair of ampc against
// oneDNN's primitives on the same tensors.
void printVersusHeader(const char *title) {
  std::printf("\n## %s, NCHW, ms\n\n", title);
  std::printf("| layer | dtype | kernels | oneDNN | oneDNN/kernels |\n"
              "|---|---|---|---|---|\n");
}
void printVersusRow(const char *layer, DType dt, double ours, double theirs,
                    const char *impl) {
  std::printf("| %s | %s | %.3f | %.3f (%s) | %.2f |\n", layer, dtypeName(dt),
              ours, theirs, impl, theirs / ours);
}

void pooling(cpu::CpuContext &ctx) {
  struct Pool {
    const char *model;
    int64_t n, c, h, w, k, s, pad;
  };
  const Pool pools[] = {{"lenet5 pool1 2x2/2", 32, 6, 28, 28, 2, 2, 0},
                        {"lenet5 pool2 2x2/2", 32, 16, 10, 10, 2, 2, 0},
                        {"resnet stem 3x3/2 pad 1", 16, 64, 32, 32, 3, 2, 1}};
  printVersusHeader("Max pooling, forward + gradient");
  using namespace dnnl;
  const engine &eng = cpu::dnnlEngine();
  stream strm(eng);
  for (const Pool &pl : pools)
    for (DType dt : {DType::F32, DType::BF16}) {
      int64_t oh = (pl.h + 2 * pl.pad - pl.k) / pl.s + 1,
              ow = (pl.w + 2 * pl.pad - pl.k) / pl.s + 1;
      Buf x(dt, {pl.n, pl.c, pl.h, pl.w}, 7), y(dt, {pl.n, pl.c, oh, ow}, 8),
          gy(dt, {pl.n, pl.c, oh, ow}, 9), gx(dt, {pl.n, pl.c, pl.h, pl.w}, 10);
      Attrs at;
      at.setInts("kernel_shape", {pl.k, pl.k});
      at.setInts("strides", {pl.s, pl.s});
      at.setInts("pads", {pl.pad, pl.pad, pl.pad, pl.pad});
      at.setInts("dilations", {1, 1});
      at.setInt("ceil_mode", 0);
      double ours =
          timeKernel("max_pool2d", at, {&x}, {&y}, ctx, true) +
          timeKernel("max_pool2d_grad", at, {&gy, &x}, {&gx}, ctx, true);
      memory::desc src({pl.n, pl.c, pl.h, pl.w}, dnnlType(dt),
                       memory::format_tag::nchw),
          dst({pl.n, pl.c, oh, ow}, dnnlType(dt), memory::format_tag::nchw);
      memory::dims strides{pl.s, pl.s}, kernel{pl.k, pl.k},
          pads{pl.pad, pl.pad};
      pooling_forward::primitive_desc fwd(
          pooling_forward::desc(prop_kind::forward_training,
                                algorithm::pooling_max, src, dst, strides,
                                kernel, pads, pads),
          eng);
      pooling_backward::primitive_desc bwd(
          pooling_backward::desc(algorithm::pooling_max, src, dst, strides,
                                 kernel, pads, pads),
          eng, fwd);
      memory mx(src, eng, x.data()), my(dst, eng, y.data()),
          mgy(dst, eng, gy.data()), mgx(src, eng, gx.data()),
          ws(fwd.workspace_desc(), eng);
      pooling_forward pf(fwd);
      pooling_backward pb(bwd);
      double theirs = medianMs([&] {
        pf.execute(
            strm,
            {{DNNL_ARG_SRC, mx}, {DNNL_ARG_DST, my}, {DNNL_ARG_WORKSPACE, ws}});
        pb.execute(strm, {{DNNL_ARG_DIFF_DST, mgy},
                          {DNNL_ARG_DIFF_SRC, mgx},
                          {DNNL_ARG_WORKSPACE, ws}});
        strm.wait();
      });
      printVersusRow(pl.model, dt, ours, theirs, fwd.impl_info_str());
    }
}

void batchNorms(cpu::CpuContext &ctx) {
  struct Norm {
    const char *model;
    int64_t n, c, h, w;
  };
  const Norm norms[] = {{"resnet18 64 ch", 16, 64, 32, 32},
                        {"resnet18 256 ch", 16, 256, 8, 8}};
  printVersusHeader("Batch norm, training forward + gradient");
  using namespace dnnl;
  const engine &eng = cpu::dnnlEngine();
  stream strm(eng);
  for (const Norm &nm : norms)
    for (DType dt : {DType::F32, DType::BF16}) {
      Shape xs{nm.n, nm.c, nm.h, nm.w}, cs{nm.c};
      Buf x(dt, xs, 11), y(dt, xs, 12), gy(dt, xs, 13), gx(dt, xs, 14);
      // The scale, bias and statistics stay f32 under AMP.
      Buf scale(DType::F32, cs, 15), bias(DType::F32, cs, 16),
          rm(DType::F32, cs, 17), rv(DType::F32, cs, 18),
          nrm(DType::F32, cs, 19), nrv(DType::F32, cs, 20),
          mean(DType::F32, cs, 21), inv(DType::F32, cs, 22),
          gs(DType::F32, cs, 23), gb(DType::F32, cs, 24);
      for (float &v : rv.f)
        v = 1 + v * v;
      Attrs at;
      at.setFloat("epsilon", 1e-5);
      at.setFloat("momentum", 0.1);
      double ours =
          timeKernel("batch_norm_training", at, {&x, &scale, &bias, &rm, &rv},
                     {&y, &nrm, &nrv, &mean, &inv}, ctx, true) +
          timeKernel("batch_norm_grad", at, {&gy, &x, &scale, &mean, &inv},
                     {&gx, &gs, &gb}, ctx, true);
      memory::desc data({nm.n, nm.c, nm.h, nm.w}, dnnlType(dt),
                        memory::format_tag::nchw),
          stat({nm.c}, memory::data_type::f32, memory::format_tag::x);
      auto flags =
          normalization_flags::use_scale | normalization_flags::use_shift;
      batch_normalization_forward::primitive_desc fwd(
          batch_normalization_forward::desc(prop_kind::forward_training, data,
                                            1e-5f, flags),
          eng);
      batch_normalization_backward::primitive_desc bwd(
          batch_normalization_backward::desc(prop_kind::backward, data, data,
                                             1e-5f, flags),
          eng, fwd);
      memory mx(data, eng, x.data()), my(data, eng, y.data()),
          mgy(data, eng, gy.data()), mgx(data, eng, gx.data()),
          ms(stat, eng, scale.data()), mb(stat, eng, bias.data()),
          mm(stat, eng, mean.data()), mv(stat, eng, inv.data()),
          mgs(stat, eng, gs.data()), mgb(stat, eng, gb.data());
      batch_normalization_forward bf(fwd);
      batch_normalization_backward bb(bwd);
      double theirs = medianMs([&] {
        bf.execute(strm, {{DNNL_ARG_SRC, mx},
                          {DNNL_ARG_DST, my},
                          {DNNL_ARG_SCALE, ms},
                          {DNNL_ARG_SHIFT, mb},
                          {DNNL_ARG_MEAN, mm},
                          {DNNL_ARG_VARIANCE, mv}});
        bb.execute(strm, {{DNNL_ARG_SRC, mx},
                          {DNNL_ARG_DIFF_DST, mgy},
                          {DNNL_ARG_SCALE, ms},
                          {DNNL_ARG_SHIFT, mb},
                          {DNNL_ARG_MEAN, mm},
                          {DNNL_ARG_VARIANCE, mv},
                          {DNNL_ARG_DIFF_SRC, mgx},
                          {DNNL_ARG_DIFF_SCALE, mgs},
                          {DNNL_ARG_DIFF_SHIFT, mgb}});
        strm.wait();
      });
      printVersusRow(nm.model, dt, ours, theirs, fwd.impl_info_str());
    }
}

} // namespace

int main(int argc, char **argv) {
  repeats = argc > 1 ? std::atoi(argv[1]) : 20;
  if (repeats < 1) {
    std::fprintf(stderr, "usage: %s [REPEATS >= 1]\n", argv[0]);
    return 2;
  }
  cpu::setDnnlThreads(1);
  cpu::CpuContext ctx; // no pool: the calling thread
  std::printf("# ampc-contraction-bench: one thread, oneDNN on %s, median of "
              "%d runs\n",
              cpu::dnnlIsaName().c_str(), repeats);
  gemms(ctx);
  convolutions(ctx);
  pooling(ctx);
  batchNorms(ctx);
  return 0;
}
