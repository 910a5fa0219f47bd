//===- DnnlTest.cpp - the oneDNN primitives the CPU contractions run on ---===//
//
// The kernel tests (ContractionKernelsTest, ConvPoolGradKernelsTest) check
// the numbers; these check that oneDNN takes every geometry those tests
// use, so that the numbers they check are oneDNN's and not the im2col
// fallback's.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/DnnlKernels.h"

#include <gtest/gtest.h>

using namespace ampc::rt::cpu;

TEST(Dnnl, TakesEveryConvolutionGeometryOfTheKernelTests) {
  struct Geometry {
    int64_t n, c, h, w, o, kh, kw, group, sh, sw, dh, dw, pt, pl, pb, pr;
  };
  // Strides, asymmetric pads, dilations, groups, depthwise, 1x1.
  const Geometry cases[] = {
      {2, 4, 7, 6, 6, 3, 2, 2, 2, 1, 1, 2, 1, 0, 2, 1},
      {2, 3, 5, 4, 5, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0},
      {3, 6, 4, 4, 9, 1, 1, 3, 1, 1, 1, 1, 0, 0, 0, 0},
      {1, 2, 5, 5, 3, 1, 1, 1, 2, 2, 1, 1, 1, 1, 1, 1},
      {2, 4, 6, 5, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1, 1},
      {16, 64, 32, 32, 64, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1},
      {2, 8, 7, 6, 6, 3, 2, 2, 2, 1, 1, 2, 1, 0, 2, 1},
      {3, 16, 5, 5, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1}};
  for (const Geometry &g : cases)
    for (bool bf16 : {false, true})
      for (DnnlConvPass pass :
           {DnnlConvPass::Forward, DnnlConvPass::BackwardData,
            DnnlConvPass::BackwardFilter}) {
        DnnlConvShape s;
        s.pass = pass;
        s.n = g.n;
        s.c = g.c;
        s.h = g.h;
        s.w = g.w;
        s.o = g.o;
        s.kh = g.kh;
        s.kw = g.kw;
        s.group = g.group;
        s.sh = g.sh;
        s.sw = g.sw;
        s.dh = g.dh;
        s.dw = g.dw;
        s.pt = g.pt;
        s.pl = g.pl;
        s.oh = (g.h + g.pt + g.pb - (g.kh - 1) * g.dh - 1) / g.sh + 1;
        s.ow = (g.w + g.pl + g.pr - (g.kw - 1) * g.dw - 1) / g.sw + 1;
        s.bias = pass == DnnlConvPass::Forward;
        s.bf16 = bf16;
        std::unique_ptr<DnnlConvolution> conv;
        ampc::rt::Status st = DnnlConvolution::create(s, conv);
        ASSERT_TRUE(st.isOk())
            << st.message() << " (case c=" << g.c << " o=" << g.o << ", pass "
            << static_cast<int>(pass) << ", bf16 " << bf16 << ")";
        EXPECT_FALSE(conv->implementation().empty());
      }
}

TEST(Dnnl, NativeBf16MatmulIsNotAReferenceLoop) {
  // Where the CPU multiplies bf16, the bf16 GEMM must be one of oneDNN's
  // JIT kernels, not its reference implementation (which would be slower
  // than widening to f32).
  if (!nativeBf16Contractions())
    GTEST_SKIP() << "this CPU (as oneDNN sees it: " << dnnlIsaName()
                 << ") widens bf16 to f32";
  for (bool ta : {false, true}) {
    DnnlMatmulShape s;
    s.m = 256;
    s.n = 1024;
    s.k = 1024;
    s.transA = ta;
    s.lda = ta ? s.m : s.k;
    s.ldb = s.n;
    s.bf16 = true;
    std::unique_ptr<DnnlMatmul> mm;
    ASSERT_TRUE(DnnlMatmul::create(s, mm).isOk());
    EXPECT_EQ(mm->implementation().find("ref"), std::string::npos)
        << mm->implementation();
  }
}

TEST(Dnnl, FewInputChannelsComputeInF32) {
  // kFewConvChannels: under 4 input channels the forward and
  // backward-data passes run on the im2col loops or, in bf16 where the CPU
  // multiplies bf16, ImageConvBf16.h's (no primitive), and the
  // backward-filter pass on oneDNN in f32 unless those bf16 loops take it;
  // from 4 on every pass is a oneDNN primitive reading bf16 as stored where
  // the CPU multiplies bf16.
  for (int64_t c : {1, 3, 4, 8})
    for (DnnlConvPass pass : {DnnlConvPass::Forward, DnnlConvPass::BackwardData,
                              DnnlConvPass::BackwardFilter}) {
      // 288 output pixels: above SmallMapConv.h's small maps.
      ampc::rt::ops::ConvPlan p{2,  c, 14, 14, 4, c, 3, 3, 12,
                                12, 1, 1,  1,  1, 1, 0, 0};
      std::shared_ptr<const ampc::rt::ops::PreparedKernel> prepared;
      ASSERT_TRUE(
          kh::prepareConvPass(p, pass, ampc::rt::DType::BF16, false, prepared)
              .isOk());
      const auto *conv = static_cast<const kh::ConvPrepared *>(prepared.get());
      ASSERT_NE(conv, nullptr);
      bool few = c < 4;
      EXPECT_EQ(conv->conv == nullptr,
                few && (pass != DnnlConvPass::BackwardFilter ||
                        nativeBf16Contractions()))
          << "c=" << c << ", pass " << static_cast<int>(pass);
      EXPECT_EQ(conv->bf16, !few && nativeBf16Contractions())
          << "c=" << c << ", pass " << static_cast<int>(pass);
    }
  // A depthwise convolution (1 channel per group, 8 channels) is not an
  // image-input layer: every pass stays a oneDNN primitive.
  ampc::rt::ops::ConvPlan depthwise{2, 8, 6, 6, 8, 1, 3, 3, 4,
                                    4, 8, 1, 1, 1, 1, 0, 0};
  // (Its 32 output pixels would be small maps, but it is grouped.)
  for (DnnlConvPass pass : {DnnlConvPass::Forward, DnnlConvPass::BackwardData,
                            DnnlConvPass::BackwardFilter}) {
    std::shared_ptr<const ampc::rt::ops::PreparedKernel> prepared;
    ASSERT_TRUE(kh::prepareConvPass(depthwise, pass, ampc::rt::DType::BF16,
                                    false, prepared)
                    .isOk());
    const auto *conv = static_cast<const kh::ConvPrepared *>(prepared.get());
    ASSERT_NE(conv, nullptr);
    EXPECT_NE(conv->conv, nullptr) << "pass " << static_cast<int>(pass);
    EXPECT_EQ(conv->bf16, nativeBf16Contractions());
  }
}

TEST(Dnnl, SmallMapsAreOneGemm) {
  // SmallMapConv.h: an ungrouped backward-filter pass with at most 64
  // output pixels in the whole batch is one matmul (bf16 as stored where
  // the CPU multiplies bf16), above that a convolution primitive; the
  // forward and backward-data passes too when some kernel tap reads only
  // padding (here the 1x1 maps); grouped passes never.
  struct Case {
    int64_t n, map, group;
    bool gemm;
  };
  const Case cases[] = {{16, 1, 1, true}, {16, 2, 1, true},  {4, 4, 1, true},
                        {5, 4, 1, false}, {16, 4, 1, false}, {16, 1, 2, false}};
  for (const Case &k : cases)
    for (ampc::rt::DType t : {ampc::rt::DType::F32, ampc::rt::DType::BF16})
      for (DnnlConvPass pass :
           {DnnlConvPass::Forward, DnnlConvPass::BackwardData,
            DnnlConvPass::BackwardFilter}) {
        // 3x3, padding 1, stride 1: the output map is the input's.
        ampc::rt::ops::ConvPlan p{k.n, 8, k.map, k.map, 8,       8 / k.group,
                                  3,   3, k.map, k.map, k.group, 1,
                                  1,   1, 1,     1,     1};
        std::shared_ptr<const ampc::rt::ops::PreparedKernel> prepared;
        ASSERT_TRUE(kh::prepareConvPass(p, pass, t, false, prepared).isOk());
        const auto *conv =
            static_cast<const kh::ConvPrepared *>(prepared.get());
        ASSERT_NE(conv, nullptr);
        bool gemm =
            k.gemm && (pass == DnnlConvPass::BackwardFilter || k.map == 1);
        std::string what = "n=" + std::to_string(k.n) +
                           " map=" + std::to_string(k.map) +
                           " group=" + std::to_string(k.group) + " pass " +
                           std::to_string(static_cast<int>(pass));
        EXPECT_EQ(conv->smallMap != nullptr, gemm) << what;
        EXPECT_EQ(conv->conv != nullptr, !gemm) << what;
        EXPECT_EQ(conv->bf16,
                  t == ampc::rt::DType::BF16 && nativeBf16Contractions())
            << what;
      }
}
