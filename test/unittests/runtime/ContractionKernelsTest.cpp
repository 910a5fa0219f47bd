//===- ContractionKernelsTest.cpp - matmul, gemm, conv2d, pooling ---------===//
//
// Each kernel against a naive double-precision loop over the stored input
// values (and ONNX's published examples for pooling), in every dtype the op
// allows, plus every check() error path.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"
#include "runtime/Half.h"

#include <cmath>
#include <limits>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

// Naive numpy matmul on doubles (1-D promotion, batch broadcasting).
std::vector<double> refMatmul(const Buf &a, const Buf &b, Shape &outShape) {
  Shape pa = a.shape, pb = b.shape;
  bool av = pa.size() == 1, bv = pb.size() == 1;
  if (av)
    pa.insert(pa.begin(), 1);
  if (bv)
    pb.push_back(1);
  int64_t m = pa[pa.size() - 2], k = pa.back(), n = pb.back();
  size_t r = std::max(pa.size(), pb.size()) - 2;
  Shape ba(r, 1), bb(r, 1), bo(r, 1);
  for (size_t i = 0; i < r; ++i) {
    size_t oa = r - (pa.size() - 2), ob = r - (pb.size() - 2);
    ba[i] = i < oa ? 1 : pa[i - oa];
    bb[i] = i < ob ? 1 : pb[i - ob];
    bo[i] = std::max(ba[i], bb[i]);
  }
  int64_t batch = numElements(bo);
  std::vector<double> av_ = a.values(), bv_ = b.values(), out;
  for (int64_t t = 0; t < batch; ++t) {
    // Coordinates of t in bo, then flat offsets in ba/bb.
    int64_t rem = t, offA = 0, offB = 0, sa = 1, sb = 1;
    for (size_t i = r; i-- > 0;) {
      int64_t c = rem % bo[i];
      rem /= bo[i];
      offA += (ba[i] == 1 ? 0 : c) * sa;
      offB += (bb[i] == 1 ? 0 : c) * sb;
      sa *= ba[i];
      sb *= bb[i];
    }
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += av_[offA * m * k + i * k + p] * bv_[offB * k * n + p * n + j];
        out.push_back(s);
      }
  }
  outShape = bo;
  if (!av)
    outShape.push_back(m);
  if (!bv)
    outShape.push_back(n);
  return out;
}

struct MatmulCase {
  Shape a, b;
};

class MatmulTest : public ::testing::TestWithParam<DType> {};

TEST_P(MatmulTest, MatchesNaiveReference) {
  DType t = GetParam();
  std::vector<MatmulCase> cases = {
      {{3, 4}, {4, 5}},
      {{2, 3, 4}, {4, 5}},
      {{4}, {4, 5}},
      {{3, 4}, {4}},
      {{4}, {4}},
      {{2, 1, 3, 4}, {3, 4, 2}},
      {{1, 3, 4}, {2, 4, 5}},
      {{3, 4}, {2, 4, 5}},
      {{2, 3, 0}, {0, 4}},
      {{5}, {2, 5, 3}},
      {{2, 3, 17, 33}, {33, 9}},
      {{2, 2, 3}, {2, 1, 3, 2}},
  };
  uint32_t seed = 1;
  for (const MatmulCase &mc : cases) {
    for (bool threaded : {false, true}) {
      Buf a = randomBuf(t, mc.a, seed++), b = randomBuf(t, mc.b, seed++);
      Shape outShape;
      std::vector<double> ref = refMatmul(a, b, outShape);
      Buf out(t, outShape);
      Call c{"matmul", {}, {&a, &b}, {&out}};
      ASSERT_TRUE(c.run(threaded ? &testPool() : nullptr).isOk())
          << c.run().message();
      int64_t k = mc.a.back();
      // Accumulation error grows with K; the stored value is rounded once.
      expectNear(out, ref, 1e-6 * k + relTol(t), relTol(t),
                 "matmul " + str(mc.a) + " x " + str(mc.b));
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, MatmulTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(Matmul, IntegersAreExact) {
  for (DType t : {DType::I64, DType::I32}) {
    Buf a = randomBuf(t, {2, 3, 4}, 7), b = randomBuf(t, {4, 2}, 8);
    Shape s;
    std::vector<double> ref = refMatmul(a, b, s);
    Buf out(t, s);
    ASSERT_TRUE((Call{"matmul", {}, {&a, &b}, {&out}}.run().isOk()));
    EXPECT_EQ(out.values(), ref);
  }
  // Large i64 values stay exact (no trip through double).
  Buf a = makeBuf(DType::I64, {1, 2}, {0, 0}),
      b = makeBuf(DType::I64, {2}, {0, 0});
  int64_t big = (int64_t(1) << 53) + 1;
  std::memcpy(a.bytes(), &big, 8);
  int64_t one = 1;
  std::memcpy(b.bytes(), &one, 8);
  Buf out(DType::I64, {1});
  ASSERT_TRUE((Call{"matmul", {}, {&a, &b}, {&out}}.run().isOk()));
  int64_t got;
  std::memcpy(&got, out.bytes(), 8);
  EXPECT_EQ(got, big);
}

TEST(Matmul, F16AccumulatesInF32AndRoundsOnce) {
  // 2048 + 1 + 1: f16 steps would give 2048 twice; f32 accumulation 2050.
  Buf a = makeBuf(DType::F16, {1, 3}, {2048, 1, 1});
  Buf b = makeBuf(DType::F16, {3, 1}, {1, 1, 1});
  Buf out(DType::F16, {1, 1});
  ASSERT_TRUE((Call{"matmul", {}, {&a, &b}, {&out}}.run().isOk()));
  EXPECT_EQ(out.get(0), 2050.0);
  // 2048 + 1 is a tie in f16 and rounds (once) to even: 2048.
  Buf a2 = makeBuf(DType::F16, {1, 2}, {2048, 1});
  Buf b2 = makeBuf(DType::F16, {2, 1}, {1, 1});
  ASSERT_TRUE((Call{"matmul", {}, {&a2, &b2}, {&out}}.run().isOk()));
  EXPECT_EQ(out.get(0), 2048.0);
  // Overflow to infinity happens only at the final rounding.
  Buf a3 = makeBuf(DType::F16, {1, 2}, {60000, 60000});
  Buf b3 = makeBuf(DType::F16, {2, 1}, {1, -1});
  ASSERT_TRUE((Call{"matmul", {}, {&a3, &b3}, {&out}}.run().isOk()));
  EXPECT_EQ(out.get(0), 0.0);
  Buf b4 = makeBuf(DType::F16, {2, 1}, {1, 1});
  ASSERT_TRUE((Call{"matmul", {}, {&a3, &b4}, {&out}}.run().isOk()));
  EXPECT_TRUE(std::isinf(out.get(0)));
}

TEST(Matmul, CheckErrors) {
  Buf s(DType::F32, {}), a(DType::F32, {3, 4}), b(DType::F32, {5, 2}),
      b3(DType::F32, {2, 4, 2}), a3(DType::F32, {3, 3, 4}),
      bi(DType::I64, {4, 2}), ok(DType::F32, {3, 2}), bad(DType::F32, {3, 3}),
      okF16(DType::F16, {3, 2}), bb(DType::I1, {4, 2}), bb2(DType::I1, {3, 4}),
      b42(DType::F32, {4, 2}), okB(DType::I1, {3, 2});
  expectError(Call{"matmul", {}, {&s, &b42}, {&ok}}.check(), "rank >= 1");
  expectError(Call{"matmul", {}, {&a, &b}, {&ok}}.check(),
              "contracting dimensions differ");
  expectError(Call{"matmul", {}, {&a3, &b3}, {&ok}}.check(),
              "do not broadcast");
  expectError(Call{"matmul", {}, {&a, &bi}, {&ok}}.check(),
              "rhs has element type i64 but lhs has f32");
  expectError(Call{"matmul", {}, {&a, &b42}, {&bad}}.check(),
              "output has shape [3, 3] but the op computes [3, 2]");
  expectError(Call{"matmul", {}, {&a, &b42}, {&okF16}}.check(),
              "output has element type f16 but the op computes f32");
  expectError(Call{"matmul", {}, {&bb2, &bb}, {&okB}}.check(),
              "lhs must be a float or i64/i32 tensor");
  expectError(Call{"matmul", {}, {&a}, {&ok}}.check(), "expects 2 inputs");
  expectError(Call{"matmul", {}, {&a, &b42}, {}}.check(), "expects 1 outputs");
  EXPECT_TRUE((Call{"matmul", {}, {&a, &b42}, {&ok}}.check().isOk()));
}

//===----------------------------------------------------------------------===//
// gemm
//===----------------------------------------------------------------------===//

class GemmTest : public ::testing::TestWithParam<DType> {};

TEST_P(GemmTest, TransposesAlphaBetaAndBiasBroadcast) {
  DType t = GetParam();
  const int64_t m = 5, k = 7, n = 6;
  std::vector<Shape> cShapes = {{}, {n}, {m, 1}, {m, n}, {1, n}, {1}};
  uint32_t seed = 100;
  for (bool ta : {false, true})
    for (bool tb : {false, true})
      for (int ci = -1; ci < static_cast<int>(cShapes.size()); ++ci) {
        Buf a = randomBuf(t, ta ? Shape{k, m} : Shape{m, k}, seed++);
        Buf b = randomBuf(t, tb ? Shape{n, k} : Shape{k, n}, seed++);
        Buf c = randomBuf(t, ci < 0 ? Shape{1} : cShapes[ci], seed++);
        Buf out(t, {m, n});
        Call call{"gemm", gemmAttrs(), {&a, &b, ci < 0 ? nullptr : &c}, {&out}};
        call.attrs.setFloat("alpha", 0.5);
        call.attrs.setFloat("beta", -2.0);
        call.attrs.setInt("trans_a", ta);
        call.attrs.setInt("trans_b", tb);
        ASSERT_TRUE(call.run().isOk()) << call.run().message();
        expectNear(out, refGemm(a, b, ci < 0 ? nullptr : &c, 0.5, -2.0, ta, tb),
                   relTol(t) * 4, relTol(t),
                   "gemm ta=" + std::to_string(ta) + " tb=" +
                       std::to_string(tb) + " c=" + std::to_string(ci));
      }
}

INSTANTIATE_TEST_SUITE_P(Floats, GemmTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

// oneDNN reads bf16 operands as stored where the CPU multiplies bf16
// (runtime/cpu/Dnnl.h), and widens them to f32 elsewhere. Either way the
// result is the f32 product of the same values rounded once: within one
// bf16 step of the f32 gemm of widened copies, rounded (only the f32
// summation order differs), and mostly the same bits. ctest runs this file
// again as contractions-without-native-bf16 (DNNL_MAX_CPU_ISA=AVX512_CORE)
// for the widening path.
TEST(Gemm, Bf16IsTheF32ProductOfTheSameValuesRoundedOnce) {
  const int64_t m = 37, k = 300, n = 29;
  uint32_t seed = 500;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) {
      Buf a = randomBuf(DType::BF16, ta ? Shape{k, m} : Shape{m, k}, seed++);
      Buf b = randomBuf(DType::BF16, tb ? Shape{n, k} : Shape{k, n}, seed++);
      Buf a32(DType::F32, a.shape), b32(DType::F32, b.shape);
      for (int64_t i = 0; i < a.size(); ++i)
        a32.set(i, a.get(i));
      for (int64_t i = 0; i < b.size(); ++i)
        b32.set(i, b.get(i));
      Buf out(DType::BF16, {m, n}), out32(DType::F32, {m, n});
      Call call{"gemm", gemmAttrs(), {&a, &b, nullptr}, {&out}};
      Call call32{"gemm", gemmAttrs(), {&a32, &b32, nullptr}, {&out32}};
      for (Call *c : {&call, &call32}) {
        c->attrs.setInt("trans_a", ta);
        c->attrs.setInt("trans_b", tb);
        ASSERT_TRUE(c->run(&testPool()).isOk()) << c->run().message();
      }
      int64_t same = 0;
      for (int64_t i = 0; i < out.size(); ++i) {
        float f = static_cast<float>(out32.get(i));
        float rounded = bfloatBitsToFloat(floatToBFloatBits(f));
        float step = std::ldexp(1.0f, std::ilogb(rounded) - 7);
        ASSERT_LE(std::fabs(out.get(i) - rounded), step)
            << "ta=" << ta << " tb=" << tb << " element " << i;
        same += out.get(i) == rounded;
      }
      EXPECT_GE(same, out.size() * 9 / 10) << "ta=" << ta << " tb=" << tb;
    }
}

TEST(Gemm, DefaultsAndTwoInputForm) {
  Buf a = randomBuf(DType::F32, {3, 4}, 1),
      b = randomBuf(DType::F32, {4, 2}, 2);
  Buf c = randomBuf(DType::F32, {2}, 3), out(DType::F32, {3, 2});
  // No attributes at all: alpha = beta = 1, no transposes.
  ASSERT_TRUE((Call{"gemm", gemmAttrs(), {&a, &b, &c}, {&out}}.run().isOk()));
  expectNear(out, refGemm(a, b, &c, 1, 1, false, false), 1e-6, 1e-6);
  // Only two inputs listed.
  ASSERT_TRUE((Call{"gemm", gemmAttrs(), {&a, &b}, {&out}}.run().isOk()));
  expectNear(out, refGemm(a, b, nullptr, 1, 1, false, false), 1e-6, 1e-6);
}

TEST(Gemm, BetaZeroTimesInfinityIsNaN) {
  Buf a = makeBuf(DType::F32, {1, 1}, {1}),
      b = makeBuf(DType::F32, {1, 1}, {1});
  Buf c = makeBuf(DType::F32, {1}, {std::numeric_limits<double>::infinity()});
  Buf out(DType::F32, {1, 1});
  Call call{"gemm", gemmAttrs(), {&a, &b, &c}, {&out}};
  call.attrs.setFloat("beta", 0.0);
  ASSERT_TRUE(call.run().isOk());
  EXPECT_TRUE(std::isnan(out.get(0)));
}

TEST(Gemm, IntegersExactAndFractionalAlphaTruncates) {
  for (DType t : {DType::I64, DType::I32}) {
    Buf a = randomBuf(t, {4, 3}, 5), b = randomBuf(t, {2, 4}, 6);
    Buf c = randomBuf(t, {3, 1}, 7), out(t, {3, 2});
    Call call{"gemm", gemmAttrs(), {&a, &b, &c}, {&out}};
    call.attrs.setFloat("alpha", 3.0);
    call.attrs.setFloat("beta", -1.0);
    call.attrs.setInt("trans_a", 1);
    call.attrs.setInt("trans_b", 1);
    ASSERT_TRUE(call.run().isOk()) << call.run().message();
    EXPECT_EQ(out.values(), refGemm(a, b, &c, 3, -1, true, true));
  }
  Buf a = makeBuf(DType::I64, {1, 1}, {3}),
      b = makeBuf(DType::I64, {1, 1}, {1});
  Buf out(DType::I64, {1, 1});
  Call call{"gemm", gemmAttrs(), {&a, &b}, {&out}};
  call.attrs.setFloat("alpha", 0.5); // 1.5 truncates toward zero
  ASSERT_TRUE(call.run().isOk());
  EXPECT_EQ(out.get(0), 1.0);
}

TEST(Gemm, CheckErrors) {
  Buf a(DType::F32, {3, 4}), b(DType::F32, {4, 2}), out(DType::F32, {3, 2});
  Buf a3(DType::F32, {1, 3, 4}), c(DType::F32, {3, 3}), cI(DType::I64, {2});
  auto call = [&](std::vector<Buf *> ins) {
    return Call{"gemm", gemmAttrs(), std::move(ins), {&out}};
  };
  expectError(call({&a3, &b}).check(), "must be 2-D");
  expectError(call({&a, &b, &c}).check(),
              "c of shape [3, 3] does not broadcast to [3, 2]");
  expectError(call({&a, &b, &cI}).check(), "c has element type i64");
  Call t = call({&a, &b});
  t.attrs.setInt("trans_a", 1);
  expectError(t.check(),
              "contracting dimensions differ: a [3, 4] (transposed)");
  Call t2 = call({&a, &b});
  t2.attrs.setInt("trans_b", 2);
  expectError(t2.check(), "attribute 'trans_b' must be 0 or 1");
  Call t3 = call({&a, &b});
  t3.attrs.setInt("alpha", 1);
  expectError(t3.check(), "attribute 'alpha' must be a float, got an integer");
  Buf out2(DType::F32, {2, 3});
  expectError((Call{"gemm", gemmAttrs(), {&a, &b}, {&out2}}.check()),
              "output has shape [2, 3]");
  expectError(call({&a}).check(), "expects 2 to 3 inputs");
  Call absentA{"gemm", gemmAttrs(), {nullptr, &b}, {&out}};
  expectError(absentA.check(), "input 0 is required");
}

//===----------------------------------------------------------------------===//
// conv2d
//===----------------------------------------------------------------------===//

struct ConvCase {
  int64_t n, c, h, w, o, kh, kw;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group;
  bool bias;
};

std::vector<double> refConv(const Buf &x, const Buf &f, const Buf *bias,
                            const ConvCase &cc, Shape &outShape) {
  int64_t oh =
      (cc.h + cc.pads[0] + cc.pads[2] - cc.dilations[0] * (cc.kh - 1) - 1) /
          cc.strides[0] +
      1;
  int64_t ow =
      (cc.w + cc.pads[1] + cc.pads[3] - cc.dilations[1] * (cc.kw - 1) - 1) /
          cc.strides[1] +
      1;
  outShape = {cc.n, cc.o, oh, ow};
  int64_t cg = cc.c / cc.group, og = cc.o / cc.group;
  std::vector<double> out;
  for (int64_t n = 0; n < cc.n; ++n)
    for (int64_t o = 0; o < cc.o; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t xx = 0; xx < ow; ++xx) {
          double s = bias ? bias->get(o) : 0.0;
          int64_t g = o / og;
          for (int64_t ci = 0; ci < cg; ++ci)
            for (int64_t i = 0; i < cc.kh; ++i)
              for (int64_t j = 0; j < cc.kw; ++j) {
                int64_t iy =
                    y * cc.strides[0] - cc.pads[0] + i * cc.dilations[0];
                int64_t ix =
                    xx * cc.strides[1] - cc.pads[1] + j * cc.dilations[1];
                if (iy < 0 || iy >= cc.h || ix < 0 || ix >= cc.w)
                  continue;
                s += x.get(((n * cc.c + g * cg + ci) * cc.h + iy) * cc.w + ix) *
                     f.get(((o * cg + ci) * cc.kh + i) * cc.kw + j);
              }
          out.push_back(s);
        }
  return out;
}

Call convCall(Buf *x, Buf *f, Buf *b, Buf *out, const ConvCase &cc) {
  Call c{"conv2d", {}, {x, f, b}, {out}};
  c.attrs.setInts("strides", cc.strides);
  c.attrs.setInts("pads", cc.pads);
  c.attrs.setInts("dilations", cc.dilations);
  c.attrs.setInt("group", cc.group);
  return c;
}

class ConvTest : public ::testing::TestWithParam<DType> {};

TEST_P(ConvTest, MatchesDirectConvolution) {
  DType t = GetParam();
  std::vector<ConvCase> cases = {
      // strides, asymmetric pads, dilations, groups, bias
      {2, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, true},
      // 1x1 stride-1 unpadded fast path, with and without groups
      {2, 3, 5, 4, 5, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, true},
      {3, 6, 4, 4, 9, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 3, false},
      // 1x1 but strided or padded: not the fast path
      {1, 2, 5, 5, 3, 1, 1, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true},
      // depthwise 3x3 same padding
      {2, 4, 6, 5, 4, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 4, true},
      // plain 3x3, larger, no bias
      {2, 8, 9, 11, 16, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false},
      // strides, pads, dilations and groups with 4 input channels per
      // group: bf16 multiplied natively where the CPU can
      {2, 8, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2, true},
      // kernel covering the whole padded input
      {1, 1, 2, 2, 1, 4, 4, {3, 3}, {1, 1, 1, 1}, {1, 1}, 1, false},
      // ungrouped, with 4 input channels and more (a oneDNN primitive),
      // strided, padded and dilated with a bias, and a larger map
      {3, 8, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 1, true},
      {2, 8, 14, 13, 8, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      // small maps where taps read only padding, one GEMM over the batch
      // (SmallMapConv.h): 1x1 under a padded 3x3 kernel, 2x2 at stride 2
      {4, 8, 1, 1, 6, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1, true},
      {3, 8, 2, 2, 6, 3, 3, {2, 2}, {1, 1, 1, 1}, {1, 1}, 1, true},
  };
  uint32_t seed = 11;
  for (const ConvCase &cc : cases)
    for (bool threaded : {false, true}) {
      Buf x = randomBuf(t, {cc.n, cc.c, cc.h, cc.w}, seed++);
      Buf f = randomBuf(t, {cc.o, cc.c / cc.group, cc.kh, cc.kw}, seed++);
      Buf b = randomBuf(t, {cc.o}, seed++);
      Shape outShape;
      std::vector<double> ref =
          refConv(x, f, cc.bias ? &b : nullptr, cc, outShape);
      Buf out(t, outShape);
      Call call = convCall(&x, &f, cc.bias ? &b : nullptr, &out, cc);
      ASSERT_TRUE(call.run(threaded ? &testPool() : nullptr).isOk())
          << call.run().message();
      int64_t k = cc.c / cc.group * cc.kh * cc.kw;
      expectNear(out, ref, 1e-6 * k + relTol(t) * 2, relTol(t),
                 "conv case " + str(x.shape) + " * " + str(f.shape));
    }
}

INSTANTIATE_TEST_SUITE_P(Floats, ConvTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(Conv2d, HandComputed) {
  // 1x1x3x3 input 1..9, 2x2 filter of ones, pads 1 on top/left only.
  Buf x = makeBuf(DType::F32, {1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9});
  Buf f = makeBuf(DType::F32, {1, 1, 2, 2}, {1, 1, 1, 1});
  Buf b = makeBuf(DType::F32, {1}, {0.5});
  Buf out(DType::F32, {1, 1, 2, 2});
  ConvCase cc{1, 1, 3, 3, 1, 2, 2, {2, 2}, {1, 1, 0, 0}, {1, 1}, 1, true};
  ASSERT_TRUE(convCall(&x, &f, &b, &out, cc).run().isOk());
  // Windows start at (-1,-1), (-1,1), (1,-1), (1,1).
  EXPECT_EQ(out.values(), (std::vector<double>{1.5, 5.5, 11.5, 28.5}));
}

TEST(Conv2d, CheckErrors) {
  Buf x(DType::F32, {1, 4, 5, 5}), f(DType::F32, {2, 3, 3, 3}),
      fOk(DType::F32, {2, 4, 3, 3}), out(DType::F32, {1, 2, 3, 3}),
      bias(DType::F32, {3}), f16(DType::F16, {2, 4, 3, 3}),
      f3(DType::F32, {3, 2, 3, 3}), x3(DType::F32, {4, 5, 5}),
      xi(DType::I64, {1, 4, 5, 5}), outI(DType::I64, {1, 2, 3, 3});
  ConvCase cc{1, 4, 5, 5, 2, 3, 3, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, false};
  expectError(convCall(&x, &f, nullptr, &out, cc).check(),
              "filter has 3 input channels per group but input has 4 channels "
              "and group 1");
  ConvCase g2 = cc;
  g2.group = 2;
  expectError(convCall(&x, &f3, nullptr, &out, g2).check(),
              "filter has 3 output channels, not divisible by group 2");
  ConvCase g0 = cc;
  g0.group = 0;
  expectError(convCall(&x, &fOk, nullptr, &out, g0).check(),
              "attribute 'group' must be >= 1");
  expectError(convCall(&x, &fOk, &bias, &out, cc).check(),
              "bias must have shape [2], got [3]");
  expectError(convCall(&x, &f16, nullptr, &out, cc).check(),
              "filter has element type f16 but input has f32");
  expectError(convCall(&x3, &fOk, nullptr, &out, cc).check(),
              "input must be 4-D NCHW");
  expectError(convCall(&xi, &fOk, nullptr, &outI, cc).check(),
              "input must be f32, f16, bf16 or f64");
  ConvCase neg = cc;
  neg.pads = {0, -1, 0, 0};
  expectError(convCall(&x, &fOk, nullptr, &out, neg).check(),
              "attribute 'pads' must be >= 0");
  ConvCase s0 = cc;
  s0.strides = {0, 1};
  expectError(convCall(&x, &fOk, nullptr, &out, s0).check(),
              "attribute 'strides' must be >= 1");
  ConvCase d0 = cc;
  d0.dilations = {1, 0};
  expectError(convCall(&x, &fOk, nullptr, &out, d0).check(),
              "attribute 'dilations' must be >= 1");
  ConvCase p3 = cc;
  p3.pads = {0, 0, 0};
  expectError(convCall(&x, &fOk, nullptr, &out, p3).check(),
              "attribute 'pads' must have 4 entries");
  ConvCase s3 = cc;
  s3.strides = {1};
  expectError(convCall(&x, &fOk, nullptr, &out, s3).check(),
              "attribute 'strides' must have 2 entries");
  ConvCase big = cc;
  big.dilations = {3, 1};
  expectError(convCall(&x, &fOk, nullptr, &out, big).check(),
              "kernel extent 7 is larger than the padded input 5");
  Buf outBad(DType::F32, {1, 2, 4, 4});
  expectError(convCall(&x, &fOk, nullptr, &outBad, cc).check(),
              "output has shape [1, 2, 4, 4] but the op computes [1, 2, 3, 3]");
  Call missing{"conv2d", {}, {&x, &fOk}, {&out}};
  missing.attrs.setInts("strides", {1, 1});
  missing.attrs.setInts("pads", {0, 0, 0, 0});
  missing.attrs.setInts("dilations", {1, 1});
  expectError(missing.check(), "attribute 'group' is missing");
  missing.attrs.setInts("group", {1});
  expectError(missing.check(),
              "attribute 'group' must be an integer, got an integer list");
  EXPECT_TRUE(convCall(&x, &fOk, nullptr, &out, cc).check().isOk());
}

//===----------------------------------------------------------------------===//
// Pooling
//===----------------------------------------------------------------------===//

Call poolCall(const std::string &op, Buf *x, Buf *out,
              std::vector<int64_t> kernel, std::vector<int64_t> strides,
              std::vector<int64_t> pads, bool ceil, bool includePad = false,
              std::vector<int64_t> dilations = {1, 1}) {
  Call c{op, {}, {x}, {out}};
  c.attrs.setInts("kernel_shape", kernel);
  c.attrs.setInts("strides", strides);
  c.attrs.setInts("pads", pads);
  c.attrs.setInt("ceil_mode", ceil);
  if (op == "max_pool2d")
    c.attrs.setInts("dilations", dilations);
  else
    c.attrs.setInt("count_include_pad", includePad);
  return c;
}

std::vector<double> iota(int64_t n) {
  std::vector<double> v;
  for (int64_t i = 1; i <= n; ++i)
    v.push_back(static_cast<double>(i));
  return v;
}

TEST(AvgPool2d, OnnxPrecomputedPadsExamples) {
  for (DType t : kFloats) {
    Buf x = makeBuf(t, {1, 1, 5, 5}, iota(25));
    Buf out(t, {1, 1, 5, 5});
    // ONNX averagepool_2d_precomputed_pads_count_include_pad.
    ASSERT_TRUE(poolCall("avg_pool2d", &x, &out, {5, 5}, {1, 1}, {2, 2, 2, 2},
                         false, true)
                    .run()
                    .isOk());
    expectNear(out, {2.52,  3.6,  4.8,  4.08, 3.24, 4.56, 6.4,  8.4, 7.04,
                     5.52,  7.2,  10.0, 13.0, 10.8, 8.4,  6.96, 9.6, 12.4,
                     10.24, 7.92, 6.12, 8.4,  10.8, 8.88, 6.84},
               1e-6, relTol(t), "count_include_pad");
    // ONNX averagepool_2d_precomputed_pads (pads not counted).
    ASSERT_TRUE(poolCall("avg_pool2d", &x, &out, {5, 5}, {1, 1}, {2, 2, 2, 2},
                         false, false)
                    .run()
                    .isOk());
    expectNear(out, {7,    7.5,  8,    8.5,  9,    9.5,  10,   10.5, 11,
                     11.5, 12,   12.5, 13,   13.5, 14,   14.5, 15,   15.5,
                     16,   16.5, 17,   17.5, 18,   18.5, 19},
               1e-6, relTol(t), "exclude pad");
  }
}

TEST(AvgPool2d, CeilModeEdges) {
  Buf x = makeBuf(DType::F32, {1, 1, 4, 4}, iota(16));
  Buf out(DType::F32, {1, 1, 2, 2});
  // ONNX averagepool_2d_ceil: the clipped last window averages 6 values.
  ASSERT_TRUE(
      poolCall("avg_pool2d", &x, &out, {3, 3}, {2, 2}, {0, 0, 0, 0}, true)
          .run()
          .isOk());
  EXPECT_EQ(out.values(), (std::vector<double>{6, 7.5, 12, 13.5}));
  // count_include_pad without pads: the part past the end is not counted.
  ASSERT_TRUE(
      poolCall("avg_pool2d", &x, &out, {3, 3}, {2, 2}, {0, 0, 0, 0}, true, true)
          .run()
          .isOk());
  EXPECT_EQ(out.values(), (std::vector<double>{6, 7.5, 12, 13.5}));
  // With pads 1: windows start at -1, 1, 3; the last one covers row 3, the
  // bottom pad row and one row past it, so its divisor is 2 x 2 = 4.
  Buf out3(DType::F32, {1, 1, 3, 3});
  ASSERT_TRUE(poolCall("avg_pool2d", &x, &out3, {3, 3}, {2, 2}, {1, 1, 1, 1},
                       true, true)
                  .run()
                  .isOk());
  std::vector<double> got = out3.values();
  EXPECT_NEAR(got[0], 14.0 / 9, 1e-6);
  EXPECT_NEAR(got[2], 12.0 / 6, 1e-6); // rows -1..1 (3), cols 3..4 (2)
  EXPECT_NEAR(got[4], 99.0 / 9, 1e-6);
  EXPECT_NEAR(got[8], 16.0 / 4, 1e-6);
  // Without count_include_pad the last window averages the single 16.
  ASSERT_TRUE(poolCall("avg_pool2d", &x, &out3, {3, 3}, {2, 2}, {1, 1, 1, 1},
                       true, false)
                  .run()
                  .isOk());
  EXPECT_EQ(out3.get(8), 16.0);
  EXPECT_NEAR(out3.get(0), 14.0 / 4, 1e-6);
  // Ceil mode drops a window that would start in the end padding: input 4,
  // kernel 2, stride 2, end pad 1 -> ceil((5 - 2) / 2) + 1 = 3, but the
  // third window would start at 4 (in the padding), so 2.
  Buf o3(DType::F32, {1, 1, 3, 3});
  expectError(
      poolCall("avg_pool2d", &x, &o3, {2, 2}, {2, 2}, {0, 0, 1, 1}, true)
          .check(),
      "the op computes [1, 1, 2, 2]");
  ASSERT_TRUE(
      poolCall("avg_pool2d", &x, &out, {2, 2}, {2, 2}, {0, 0, 1, 1}, true, true)
          .run()
          .isOk());
  EXPECT_EQ(out.values(), (std::vector<double>{3.5, 5.5, 11.5, 13.5}));
}

// Naive pooling reference: enumerates the window on the padded grid.
std::vector<double> refPool(const Buf &x, bool isMax, int64_t kh, int64_t kw,
                            int64_t sh, int64_t sw, std::vector<int64_t> pads,
                            int64_t dh, int64_t dw, int64_t oh, int64_t ow,
                            bool includePad) {
  int64_t n = x.shape[0] * x.shape[1], h = x.shape[2], w = x.shape[3];
  std::vector<double> out;
  for (int64_t p = 0; p < n; ++p)
    for (int64_t y = 0; y < oh; ++y)
      for (int64_t xx = 0; xx < ow; ++xx) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0;
        int64_t cnt = 0, cntPad = 0;
        bool nan = false;
        for (int64_t i = 0; i < kh; ++i)
          for (int64_t j = 0; j < kw; ++j) {
            int64_t iy = y * sh - pads[0] + i * dh,
                    ix = xx * sw - pads[1] + j * dw;
            if (iy < h + pads[2] && ix < w + pads[3])
              ++cntPad;
            if (iy < 0 || iy >= h || ix < 0 || ix >= w)
              continue;
            double v = x.get((p * h + iy) * w + ix);
            nan |= std::isnan(v);
            best = std::max(best, v);
            sum += v;
            ++cnt;
          }
        out.push_back(isMax ? (nan ? NAN : best)
                            : sum / (includePad ? cntPad : cnt));
      }
  return out;
}

TEST(MaxPool2d, OnnxExamples) {
  for (DType t : kFloats) {
    Buf x = makeBuf(t, {1, 1, 5, 5}, iota(25));
    Buf out(t, {1, 1, 5, 5});
    // maxpool_2d_pads
    ASSERT_TRUE(
        poolCall("max_pool2d", &x, &out, {5, 5}, {1, 1}, {2, 2, 2, 2}, false)
            .run()
            .isOk());
    EXPECT_EQ(
        out.values(),
        (std::vector<double>{13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25,
                             25, 25, 23, 24, 25, 25, 25, 23, 24, 25, 25, 25}));
    Buf x4 = makeBuf(t, {1, 1, 4, 4}, iota(16));
    Buf o2(t, {1, 1, 2, 2});
    // maxpool_2d_ceil
    ASSERT_TRUE(
        poolCall("max_pool2d", &x4, &o2, {3, 3}, {2, 2}, {0, 0, 0, 0}, true)
            .run()
            .isOk());
    EXPECT_EQ(o2.values(), (std::vector<double>{11, 12, 15, 16}));
    // maxpool_2d_dilations
    ASSERT_TRUE(poolCall("max_pool2d", &x4, &o2, {2, 2}, {1, 1}, {0, 0, 0, 0},
                         false, false, {2, 2})
                    .run()
                    .isOk());
    EXPECT_EQ(o2.values(), (std::vector<double>{11, 12, 15, 16}));
  }
}

TEST(MaxPool2d, PaddingNeverWinsAndNaNPropagates) {
  Buf x = makeBuf(DType::F32, {1, 1, 2, 2}, {-4, -3, -2, NAN});
  Buf out(DType::F32, {1, 1, 2, 2});
  ASSERT_TRUE(
      poolCall("max_pool2d", &x, &out, {2, 2}, {1, 1}, {1, 1, 0, 0}, false)
          .run()
          .isOk());
  std::vector<double> v = out.values();
  EXPECT_EQ(v[0], -4); // only x[0,0] is inside, the zeros of padding lose
  EXPECT_EQ(v[1], -3);
  EXPECT_EQ(v[2], -2);
  EXPECT_TRUE(std::isnan(v[3]));
  // NaN first in the window still wins.
  Buf y = makeBuf(DType::F16, {1, 1, 1, 3}, {NAN, 5, 1});
  Buf o(DType::F16, {1, 1, 1, 1});
  ASSERT_TRUE(
      poolCall("max_pool2d", &y, &o, {1, 3}, {1, 1}, {0, 0, 0, 0}, false)
          .run()
          .isOk());
  EXPECT_TRUE(std::isnan(o.get(0)));
}

class PoolTest : public ::testing::TestWithParam<DType> {};

TEST_P(PoolTest, RandomAgainstNaive) {
  DType t = GetParam();
  struct PC {
    int64_t h, w, kh, kw, sh, sw;
    std::vector<int64_t> pads;
    int64_t dh, dw;
    bool ceil;
  };
  std::vector<PC> cases = {
      {7, 8, 3, 2, 2, 3, {1, 0, 2, 1}, 1, 1, false},
      {7, 8, 3, 2, 2, 3, {1, 0, 2, 1}, 1, 1, true},
      {9, 6, 3, 3, 2, 2, {1, 1, 1, 1}, 2, 1, true},
      {5, 5, 2, 2, 2, 2, {0, 0, 0, 0}, 1, 1, true},
      {6, 6, 3, 3, 3, 3, {2, 2, 2, 2}, 1, 1, true},
  };
  uint32_t seed = 40;
  for (const PC &pc : cases)
    for (bool isMax : {true, false})
      for (bool includePad : {false, true}) {
        if (isMax && includePad)
          continue;
        int64_t dh = isMax ? pc.dh : 1, dw = isMax ? pc.dw : 1;
        auto outDim = [&](int64_t in, int64_t k, int64_t s, int64_t pb,
                          int64_t pe, int64_t d) {
          int64_t rem = in + pb + pe - (d * (k - 1) + 1);
          int64_t o = (pc.ceil ? (rem + s - 1) / s : rem / s) + 1;
          if (pc.ceil && (o - 1) * s >= in + pb)
            --o;
          return o;
        };
        int64_t oh = outDim(pc.h, pc.kh, pc.sh, pc.pads[0], pc.pads[2], dh);
        int64_t ow = outDim(pc.w, pc.kw, pc.sw, pc.pads[1], pc.pads[3], dw);
        Buf x = randomBuf(t, {2, 3, pc.h, pc.w}, seed++);
        Buf out(t, {2, 3, oh, ow});
        Call c = poolCall(isMax ? "max_pool2d" : "avg_pool2d", &x, &out,
                          {pc.kh, pc.kw}, {pc.sh, pc.sw}, pc.pads, pc.ceil,
                          includePad, {dh, dw});
        ASSERT_TRUE(c.run(&testPool()).isOk()) << c.run().message();
        expectNear(out,
                   refPool(x, isMax, pc.kh, pc.kw, pc.sh, pc.sw, pc.pads, dh,
                           dw, oh, ow, includePad),
                   1e-6, relTol(t),
                   std::string(isMax ? "max" : "avg") + " case " +
                       std::to_string(seed));
      }
}

INSTANTIATE_TEST_SUITE_P(Floats, PoolTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(Pool2d, CheckErrors) {
  Buf x(DType::F32, {1, 1, 5, 5}), out(DType::F32, {1, 1, 3, 3}),
      x3(DType::F32, {1, 5, 5}), xi(DType::I32, {1, 1, 5, 5});
  expectError(
      poolCall("max_pool2d", &x, &out, {3, 3}, {1, 1}, {3, 0, 0, 0}, false)
          .check(),
      "must be smaller than the kernel");
  expectError(poolCall("avg_pool2d", &x, &out, {3}, {1, 1}, {0, 0, 0, 0}, false)
                  .check(),
              "attribute 'kernel_shape' must be 2 sizes >= 1");
  expectError(
      poolCall("avg_pool2d", &x, &out, {3, 0}, {1, 1}, {0, 0, 0, 0}, false)
          .check(),
      "attribute 'kernel_shape' must be 2 sizes >= 1");
  expectError(
      poolCall("max_pool2d", &x, &out, {3, 3}, {0, 1}, {0, 0, 0, 0}, false)
          .check(),
      "attribute 'strides' must be >= 1");
  expectError(
      poolCall("max_pool2d", &x, &out, {3, 3}, {1, 1}, {0, -1, 0, 0}, false)
          .check(),
      "attribute 'pads' must be >= 0");
  expectError(poolCall("max_pool2d", &x, &out, {3, 3}, {1, 1}, {0, 0, 0, 0},
                       false, false, {0, 1})
                  .check(),
              "attribute 'dilations' must be >= 1");
  expectError(poolCall("max_pool2d", &x, &out, {3, 3}, {1, 1}, {0, 0, 0, 0},
                       false, false, {3, 3})
                  .check(),
              "kernel extent 7 is larger than the padded input 5");
  expectError(
      poolCall("max_pool2d", &x, &out, {2, 2}, {1, 1}, {0, 0, 0, 0}, false)
          .check(),
      "output has shape [1, 1, 3, 3] but the op computes [1, 1, 4, 4]");
  expectError(
      poolCall("max_pool2d", &x3, &out, {3, 3}, {1, 1}, {0, 0, 0, 0}, false)
          .check(),
      "input must be 4-D NCHW");
  expectError(
      poolCall("avg_pool2d", &xi, &out, {3, 3}, {1, 1}, {0, 0, 0, 0}, false)
          .check(),
      "input must be f32, f16, bf16 or f64");
  Call noDil{"max_pool2d", {}, {&x}, {&out}};
  noDil.attrs.setInts("kernel_shape", {3, 3});
  noDil.attrs.setInts("strides", {1, 1});
  noDil.attrs.setInts("pads", {0, 0, 0, 0});
  expectError(noDil.check(), "attribute 'dilations' is missing");
  noDil.attrs.setInts("dilations", {1, 1});
  expectError(noDil.check(), "attribute 'ceil_mode' is missing");
  noDil.attrs.setInt("ceil_mode", 0);
  EXPECT_TRUE(noDil.check().isOk());
  noDil.attrs.setInt("ceil_mode", 3);
  expectError(noDil.check(), "attribute 'ceil_mode' must be 0 or 1");
}

TEST(GlobalAvgPool, MeansOverSpatialDims) {
  for (DType t : kFloats)
    for (Shape s : {Shape{2, 3, 5}, Shape{2, 3, 4, 5}, Shape{1, 2, 3, 2, 2}}) {
      Buf x = randomBuf(t, s, 9);
      Shape os = s;
      std::fill(os.begin() + 2, os.end(), 1);
      Buf out(t, os);
      ASSERT_TRUE(
          (Call{"global_avg_pool", {}, {&x}, {&out}}.run(&testPool()).isOk()));
      int64_t planes = s[0] * s[1], size = x.size() / planes;
      std::vector<double> ref;
      for (int64_t p = 0; p < planes; ++p) {
        double sum = 0;
        for (int64_t i = 0; i < size; ++i)
          sum += x.get(p * size + i);
        ref.push_back(sum / size);
      }
      expectNear(out, ref, 1e-6, relTol(t), "global_avg_pool " + str(s));
    }
  Buf x2(DType::F32, {2, 3}), o2(DType::F32, {2, 3});
  expectError(Call{"global_avg_pool", {}, {&x2}, {&o2}}.check(), "rank >= 3");
  Buf x4(DType::F32, {2, 3, 4, 4}), o4(DType::F32, {2, 3, 4, 1});
  expectError(Call{"global_avg_pool", {}, {&x4}, {&o4}}.check(),
              "output has shape [2, 3, 4, 1] but the op computes [2, 3, 1, 1]");
}

} // namespace
