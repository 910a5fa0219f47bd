//===- ConvPoolGradKernelsTest.cpp - conv2d and pooling gradients ---------===//
//
// conv2d_backward_data/filter, max_pool2d_grad and avg_pool2d_grad against
// finite differences of their forward kernels in f64, over hand-picked and
// seeded random geometries (strides, padding, dilation, groups, ceil mode,
// count_include_pad); f32/f16/bf16 runs against the f64 run on the same
// stored values; tie, overlap and padding rules; check() errors.
//
//===----------------------------------------------------------------------===//
#include "GradCheckUtil.h"

#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

// Input extent that leaves room for a window of `span` after padding, plus
// up to `extra` more.
int64_t roomFor(std::mt19937 &rng, int64_t span, int64_t padSum, int extra) {
  return std::max<int64_t>(1, span - padSum) + randInt(rng, 0, extra);
}

//===----------------------------------------------------------------------===//
// conv2d gradients
//===----------------------------------------------------------------------===//

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;

  Shape input() const { return {n, c, h, w}; }
  Shape filter() const { return {o, c / group, kh, kw}; }
  Shape output() const {
    int64_t oh =
        (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) / strides[0] + 1;
    int64_t ow =
        (w + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) / strides[1] + 1;
    return {n, o, oh, ow};
  }
  std::string str() const {
    return "conv x" + ampc::rt::str(input()) + " w" + ampc::rt::str(filter()) +
           " strides" + ampc::rt::str(strides) + " pads" + ampc::rt::str(pads) +
           " dilations" + ampc::rt::str(dilations) + " group " +
           std::to_string(group);
  }
  Call call(const std::string &op, std::vector<Buf *> ins, Buf *out) const {
    Call c{op, {}, std::move(ins), {out}};
    c.attrs.setInts("strides", strides);
    c.attrs.setInts("pads", pads);
    c.attrs.setInts("dilations", dilations);
    c.attrs.setInt("group", group);
    return c;
  }
};

std::vector<ConvCase> convCases() {
  std::vector<ConvCase> cases = {
      // strides, asymmetric pads, dilation, groups
      {2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
      // 1x1 stride 1 unpadded: the direct (no im2col) path
      {2, 3, 4, 5, 4, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
      {1, 6, 3, 3, 3, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 3},
      // stride larger than the kernel: input elements no window reads
      {1, 2, 7, 7, 2, 2, 2, {3, 3}, {0, 0, 0, 0}, {1, 1}, 1},
      // depthwise, 8 groups: the filter gradient is split by group only
      {2, 8, 5, 4, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 8},
      // a batch of 11 summed in uneven slices
      {11, 2, 4, 4, 3, 3, 3, {1, 2}, {1, 1, 0, 0}, {1, 1}, 1},
      // kernel covering the whole padded input
      {1, 1, 2, 2, 1, 4, 4, {3, 3}, {1, 1, 1, 1}, {1, 1}, 1},
  };
  std::mt19937 rng(2024);
  for (int i = 0; i < 16; ++i) {
    ConvCase cc;
    cc.group = randInt(rng, 1, 3);
    cc.c = cc.group * randInt(rng, 1, 3);
    cc.o = cc.group * randInt(rng, 1, 2);
    cc.n = randInt(rng, 1, 3);
    cc.kh = randInt(rng, 1, 3);
    cc.kw = randInt(rng, 1, 3);
    cc.strides = {randInt(rng, 1, 3), randInt(rng, 1, 3)};
    cc.dilations = {randInt(rng, 1, 2), randInt(rng, 1, 2)};
    cc.pads = {randInt(rng, 0, 2), randInt(rng, 0, 2), randInt(rng, 0, 2),
               randInt(rng, 0, 2)};
    cc.h = roomFor(rng, cc.dilations[0] * (cc.kh - 1) + 1,
                   cc.pads[0] + cc.pads[2], 4);
    cc.w = roomFor(rng, cc.dilations[1] * (cc.kw - 1) + 1,
                   cc.pads[1] + cc.pads[3], 4);
    cases.push_back(cc);
  }
  return cases;
}

TEST(ConvGrad, MatchesFiniteDifferencesOfConv2d) {
  uint32_t seed = 1;
  bool threaded = false;
  for (const ConvCase &cc : convCases()) {
    Buf x = randomBuf(DType::F64, cc.input(), seed++);
    Buf f = randomBuf(DType::F64, cc.filter(), seed++);
    Buf dy = randomBuf(DType::F64, cc.output(), seed++);
    Buf y(DType::F64, cc.output());
    Call forward = cc.call("conv2d", {&x, &f}, &y);
    std::vector<double> dxNum = numericGrad(forward, x, dy);
    std::vector<double> dwNum = numericGrad(forward, f, dy);

    cpu::ThreadPool *pool = threaded ? &testPool() : nullptr;
    threaded = !threaded;
    Buf dx(DType::F64, cc.input()), dw(DType::F64, cc.filter());
    Status s = cc.call("conv2d_backward_data", {&dy, &f}, &dx).run(pool);
    ASSERT_TRUE(s.isOk()) << cc.str() << ": " << s.message();
    expectMatchesNumeric(dx, dxNum, "dx of " + cc.str());
    s = cc.call("conv2d_backward_filter", {&dy, &x}, &dw).run(pool);
    ASSERT_TRUE(s.isOk()) << cc.str() << ": " << s.message();
    expectMatchesNumeric(dw, dwNum, "dw of " + cc.str());
  }
}

// The batch slices of the filter gradient are fixed by the shapes, so the
// result is the same bits with and without threads.
TEST(ConvGrad, FilterGradientDoesNotDependOnThreads) {
  ConvCase cc{13, 4, 6, 6, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 2};
  Buf x = randomBuf(DType::F32, cc.input(), 7);
  Buf dy = randomBuf(DType::F32, cc.output(), 8);
  Buf serial(DType::F32, cc.filter()), threaded(DType::F32, cc.filter());
  ASSERT_TRUE(
      cc.call("conv2d_backward_filter", {&dy, &x}, &serial).run().isOk());
  ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &threaded)
                  .run(&testPool())
                  .isOk());
  EXPECT_EQ(serial.storage, threaded.storage);
}

class ConvGradDTypeTest : public ::testing::TestWithParam<DType> {};

// Low precision computes in f32 and rounds each result once: within one
// rounding of t (relTol) plus f32 accumulation error (1e-6 per summed term)
// of the f64 result on the same stored values.
TEST_P(ConvGradDTypeTest, MatchesF64OnTheSameValues) {
  DType t = GetParam();
  std::vector<ConvCase> cases = {
      {2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
      {3, 3, 5, 5, 4, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
      {10, 2, 6, 5, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      // 4 and more input channels per group: bf16 multiplied natively
      // where the CPU can (kMinBf16ConvChannels), the cases above widen.
      {2, 8, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
      {3, 16, 5, 5, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      // Ungrouped with at most 64 output pixels in the batch: the filter
      // gradient is one GEMM over the batch (SmallMapConv.h), here
      // strided, padded and dilated; the cases around it have more pixels
      // (a convolution primitive).
      {3, 8, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 1},
      {2, 8, 14, 14, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      // Taps that read only padding, where the data gradient is one GEMM
      // too: a 1x1 map under a padded 3x3 kernel (the centre tap alone
      // reads it), and a 2x2 map at stride 2 (four taps do), as in
      // ResNet-18's last stage at 32x32.
      {4, 8, 1, 1, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
      {3, 8, 2, 2, 6, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1},
  };
  uint32_t seed = 100;
  for (const ConvCase &cc : cases) {
    Buf x = randomBuf(t, cc.input(), seed++);
    Buf f = randomBuf(t, cc.filter(), seed++);
    Buf dy = randomBuf(t, cc.output(), seed++);
    Buf x64 = asF64(x), f64 = asF64(f), dy64 = asF64(dy);
    Buf dx(t, cc.input()), dw(t, cc.filter());
    Buf dx64(DType::F64, cc.input()), dw64(DType::F64, cc.filter());
    ASSERT_TRUE(cc.call("conv2d_backward_data", {&dy, &f}, &dx)
                    .run(&testPool())
                    .isOk());
    ASSERT_TRUE(
        cc.call("conv2d_backward_data", {&dy64, &f64}, &dx64).run().isOk());
    ASSERT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &dw)
                    .run(&testPool())
                    .isOk());
    ASSERT_TRUE(
        cc.call("conv2d_backward_filter", {&dy64, &x64}, &dw64).run().isOk());
    Shape y = cc.output();
    int64_t dataTerms = (cc.o / cc.group) * cc.kh * cc.kw;
    int64_t filterTerms = y[0] * y[2] * y[3];
    expectNear(dx, dx64.values(), 1e-6 * dataTerms, relTol(t),
               "dx of " + cc.str());
    expectNear(dw, dw64.values(), 1e-6 * filterTerms, relTol(t),
               "dw of " + cc.str());
  }
}

INSTANTIATE_TEST_SUITE_P(LowFloats, ConvGradDTypeTest,
                         ::testing::ValuesIn(kLowFloats), dtypeName);

TEST(ConvGrad, CheckErrors) {
  ConvCase cc{1, 4, 5, 5, 2, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 2};
  Buf dy(DType::F32, {1, 2, 3, 3}), f(DType::F32, cc.filter()),
      x(DType::F32, cc.input());
  Buf dx(DType::F32, cc.input()), dw(DType::F32, cc.filter());
  EXPECT_TRUE(cc.call("conv2d_backward_data", {&dy, &f}, &dx).check().isOk());
  EXPECT_TRUE(cc.call("conv2d_backward_filter", {&dy, &x}, &dw).check().isOk());

  Buf badDy(DType::F32, {1, 2, 4, 3});
  expectError(cc.call("conv2d_backward_data", {&badDy, &f}, &dx).check(),
              "op 'conv2d_backward_data': grad has shape [1, 2, 4, 3] but "
              "conv2d of the output shape and the filter gives [1, 2, 3, 3]");
  expectError(cc.call("conv2d_backward_filter", {&badDy, &x}, &dw).check(),
              "op 'conv2d_backward_filter': grad has shape [1, 2, 4, 3] but "
              "conv2d of the input and the output shape gives [1, 2, 3, 3]");
  Buf dx3(DType::F32, {4, 5, 5});
  expectError(cc.call("conv2d_backward_data", {&dy, &f}, &dx3).check(),
              "output (the conv2d input's gradient) must be 4-D NCHW, got "
              "[4, 5, 5]");
  Buf dwWrongChannels(DType::F32, {2, 3, 3, 3});
  expectError(
      cc.call("conv2d_backward_filter", {&dy, &x}, &dwWrongChannels).check(),
      "filter has 3 input channels per group but input has 4 channels and "
      "group 2");
  Buf f16(DType::F16, cc.filter());
  expectError(cc.call("conv2d_backward_data", {&dy, &f16}, &dx).check(),
              "filter has element type f16 but grad has f32");
  Buf dx16(DType::F16, cc.input());
  expectError(cc.call("conv2d_backward_data", {&dy, &f}, &dx16).check(),
              "output has element type f16 but grad has f32");
  Buf idy(DType::I64, {1, 2, 3, 3});
  expectError(cc.call("conv2d_backward_data", {&idy, &f}, &dx).check(),
              "grad must be f32, f16, bf16 or f64, got i64");
  Call noGroup = cc.call("conv2d_backward_data", {&dy, &f}, &dx);
  noGroup.attrs = Attrs();
  noGroup.attrs.setInts("strides", {1, 1});
  noGroup.attrs.setInts("pads", {0, 0, 0, 0});
  noGroup.attrs.setInts("dilations", {1, 1});
  expectError(noGroup.check(), "attribute 'group' is missing");
  expectError(Call{"conv2d_backward_data", {}, {&dy}, {&dx}}.check(),
              "expects 2 inputs, got 1");
}

//===----------------------------------------------------------------------===//
// pooling gradients
//===----------------------------------------------------------------------===//

struct PoolCase {
  int64_t n, c, h, w, kh, kw;
  std::vector<int64_t> strides, pads, dilations; // dilations: max only
  bool ceil = false, countIncludePad = false;    // the latter: avg only

  Shape input() const { return {n, c, h, w}; }
  int64_t outDim(int i, int64_t in, int64_t k) const {
    int64_t span = dilations[i] * (k - 1) + 1;
    int64_t rem = in + pads[i] + pads[i + 2] - span;
    int64_t o =
        (ceil ? (rem + strides[i] - 1) / strides[i] : rem / strides[i]) + 1;
    if (ceil && (o - 1) * strides[i] >= in + pads[i])
      --o;
    return o;
  }
  Shape output() const { return {n, c, outDim(0, h, kh), outDim(1, w, kw)}; }
  std::string str() const {
    return "pool x" + ampc::rt::str(input()) + " kernel [" +
           std::to_string(kh) + ", " + std::to_string(kw) + "] strides" +
           ampc::rt::str(strides) + " pads" + ampc::rt::str(pads) +
           " dilations" + ampc::rt::str(dilations) + (ceil ? " ceil" : "") +
           (countIncludePad ? " count_include_pad" : "");
  }
  Call call(const std::string &op, std::vector<Buf *> ins, Buf *out) const {
    bool isMax = op.rfind("max", 0) == 0;
    Call c{op, {}, std::move(ins), {out}};
    c.attrs.setInts("kernel_shape", {kh, kw});
    c.attrs.setInts("strides", strides);
    c.attrs.setInts("pads", pads);
    c.attrs.setInt("ceil_mode", ceil);
    if (isMax)
      c.attrs.setInts("dilations", dilations);
    else
      c.attrs.setInt("count_include_pad", countIncludePad);
    return c;
  }
};

std::vector<PoolCase> poolCases(bool isMax) {
  std::vector<PoolCase> cases = {
      // overlapping windows with padding
      {2, 2, 5, 5, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      // ceil mode: the last window runs past the end padding
      {1, 2, 6, 7, 3, 2, {2, 2}, {1, 0, 1, 1}, {1, 1}, true, true},
      {1, 1, 5, 5, 2, 2, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, false},
      // stride larger than the kernel
      {1, 2, 7, 6, 2, 2, {3, 3}, {0, 1, 0, 1}, {1, 1}, false, true},
  };
  std::mt19937 rng(isMax ? 31 : 37);
  for (int i = 0; i < 20; ++i) {
    PoolCase pc;
    pc.n = randInt(rng, 1, 2);
    pc.c = randInt(rng, 1, 3);
    pc.kh = randInt(rng, 1, 3);
    pc.kw = randInt(rng, 1, 3);
    pc.strides = {randInt(rng, 1, 3), randInt(rng, 1, 3)};
    pc.dilations = {isMax ? randInt(rng, 1, 2) : 1,
                    isMax ? randInt(rng, 1, 2) : 1};
    int64_t k[2] = {pc.kh, pc.kw};
    pc.pads = {randInt(rng, 0, int(k[0] - 1)), randInt(rng, 0, int(k[1] - 1)),
               randInt(rng, 0, int(k[0] - 1)), randInt(rng, 0, int(k[1] - 1))};
    pc.h = roomFor(rng, pc.dilations[0] * (pc.kh - 1) + 1,
                   pc.pads[0] + pc.pads[2], 4);
    pc.w = roomFor(rng, pc.dilations[1] * (pc.kw - 1) + 1,
                   pc.pads[1] + pc.pads[3], 4);
    pc.ceil = randInt(rng, 0, 1);
    pc.countIncludePad = !isMax && randInt(rng, 0, 1);
    cases.push_back(pc);
  }
  return cases;
}

TEST(MaxPoolGrad, MatchesFiniteDifferencesOfMaxPool2d) {
  uint32_t seed = 50;
  bool threaded = false;
  for (const PoolCase &pc : poolCases(true)) {
    // Mostly negative, so padding would win if it were ever taken for 0.
    Buf x = distinctBuf(DType::F64, pc.input(), seed++,
                        3.0 - static_cast<double>(numElements(pc.input())));
    Buf dy = randomBuf(DType::F64, pc.output(), seed++);
    Buf y(DType::F64, pc.output());
    Call forward = pc.call("max_pool2d", {&x}, &y);
    ASSERT_TRUE(forward.run().isOk()) << pc.str();
    // A window of padding only (dilation) gives -inf and takes no gradient.
    for (int64_t i = 0; i < y.size(); ++i)
      if (std::isinf(y.get(i)))
        dy.set(i, 0);
    std::vector<double> num = numericGrad(forward, x, dy);
    Buf dx(DType::F64, pc.input());
    Status s = pc.call("max_pool2d_grad", {&dy, &x}, &dx)
                   .run(threaded ? &testPool() : nullptr);
    threaded = !threaded;
    ASSERT_TRUE(s.isOk()) << pc.str() << ": " << s.message();
    expectMatchesNumeric(dx, num, pc.str());
  }
}

TEST(AvgPoolGrad, MatchesFiniteDifferencesOfAvgPool2d) {
  uint32_t seed = 70;
  bool threaded = false;
  for (const PoolCase &pc : poolCases(false)) {
    Buf x = randomBuf(DType::F64, pc.input(), seed++);
    Buf dy = randomBuf(DType::F64, pc.output(), seed++);
    Buf y(DType::F64, pc.output());
    Call forward = pc.call("avg_pool2d", {&x}, &y);
    std::vector<double> num = numericGrad(forward, x, dy);
    Buf dx(DType::F64, pc.input());
    Status s = pc.call("avg_pool2d_grad", {&dy}, &dx)
                   .run(threaded ? &testPool() : nullptr);
    threaded = !threaded;
    ASSERT_TRUE(s.isOk()) << pc.str() << ": " << s.message();
    expectMatchesNumeric(dx, num, pc.str());
  }
}

TEST(MaxPoolGrad, TiesGoToTheFirstMaximumAndOverlapsAdd) {
  PoolCase pc{1, 1, 3, 3, 2, 2, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  Buf dy = makeBuf(DType::F32, {1, 1, 2, 2}, {1, 10, 100, 1000});
  // All equal: each 2x2 window's first element in row-major order.
  Buf same = makeBuf(DType::F32, {1, 1, 3, 3}, {5, 5, 5, 5, 5, 5, 5, 5, 5});
  Buf dx(DType::F32, pc.input());
  ASSERT_TRUE(pc.call("max_pool2d_grad", {&dy, &same}, &dx).run().isOk());
  EXPECT_EQ(dx.values(),
            (std::vector<double>{1, 10, 0, 100, 1000, 0, 0, 0, 0}));
  // The centre is every window's maximum: the four gradients add there.
  Buf centre = makeBuf(DType::F32, {1, 1, 3, 3}, {5, 5, 1, 0, 9, 2, 3, 4, 8});
  ASSERT_TRUE(pc.call("max_pool2d_grad", {&dy, &centre}, &dx).run().isOk());
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 0, 0, 0, 1111, 0, 0, 0, 0}));
}

TEST(MaxPoolGrad, PaddingNeverWinsAndNaNTakesTheGradient) {
  // All inputs negative: a padded 0 would be the maximum if it were read.
  PoolCase pc{1, 1, 2, 2, 2, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}};
  Buf x = makeBuf(DType::F32, {1, 1, 2, 2}, {-4, -3, -2, -1});
  Buf dy(DType::F32, pc.output());
  for (int64_t i = 0; i < dy.size(); ++i)
    dy.set(i, 1);
  Buf dx(DType::F32, pc.input());
  ASSERT_TRUE(pc.call("max_pool2d_grad", {&dy, &x}, &dx).run().isOk());
  // Nine 2x2 windows; each element is the maximum of the windows holding
  // it and no larger element: -1 of four, -2 and -3 of two each, -4 of one.
  EXPECT_EQ(dx.values(), (std::vector<double>{1, 2, 2, 4}));

  // As in the forward kernel, NaN is the maximum; of several, the last.
  PoolCase row{1, 1, 1, 4, 1, 4, {1, 1}, {0, 0, 0, 0}, {1, 1}};
  double nan = std::numeric_limits<double>::quiet_NaN();
  Buf xn = makeBuf(DType::F32, {1, 1, 1, 4}, {1, nan, 3, nan});
  Buf dyn = makeBuf(DType::F32, {1, 1, 1, 1}, {2});
  Buf dxn(DType::F32, row.input());
  ASSERT_TRUE(row.call("max_pool2d_grad", {&dyn, &xn}, &dxn).run().isOk());
  EXPECT_EQ(dxn.values(), (std::vector<double>{0, 0, 0, 2}));
}

TEST(MaxPoolGrad, WindowOfPaddingOnlyTakesNoGradient) {
  // Kernel 2 with dilation 3 and a top pad of 1 over 2 rows: the first
  // window reads rows -1 and 2, both outside the input.
  PoolCase pc{1, 1, 2, 1, 2, 1, {1, 1}, {1, 0, 1, 0}, {3, 1}};
  ASSERT_EQ(pc.output(), (Shape{1, 1, 1, 1}));
  Buf x = makeBuf(DType::F64, pc.input(), {1, 2});
  Buf dy = makeBuf(DType::F64, pc.output(), {5});
  Buf dx(DType::F64, pc.input());
  ASSERT_TRUE(pc.call("max_pool2d_grad", {&dy, &x}, &dx).run().isOk());
  EXPECT_EQ(dx.values(), (std::vector<double>{0, 0}));
}

TEST(AvgPoolGrad, DivisorFollowsCountIncludePadAndCeilMode) {
  // 1x3 input, kernel 1x2, stride 2, ceil mode: windows [0, 1] and [2, 3],
  // where column 3 is the right pad (if any) or past the end. The second
  // window divides by 1, except with count_include_pad and a right pad,
  // which counts (a position past the end padding never does).
  struct Case {
    int64_t padRight;
    bool countIncludePad;
    double last;
  };
  for (Case c : {Case{1, false, 8}, Case{1, true, 4}, Case{0, true, 8}}) {
    PoolCase pc{1,
                1,
                1,
                3,
                1,
                2,
                {1, 2},
                {0, 0, 0, c.padRight},
                {1, 1},
                true,
                c.countIncludePad};
    ASSERT_EQ(pc.output(), (Shape{1, 1, 1, 2}));
    Buf dy = makeBuf(DType::F32, pc.output(), {4, 8});
    Buf dx(DType::F32, pc.input());
    ASSERT_TRUE(pc.call("avg_pool2d_grad", {&dy}, &dx).run().isOk());
    EXPECT_EQ(dx.values(), (std::vector<double>{2, 2, c.last})) << pc.str();
  }
}

class PoolGradDTypeTest : public ::testing::TestWithParam<DType> {};

// One f32 division and sum per element before one rounding to t.
TEST_P(PoolGradDTypeTest, MatchesF64OnTheSameValues) {
  DType t = GetParam();
  uint32_t seed = 300;
  for (bool isMax : {true, false})
    for (const PoolCase &pc : poolCases(isMax)) {
      Buf x = randomBuf(t, pc.input(), seed++);
      Buf dy = randomBuf(t, pc.output(), seed++);
      Buf x64 = asF64(x), dy64 = asF64(dy);
      Buf dx(t, pc.input()), dx64(DType::F64, pc.input());
      Call low = isMax ? pc.call("max_pool2d_grad", {&dy, &x}, &dx)
                       : pc.call("avg_pool2d_grad", {&dy}, &dx);
      Call ref = isMax ? pc.call("max_pool2d_grad", {&dy64, &x64}, &dx64)
                       : pc.call("avg_pool2d_grad", {&dy64}, &dx64);
      ASSERT_TRUE(low.run(&testPool()).isOk()) << pc.str();
      ASSERT_TRUE(ref.run().isOk()) << pc.str();
      expectNear(dx, dx64.values(), 1e-6, relTol(t), pc.str());
    }
}

INSTANTIATE_TEST_SUITE_P(LowFloats, PoolGradDTypeTest,
                         ::testing::ValuesIn(kLowFloats), dtypeName);

TEST(PoolGrad, CheckErrors) {
  PoolCase pc{1, 2, 4, 4, 2, 2, {2, 2}, {0, 0, 0, 0}, {1, 1}};
  Buf x(DType::F32, pc.input()), dy(DType::F32, {1, 2, 2, 2}),
      dx(DType::F32, pc.input());
  EXPECT_TRUE(pc.call("max_pool2d_grad", {&dy, &x}, &dx).check().isOk());
  EXPECT_TRUE(pc.call("avg_pool2d_grad", {&dy}, &dx).check().isOk());

  Buf badDy(DType::F32, {1, 2, 3, 2});
  expectError(pc.call("max_pool2d_grad", {&badDy, &x}, &dx).check(),
              "op 'max_pool2d_grad': grad has shape [1, 2, 3, 2] but "
              "max_pool2d of the input gives [1, 2, 2, 2]");
  expectError(pc.call("avg_pool2d_grad", {&badDy}, &dx).check(),
              "op 'avg_pool2d_grad': grad has shape [1, 2, 3, 2] but "
              "avg_pool2d of the output shape gives [1, 2, 2, 2]");
  Buf dxWrong(DType::F32, {1, 2, 4, 5});
  expectError(pc.call("max_pool2d_grad", {&dy, &x}, &dxWrong).check(),
              "output has shape [1, 2, 4, 5] but the op computes [1, 2, 4, 4]");
  Buf dx2(DType::F32, {2, 4, 4});
  expectError(pc.call("avg_pool2d_grad", {&dy}, &dx2).check(),
              "output (the pooled input's gradient) must be 4-D NCHW");
  Buf x16(DType::F16, pc.input());
  expectError(pc.call("max_pool2d_grad", {&dy, &x16}, &dx).check(),
              "input has element type f16 but grad has f32");
  PoolCase bigPad = pc;
  bigPad.pads = {2, 0, 0, 0};
  expectError(bigPad.call("avg_pool2d_grad", {&dy}, &dx).check(),
              "attribute 'pads' [2, 0, 0, 0] must be smaller than the kernel");
  Call noDilations = pc.call("max_pool2d_grad", {&dy, &x}, &dx);
  noDilations.attrs = Attrs();
  noDilations.attrs.setInts("kernel_shape", {2, 2});
  noDilations.attrs.setInts("strides", {2, 2});
  noDilations.attrs.setInts("pads", {0, 0, 0, 0});
  expectError(noDilations.check(), "attribute 'dilations' is missing");
}

} // namespace
