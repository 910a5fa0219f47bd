//===- GemmEpilogueTest.cpp - the CPU gemm's epilogues --------------------===//
//
// Each epilogue of runtime/GemmEpilogue.h against the unfused kernels it
// replaces (gemm, then relu / relu_grad / gelu / gelu_grad / reduce_sum),
// run on the same inputs: bit for bit where the rounding points are the
// same (relu, drelu and the bias gradient in every dtype; everything in
// f32 and f64), and against a host f64 reference of the activation applied
// to the unrounded product where the fused kernel rounds once instead of
// twice (gelu, gelu_aux and dgelu in f16 and bf16). Then every check()
// error.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

bool exactDType(DType t) { return t == DType::F32 || t == DType::F64; }

// Where the unfused gemm's output is rounded before the activation reads
// it, the fused result can differ by that rounding; else bit for bit.
void expectMatchesUnfused(const Buf &fused, const Buf &unfused,
                          const std::vector<double> &ref, bool sameRounding,
                          const std::string &what) {
  if (sameRounding) {
    EXPECT_TRUE(sameBits(fused, unfused)) << what;
    return;
  }
  expectNear(fused, ref, relTol(fused.dtype), 2 * relTol(fused.dtype), what);
}

// gemm(a, b[, c]) with the gemm attributes of `attrs`, unfused.
Buf plainGemm(Buf &a, Buf *b, Buf *c, const Attrs &attrs, Shape out) {
  Buf d(a.dtype, std::move(out));
  Call g{"gemm", gemmAttrs(), {&a, b, c}, {&d}};
  for (const auto &[k, v] : attrs.all())
    if (k == "alpha" || k == "beta")
      g.attrs.setFloat(k, v.f);
    else if (k == "trans_a" || k == "trans_b")
      g.attrs.setInt(k, v.i);
  EXPECT_TRUE(g.run().isOk()) << g.run().message();
  return d;
}

double geluRef(double x, bool tanhForm) {
  if (tanhForm)
    return 0.5 * x *
           (1 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  return 0.5 * x * (1 + std::erf(x * 0.7071067811865476));
}

double geluGradRef(double x, bool tanhForm) {
  if (tanhForm) {
    const double c = 0.7978845608028654, a = 0.044715;
    double t = std::tanh(c * (x + a * x * x * x));
    return 0.5 * (1 + t) + 0.5 * x * (1 - t * t) * c * (1 + 3 * a * x * x);
  }
  return 0.5 * (1 + std::erf(x * 0.7071067811865476)) +
         x * std::exp(-0.5 * x * x) * 0.3989422804014327;
}

class GemmEpilogueTest : public ::testing::TestWithParam<DType> {};

TEST_P(GemmEpilogueTest, ForwardActivationsWithAndWithoutBias) {
  DType t = GetParam();
  // Over 16384 elements: several chunks of the store pass.
  const int64_t m = 301, k = 19, n = 129;
  uint32_t seed = 10;
  for (const char *act : {"relu", "gelu"})
    for (const char *approx : {"none", "tanh"})
      for (bool bias : {false, true})
        for (bool tb : {false, true}) {
          if (std::string(act) == "relu" && std::string(approx) == "tanh")
            continue;
          std::string what = std::string(act) + " approximate=" + approx +
                             " bias=" + std::to_string(bias) +
                             " trans_b=" + std::to_string(tb);
          Buf a = randomBuf(t, {m, k}, seed++, -2, 2);
          Buf b = randomBuf(t, tb ? Shape{n, k} : Shape{k, n}, seed++);
          Buf c = randomBuf(t, {n}, seed++);
          Attrs attrs = gemmAttrs(0.75, 1, false, tb);
          if (std::string(act) == "gelu")
            attrs.setString("approximate", approx);
          Buf g = plainGemm(a, &b, bias ? &c : nullptr, attrs, {m, n});
          Buf unfused(t, {m, n});
          Call post{act, attrs, {&g}, {&unfused}};
          ASSERT_TRUE(post.run().isOk()) << post.run().message();

          Buf fused(t, {m, n});
          Call f{"gemm", attrs, {&a, &b, bias ? &c : nullptr}, {&fused}};
          f.attrs.setString("epilogue", act);
          ASSERT_TRUE(f.run(&testPool()).isOk()) << f.run().message();
          std::vector<double> ref =
              refGemm(a, b, bias ? &c : nullptr, 0.75, 1.0, false, tb);
          for (double &v : ref)
            v = std::string(act) == "relu"
                    ? std::max(v, 0.0)
                    : geluRef(v, std::string(approx) == "tanh");
          // relu commutes with rounding: bit for bit in every dtype.
          bool same = exactDType(t) || std::string(act) == "relu";
          expectMatchesUnfused(fused, unfused, ref, same, what);

          if (std::string(act) != "gelu")
            continue;
          // gelu_aux: the same result, and the pre-activation exactly as
          // the unfused gemm stores it.
          Buf y(t, {m, n}), z(t, {m, n});
          Call fa{"gemm", attrs, {&a, &b, bias ? &c : nullptr}, {&y, &z}};
          fa.attrs.setString("epilogue", "gelu_aux");
          ASSERT_TRUE(fa.run(&testPool()).isOk()) << fa.run().message();
          EXPECT_TRUE(sameBits(y, fused)) << what << " gelu_aux result";
          EXPECT_TRUE(sameBits(z, g)) << what << " gelu_aux pre-activation";
        }
}

TEST_P(GemmEpilogueTest, ActivationGradientsOnTheDxGemm) {
  DType t = GetParam();
  const int64_t m = 29, k = 13, n = 41;
  uint32_t seed = 200;
  for (const char *epi : {"drelu", "dgelu"})
    for (const char *approx : {"none", "tanh"}) {
      bool relu = std::string(epi) == "drelu";
      if (relu && std::string(approx) == "tanh")
        continue;
      std::string what = std::string(epi) + " approximate=" + approx;
      Buf dy = randomBuf(t, {m, k}, seed++), w = randomBuf(t, {k, n}, seed++);
      // drelu reads relu's output: zeros where the unit was off.
      Buf x = randomBuf(t, {m, n}, seed++, relu ? -1 : -3, 3);
      if (relu)
        for (int64_t i = 0; i < x.size(); ++i)
          x.set(i, std::max(x.get(i), 0.0));
      Attrs attrs = gemmAttrs(1, 0);
      if (!relu)
        attrs.setString("approximate", approx);
      Buf g = plainGemm(dy, &w, nullptr, attrs, {m, n});
      Buf unfused(t, {m, n});
      Call post{relu ? "relu_grad" : "gelu_grad", attrs, {&g, &x}, {&unfused}};
      ASSERT_TRUE(post.run().isOk()) << post.run().message();

      Buf fused(t, {m, n});
      Call f{"gemm", attrs, {&dy, &w, nullptr, &x}, {&fused}};
      f.attrs.setString("epilogue", epi);
      ASSERT_TRUE(f.run(&testPool()).isOk()) << f.run().message();
      std::vector<double> ref =
          refGemm(dy, w, nullptr, 1.0, 1.0, false, false);
      for (int64_t i = 0; i < x.size(); ++i)
        ref[i] = relu ? (x.get(i) > 0 ? ref[i] : 0.0)
                      : ref[i] * geluGradRef(x.get(i),
                                             std::string(approx) == "tanh");
      expectMatchesUnfused(fused, unfused, ref, exactDType(t) || relu, what);
    }
}

TEST_P(GemmEpilogueTest, BiasGradientOnTheDwGemm) {
  DType t = GetParam();
  // dW = dY^T X, db = the column sums of dY: bit for bit the unfused gemm
  // and reduce_sum over axis 0 (same values, summed in the same order).
  // Over 2048 columns: several column tasks.
  const int64_t batch = 53, out = 2100, in = 11;
  for (bool keepdims : {true, false}) {
    Buf dy = randomBuf(t, {batch, out}, 7 + keepdims),
        x = randomBuf(t, {batch, in}, 9);
    Attrs attrs = gemmAttrs(1, 0, true);
    Buf dw = plainGemm(dy, &x, nullptr, attrs, {out, in});
    Shape dbShape = keepdims ? Shape{1, out} : Shape{out};
    Buf db(t, dbShape);
    Call r{"reduce_sum", reduceAttrs(), {&dy}, {&db}};
    r.attrs.setInts("axes", {0});
    r.attrs.setInt("keepdims", keepdims);
    ASSERT_TRUE(r.run().isOk()) << r.run().message();

    Buf fdw(t, {out, in}), fdb(t, dbShape);
    Call f{"gemm", attrs, {&dy, &x, nullptr}, {&fdw, &fdb}};
    f.attrs.setString("epilogue", "bgrad");
    ASSERT_TRUE(f.run(&testPool()).isOk()) << f.run().message();
    EXPECT_TRUE(sameBits(fdw, dw));
    EXPECT_TRUE(sameBits(fdb, db));
    // And the sums themselves, against f64.
    std::vector<double> ref(out, 0.0);
    for (int64_t i = 0; i < batch; ++i)
      for (int64_t j = 0; j < out; ++j)
        ref[j] += dy.get(i * out + j);
    expectNear(fdb, ref, relTol(t) * 4, relTol(t));
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, GemmEpilogueTest, ::testing::ValuesIn(kFloats),
                         dtypeName);

TEST(GemmEpilogue, NonFiniteValuesFollowTheUnfusedKernels) {
  // relu keeps NaN and zeroes -inf; drelu passes an inf gradient where the
  // unit is on and selects 0 (not 0 * inf) where it is off.
  const double inf = std::numeric_limits<double>::infinity();
  Buf a = makeBuf(DType::F16, {1, 2}, {1, 1});
  Buf b = makeBuf(DType::F16, {2, 4}, {NAN, -inf, inf, 40000, 0, 0, 0, 40000});
  Buf y(DType::F16, {1, 4});
  Call f{"gemm", gemmAttrs(), {&a, &b, nullptr}, {&y}};
  f.attrs.setString("epilogue", "relu");
  ASSERT_TRUE(f.run().isOk()) << f.run().message();
  EXPECT_TRUE(std::isnan(y.get(0)));
  EXPECT_EQ(y.get(1), 0.0);
  EXPECT_EQ(y.get(2), inf);
  EXPECT_EQ(y.get(3), inf); // 80000 overflows f16 when stored
  Buf on = makeBuf(DType::F16, {1, 4}, {0, 0, 1, 0}), dx(DType::F16, {1, 4});
  Call d{"gemm", gemmAttrs(), {&a, &b, nullptr, &on}, {&dx}};
  d.attrs.setString("epilogue", "drelu");
  ASSERT_TRUE(d.run().isOk()) << d.run().message();
  EXPECT_EQ(dx.get(0), 0.0);
  EXPECT_EQ(dx.get(1), 0.0);
  EXPECT_EQ(dx.get(2), inf);
  EXPECT_EQ(dx.get(3), 0.0);
}

TEST(GemmEpilogue, CheckErrors) {
  Buf a(DType::F16, {3, 4}), b(DType::F16, {4, 2}), out(DType::F16, {3, 2});
  Buf c(DType::F16, {2}), x(DType::F16, {3, 2}), xBad(DType::F16, {2, 3});
  Buf x32(DType::F32, {3, 2}), aux(DType::F16, {3, 2});
  Buf ai(DType::I64, {3, 4}), bi(DType::I64, {4, 2}), oi(DType::I64, {3, 2});
  auto call = [](const char *epi, std::vector<Buf *> ins,
                 std::vector<Buf *> outs) {
    Call k{"gemm", gemmAttrs(), std::move(ins), std::move(outs)};
    k.attrs.setString("epilogue", epi);
    return k;
  };
  expectError(call("swish", {&a, &b, nullptr}, {&out}).check(),
              "attribute 'epilogue' is 'swish', which is none of relu, gelu, "
              "gelu_aux, drelu, dgelu, bgrad");
  Call notString{"gemm", gemmAttrs(), {&a, &b}, {&out}};
  notString.attrs.setInt("epilogue", 1);
  expectError(notString.check(), "attribute 'epilogue' must be a string");
  expectError(call("relu", {&ai, &bi, nullptr}, {&oi}).check(),
              "epilogue 'relu' needs float operands, got i64");
  expectError(call("drelu", {&a, &b, &c, &x}, {&out}).check(),
              "epilogue 'drelu' adds no c, but c is present");
  expectError(
      call("drelu", {&a, &b, nullptr}, {&out}).check(),
      "with epilogue 'drelu' expects 4 inputs (c absent or not), got 3");
  expectError(call("drelu", {&a, &b, nullptr, nullptr}, {&out}).check(),
              "input 3 (the forward value epilogue 'drelu' reads) is absent");
  expectError(call("drelu", {&a, &b, nullptr, &xBad}, {&out}).check(),
              "input 3 (the forward value epilogue 'drelu' reads) has shape "
              "[2, 3] but the gemm's output is [3, 2]");
  expectError(call("dgelu", {&a, &b, nullptr, &x32}, {&out}).check(),
              "has element type f32 but a has f16");
  expectError(call("gelu_aux", {&a, &b, &c}, {&out}).check(),
              "expects 2 outputs, got 1");
  expectError(call("gelu_aux", {&a, &b, &c}, {&out, &xBad}).check(),
              "output 1 (the pre-activation) has shape [2, 3]");
  Call badApprox = call("gelu", {&a, &b, &c}, {&out});
  badApprox.attrs.setString("approximate", "erf");
  expectError(badApprox.check(),
              "epilogue 'gelu': attribute 'approximate' must be \"none\" or "
              "\"tanh\", got \"erf\"");
  // The bias gradient is a sum over the contracted dim: trans_a only.
  Buf dy(DType::F16, {4, 3}), db(DType::F16, {1, 3}), dbBad(DType::F16, {3, 1});
  expectError(call("bgrad", {&a, &b, nullptr}, {&out, &db}).check(),
              "epilogue 'bgrad' sums a over axis 0, which is the contracted "
              "dim only with trans_a");
  Call bt = call("bgrad", {&dy, &b, nullptr}, {&out, &dbBad});
  bt.attrs.setInt("trans_a", 1);
  expectError(bt.check(), "output 1 (the column sums of a) has shape [3, 1] "
                          "but epilogue 'bgrad' computes [1, 3] (or [3])");
  Call ok = call("bgrad", {&dy, &b, nullptr}, {&out, &db});
  ok.attrs.setInt("trans_a", 1);
  EXPECT_TRUE(ok.check().isOk()) << ok.check().message();
}

} // namespace
