//===- ImageConvBf16Test.cpp - bf16 image-input convolutions vs f64 -------===//
//
// conv2d and conv2d_backward_filter of 1 and 3 input channels in bf16 run
// ImageConvBf16.h's AVX512_BF16 loops where the CPU has them (and im2col in
// f32 elsewhere, or under DNNL_MAX_CPU_ISA=AVX512_CORE, which ctest also
// runs): both against f64 on the same stored values, within one bf16
// rounding plus f32 accumulation error, over kernel widths 1 to 8 (odd
// rows end in a half pair), padding on every side, output rows shorter
// and longer than the loops' 16- and 32-pixel blocks, 1 to 11 output
// channels (blocks of 8 and 3), with and without bias. Infinities must
// reach exactly the outputs whose windows hold them (the half pair and the
// masked tails read past a window, never into a result), and the filter
// gradient must not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#include "GradCheckUtil.h"

#include "runtime/cpu/Dnnl.h"
#include "runtime/cpu/ImageConvBf16.h"

#include <cmath>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

struct ImageCase {
  int64_t n, c, h, w, o, kh, kw;
  std::vector<int64_t> pads; // top, left, bottom, right
  bool bias;

  int64_t oh() const { return h + pads[0] + pads[2] - kh + 1; }
  int64_t ow() const { return w + pads[1] + pads[3] - kw + 1; }
  Shape input() const { return {n, c, h, w}; }
  Shape filter() const { return {o, c, kh, kw}; }
  Shape output() const { return {n, o, oh(), ow()}; }
  std::string str() const {
    return "x" + ampc::rt::str(input()) + " w" + ampc::rt::str(filter()) +
           " pads" + ampc::rt::str(pads) + (bias ? " bias" : "");
  }
  Call call(const std::string &op, std::vector<Buf *> ins, Buf *out) const {
    Call c{op, {}, std::move(ins), {out}};
    c.attrs.setInts("strides", {1, 1});
    c.attrs.setInts("pads", pads);
    c.attrs.setInts("dilations", {1, 1});
    c.attrs.setInt("group", 1);
    return c;
  }
  ops::ConvPlan plan() const {
    ops::ConvPlan p{n,    c, h, w, o, c, kh,      kw,     oh(),
                    ow(), 1, 1, 1, 1, 1, pads[0], pads[1]};
    return p;
  }
};

std::vector<ImageCase> imageCases() {
  return {
      // LeNet-5's first layer (5x5, pad 2, 28 wide: 16 + 12 pixels).
      {2, 1, 28, 28, 6, 5, 5, {2, 2, 2, 2}, true},
      // The CIFAR ResNet stem: 3 channels, 3x3, 32 wide, 11 channels out
      // (a block of 8 and one of 3).
      {2, 3, 6, 32, 11, 3, 3, {1, 1, 1, 1}, false},
      // Widths 1 to 8, asymmetric padding, rows of 5 to 40 pixels.
      {1, 1, 4, 5, 2, 2, 1, {0, 0, 1, 0}, true},
      {3, 2, 5, 17, 4, 3, 2, {1, 0, 0, 1}, true},
      {1, 3, 3, 33, 7, 1, 4, {0, 2, 0, 1}, false},
      {2, 1, 6, 40, 3, 4, 6, {2, 3, 1, 2}, true},
      {1, 2, 4, 9, 9, 2, 7, {1, 3, 1, 3}, true},
      {2, 1, 3, 14, 5, 3, 8, {0, 4, 2, 3}, false},
  };
}

bool bf16LoopsRun() { return cpu::nativeBf16Contractions(); }

TEST(ImageConvBf16, TakesImageLayersOnlyWhereTheCpuMultipliesBf16) {
  ImageCase lenet = imageCases()[0];
  EXPECT_EQ(cpu::imageConvBf16Applies(lenet.plan(), DType::BF16),
            bf16LoopsRun());
  EXPECT_FALSE(cpu::imageConvBf16Applies(lenet.plan(), DType::F32));
  ops::ConvPlan wide = lenet.plan();
  wide.c = wide.cg = 4; // oneDNN's from 4 channels
  EXPECT_FALSE(cpu::imageConvBf16Applies(wide, DType::BF16));
  ops::ConvPlan strided = lenet.plan();
  strided.sw = 2;
  EXPECT_FALSE(cpu::imageConvBf16Applies(strided, DType::BF16));
  ops::ConvPlan nineWide = lenet.plan();
  nineWide.kw = 9;
  EXPECT_FALSE(cpu::imageConvBf16Applies(nineWide, DType::BF16));
}

// f32 sums of exact bf16 products, rounded once: within one bf16 rounding
// (relTol) plus f32 accumulation error (1e-6 per summed term).
TEST(ImageConvBf16, ForwardAndFilterGradientMatchF64) {
  uint32_t seed = 7;
  for (const ImageCase &cc : imageCases()) {
    const DType t = DType::BF16;
    Buf x = randomBuf(t, cc.input(), seed++);
    Buf f = randomBuf(t, cc.filter(), seed++);
    Buf b = randomBuf(t, {cc.o}, seed++);
    Buf dy = randomBuf(t, cc.output(), seed++);
    Buf x64 = asF64(x), f64 = asF64(f), b64 = asF64(b), dy64 = asF64(dy);
    Buf y(t, cc.output()), y64(DType::F64, cc.output());
    Buf dw(t, cc.filter()), dw64(DType::F64, cc.filter());
    ASSERT_TRUE(cc.call("conv2d", {&x, &f, cc.bias ? &b : nullptr}, &y)
                    .run(&testPool())
                    .isOk());
    ASSERT_TRUE(cc.call("conv2d", {&x64, &f64, cc.bias ? &b64 : nullptr}, &y64)
                    .run()
                    .isOk());
    ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &dw)
                    .run(&testPool())
                    .isOk());
    ASSERT_TRUE(
        cc.call("conv2d_backward_filter", {&dy64, &x64}, &dw64).run().isOk());
    expectNear(y, y64.values(), 1e-6 * cc.c * cc.kh * cc.kw, relTol(t),
               "y of " + cc.str());
    expectNear(dw, dw64.values(), 1e-6 * cc.n * cc.oh() * cc.ow(), relTol(t),
               "dw of " + cc.str());
  }
}

// An infinity in the input makes exactly the outputs (and filter taps)
// whose windows hold it non-finite, as in f64: the half pair of an odd
// kernel row and the lanes past a row's end read it without using it.
TEST(ImageConvBf16, InfinitiesReachOnlyTheWindowsThatHoldThem) {
  const double inf = std::numeric_limits<double>::infinity();
  for (const ImageCase &cc : imageCases()) {
    const DType t = DType::BF16;
    Buf x = randomBuf(t, cc.input(), 3, 0.5, 1);
    Buf f = randomBuf(t, cc.filter(), 4, 0.5, 1); // no zero weight
    Buf dy = randomBuf(t, cc.output(), 5, 0.5, 1);
    // The first row's last column and the last row's first column.
    x.set(cc.w - 1, inf);
    x.set(cc.n * cc.c * cc.h * cc.w - cc.w, inf);
    Buf x64 = asF64(x), f64 = asF64(f), dy64 = asF64(dy);
    Buf y(t, cc.output()), y64(DType::F64, cc.output());
    Buf dw(t, cc.filter()), dw64(DType::F64, cc.filter());
    ASSERT_TRUE(cc.call("conv2d", {&x, &f, nullptr}, &y).run().isOk());
    ASSERT_TRUE(cc.call("conv2d", {&x64, &f64, nullptr}, &y64).run().isOk());
    ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &dw).run().isOk());
    ASSERT_TRUE(
        cc.call("conv2d_backward_filter", {&dy64, &x64}, &dw64).run().isOk());
    int nonFinite = 0;
    for (int64_t i = 0; i < y.size(); ++i) {
      ASSERT_EQ(std::isfinite(y.get(i)), std::isfinite(y64.get(i)))
          << "y element " << i << " of " << cc.str();
      nonFinite += !std::isfinite(y.get(i));
    }
    EXPECT_GT(nonFinite, 0) << cc.str();
    for (int64_t i = 0; i < dw.size(); ++i)
      ASSERT_EQ(std::isfinite(dw.get(i)), std::isfinite(dw64.get(i)))
          << "dw element " << i << " of " << cc.str();
  }
}

TEST(ImageConvBf16, FilterGradientDoesNotDependOnThreads) {
  ImageCase cc{9, 3, 10, 30, 7, 3, 5, {1, 2, 1, 2}, false};
  Buf dy = randomBuf(DType::BF16, cc.output(), 21);
  Buf x = randomBuf(DType::BF16, cc.input(), 22);
  Buf one(DType::BF16, cc.filter()), four(DType::BF16, cc.filter());
  ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &one).run().isOk());
  ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &four)
                  .run(&testPool())
                  .isOk());
  EXPECT_TRUE(sameBits(one, four));
}

} // namespace
