//===- OptimizerKernelsTest.cpp - parameter updates and lr schedules ------===//
//
// Each update against a double loop written from ONNX's reference pseudo
// code (onnx/backend/test/case/node/{momentum,adam,adagrad}.py) in every
// float dtype, and against PyTorch's optimizers over three steps where
// OptimizerOps.td says they coincide; outputs written over their inputs
// give the same bits as separate buffers; lr_schedule kinds; check() and
// run() errors; skip leaves every output as the state it replaces;
// loss_scale reads the gradient (f16/bf16 widened for an f32 parameter)
// times 1.0f / loss_scale, bit for bit the update of that f32 gradient.
//
//===----------------------------------------------------------------------===//
#include "NumericKernelTestUtil.h"

#include <optional>

using namespace ampc::rt;
using namespace ampc::rt::nktest;

namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

Buf lrBuf(double lr, DType t = DType::F32) { return makeBuf(t, {}, {lr}); }
Buf stepBuf(int64_t step) {
  return makeBuf(DType::I64, {}, {static_cast<double>(step)});
}

// Absolute floor for outputs that cancel to near zero: the f32 (or f64)
// rounding of the intermediate terms, whose magnitudes are about 1.
double absTol(DType t) { return t == DType::F64 ? 1e-13 : 1e-6; }

//===----------------------------------------------------------------------===//
// Double references from ONNX's pseudo code
//===----------------------------------------------------------------------===//

struct MomentumRef {
  double alpha, beta, nc;
  bool nesterov;
  // Element i: (param, velocity) in place.
  void apply(double lr, int64_t step, double &p, double g, double &v) const {
    double gr = nc * p + g;
    double b = step > 0 ? beta : 1;
    double vNew = alpha * v + b * gr;
    p = nesterov ? p - lr * (gr + alpha * vNew) : p - lr * vNew;
    v = vNew;
  }
};

struct AdamOnnxRef {
  double alpha, beta, eps, nc, ncPost;
  void apply(double lr, int64_t t, double &x, double g, double &v,
             double &h) const {
    double gr = nc * x + g;
    v = alpha * v + (1 - alpha) * gr;
    h = beta * h + (1 - beta) * gr * gr;
    double r =
        t > 0 ? lr * std::sqrt(1 - std::pow(beta, t)) / (1 - std::pow(alpha, t))
              : lr;
    x = (1 - ncPost) * (x - r * v / (std::sqrt(h) + eps));
  }
};

struct AdagradRef {
  double decay, eps, nc;
  void apply(double lr, int64_t t, double &x, double g, double &h) const {
    double r = lr / (1 + t * decay);
    double gr = nc * x + g;
    h += gr * gr;
    x -= r * gr / (std::sqrt(h) + eps);
  }
};

//===----------------------------------------------------------------------===//
// PyTorch's rules (torch/optim/{sgd,adam,adamw,adagrad}.py, 1.13), written
// independently of OptimizerOps.td's mapping so the tests check it.
//===----------------------------------------------------------------------===//

// torch.optim.SGD: d = g + wd * p; buf = d on the first step, else
// momentum * buf + (1 - dampening) * d; nesterov: d += momentum * buf,
// else d = buf; p -= lr * d.
struct TorchSgd {
  double lr, momentum, dampening, wd;
  bool nesterov;
  std::optional<std::vector<double>> buf;
  void step(std::vector<double> &p, const std::vector<double> &g) {
    std::vector<double> d(p.size());
    for (size_t i = 0; i < p.size(); ++i)
      d[i] = g[i] + wd * p[i];
    if (!buf) {
      buf = d;
    } else {
      for (size_t i = 0; i < p.size(); ++i)
        (*buf)[i] = momentum * (*buf)[i] + (1 - dampening) * d[i];
    }
    for (size_t i = 0; i < p.size(); ++i) {
      double upd = nesterov ? d[i] + momentum * (*buf)[i] : (*buf)[i];
      p[i] -= lr * upd;
    }
  }
};

// torch.optim.Adam (L2: g += wd * p) or AdamW (p *= 1 - lr * wd first),
// amsgrad off: t += 1; m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
// p -= lr / (1 - b1^t) * m / (sqrt(v) / sqrt(1 - b2^t) + eps).
struct TorchAdam {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<double> m, v;
  int t = 0;
  void step(std::vector<double> &p, const std::vector<double> &g) {
    m.resize(p.size());
    v.resize(p.size());
    ++t;
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i];
      if (decoupled)
        p[i] *= 1 - lr * wd;
      else
        gi += wd * p[i];
      m[i] = b1 * m[i] + (1 - b1) * gi;
      v[i] = b2 * v[i] + (1 - b2) * gi * gi;
      double denom = std::sqrt(v[i]) / std::sqrt(1 - std::pow(b2, t)) + eps;
      p[i] -= lr / (1 - std::pow(b1, t)) * m[i] / denom;
    }
  }
};

// torch.optim.Adagrad (initial accumulator 0): t += 1; g += wd * p;
// clr = lr / (1 + (t - 1) * lr_decay); s += g^2; p -= clr * g / (sqrt(s)
// + eps).
struct TorchAdagrad {
  double lr, lrDecay, wd, eps;
  std::vector<double> s;
  int t = 0;
  void step(std::vector<double> &p, const std::vector<double> &g) {
    s.resize(p.size());
    ++t;
    double clr = lr / (1 + (t - 1) * lrDecay);
    for (size_t i = 0; i < p.size(); ++i) {
      double gi = g[i] + wd * p[i];
      s[i] += gi * gi;
      p[i] -= clr * gi / (std::sqrt(s[i]) + eps);
    }
  }
};

// Three steps of every torch case start from the same parameter and see
// the same gradients.
const std::vector<double> kP0 = {0.5, -1.25, 2.0};
const std::vector<std::vector<double>> kGrads = {
    {0.1, -0.3, 0.7}, {-0.2, 0.05, 0.4}, {0.3, 0.6, -0.9}};

// The parameter after each of the three steps as PyTorch 1.13 computes it
// in float64, printed with "%.17g" by:
//   torch.set_default_dtype(torch.float64)
//   p = torch.nn.Parameter(torch.tensor(kP0)); opt = <optimizer>([p])
//   for g in kGrads: p.grad = torch.tensor(g); opt.step(); print(p)
// They pin the C++ rules above to PyTorch itself.
using Steps = std::vector<std::vector<double>>;
// SGD(lr=0.1, momentum=0.9, dampening=0.25, weight_decay=0.01)
const Steps kTorchSgdMomentum = {
    {0.48949999999999999, -1.21875, 1.9279999999999999},
    {0.49468287499999997, -1.1934609375, 1.8317539999999999},
    {0.47647645034374997, -1.214805685546875, 1.8112587844999999}};
// SGD(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)
const Steps kTorchSgdNesterov = {
    {0.48004999999999998, -1.190625, 1.8632},
    {0.50863290500000002, -1.1725503125000001, 1.7253399199999999},
    {0.45882316198050005, -1.2646268106562502, 1.806664582152}};
// Adam(lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
const Steps kTorchAdamL2 = {
    {0.4900000006666666, -1.2400000002352942, 1.9900000001111111},
    {0.49055952657924279, -1.2321049077278134, 1.9802898991533768},
    {0.48534334231384657, -1.232759975968273, 1.9774801734074465}};
// AdamW(lr=0.01, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)
const Steps kTorchAdamW = {
    {0.48950000099999991, -1.2387500003333334, 1.988000000142857},
    {0.4926665779014659, -1.2321143069636149, 1.9764906917212406},
    {0.48875034033271242, -1.2346902740017458, 1.9743715422784889}};
// Adagrad(lr=0.1, lr_decay=0.1, weight_decay=0.01, eps=1e-10)
const Steps kTorchAdagrad = {
    {0.40000000009523806, -1.1500000000320001, 1.9000000000138888},
    {0.48013454278900125, -1.1611159573977856, 1.854274990377941},
    {0.41281134467674502, -1.2345905799942856, 1.9148403524369049}};

template <typename Opt> Steps runTorchRule(Opt opt) {
  std::vector<double> p = kP0;
  Steps out;
  for (const auto &g : kGrads) {
    opt.step(p, g);
    out.push_back(p);
  }
  return out;
}

TEST(TorchRules, MatchPyTorch) {
  auto expectSteps = [](const Steps &got, const Steps &want, const char *what) {
    for (size_t s = 0; s < want.size(); ++s)
      for (size_t i = 0; i < want[s].size(); ++i)
        EXPECT_NEAR(got[s][i], want[s][i], 1e-14)
            << what << " step " << s << " element " << i;
  };
  expectSteps(runTorchRule(TorchSgd{0.1, 0.9, 0.25, 0.01, false, {}}),
              kTorchSgdMomentum, "SGD momentum");
  expectSteps(runTorchRule(TorchSgd{0.1, 0.9, 0.0, 0.01, true, {}}),
              kTorchSgdNesterov, "SGD nesterov");
  expectSteps(runTorchRule(TorchAdam{0.01, 0.9, 0.99, 1e-8, 0.1, false}),
              kTorchAdamL2, "Adam");
  expectSteps(runTorchRule(TorchAdam{0.01, 0.9, 0.99, 1e-8, 0.1, true}),
              kTorchAdamW, "AdamW");
  expectSteps(runTorchRule(TorchAdagrad{0.1, 0.1, 0.01, 1e-10}), kTorchAdagrad,
              "Adagrad");
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

Call momentumCall(Buf &lr, Buf &step, Buf &p, Buf &g, Buf &v, Buf &pOut,
                  Buf &vOut, const MomentumRef &r) {
  Call c{"momentum_update", {}, {&lr, &step, &p, &g, &v}, {&pOut, &vOut}};
  c.attrs.setFloat("alpha", r.alpha);
  c.attrs.setFloat("beta", r.beta);
  c.attrs.setFloat("norm_coefficient", r.nc);
  c.attrs.setString("mode", r.nesterov ? "nesterov" : "standard");
  return c;
}

Call adamCall(Buf &lr, Buf &step, Buf &p, Buf &g, Buf &m, Buf &v, Buf &pOut,
              Buf &mOut, Buf &vOut, const std::string &mode, double alpha,
              double beta, double eps, double nc, double ncPost, double wd) {
  Call c{
      "adam_update", {}, {&lr, &step, &p, &g, &m, &v}, {&pOut, &mOut, &vOut}};
  c.attrs.setString("mode", mode);
  c.attrs.setFloat("alpha", alpha);
  c.attrs.setFloat("beta", beta);
  c.attrs.setFloat("epsilon", eps);
  c.attrs.setFloat("norm_coefficient", nc);
  c.attrs.setFloat("norm_coefficient_post", ncPost);
  c.attrs.setFloat("weight_decay", wd);
  return c;
}

Call adagradCall(Buf &lr, Buf &step, Buf &p, Buf &g, Buf &h, Buf &pOut,
                 Buf &hOut, const AdagradRef &r) {
  Call c{"adagrad_update", {}, {&lr, &step, &p, &g, &h}, {&pOut, &hOut}};
  c.attrs.setFloat("decay_factor", r.decay);
  c.attrs.setFloat("epsilon", r.eps);
  c.attrs.setFloat("norm_coefficient", r.nc);
  return c;
}

//===----------------------------------------------------------------------===//
// Against ONNX's pseudo code, every float dtype
//===----------------------------------------------------------------------===//

class OptimizerDTypeTest : public ::testing::TestWithParam<DType> {};

// Large enough for several chunks on several threads, odd so the last
// chunk is partial.
const Shape kShape = {3, 7001};

TEST_P(OptimizerDTypeTest, Sgd) {
  DType t = GetParam();
  Buf lr = lrBuf(0.05, DType::F64), p = randomBuf(t, kShape, 1),
      g = randomBuf(t, kShape, 2), out(t, kShape);
  Call c{"sgd_update", sgdAttrs(), {&lr, &p, &g}, {&out}};
  c.attrs.setFloat("weight_decay", 0.01);
  ASSERT_TRUE(c.run(&testPool()).isOk());
  std::vector<double> ref(p.size());
  for (int64_t i = 0; i < p.size(); ++i)
    ref[i] = p.get(i) - 0.05 * (g.get(i) + 0.01 * p.get(i));
  expectNear(out, ref, absTol(t), relTol(t), "new_param");
}

TEST_P(OptimizerDTypeTest, Momentum) {
  DType t = GetParam();
  for (bool nesterov : {false, true})
    for (int64_t s : {0, 4}) {
      SCOPED_TRACE(std::string(nesterov ? "nesterov" : "standard") + " step " +
                   std::to_string(s));
      MomentumRef r{0.95, 0.85, 0.001, nesterov};
      Buf lr = lrBuf(0.1), step = stepBuf(s), p = randomBuf(t, kShape, 3),
          g = randomBuf(t, kShape, 4), v = randomBuf(t, kShape, 5),
          pOut(t, kShape), vOut(t, kShape);
      ASSERT_TRUE(
          momentumCall(lr, step, p, g, v, pOut, vOut, r).run(&testPool()));
      std::vector<double> pr = p.values(), vr = v.values();
      for (int64_t i = 0; i < p.size(); ++i)
        r.apply(0.1f, s, pr[i], g.get(i), vr[i]);
      expectNear(pOut, pr, absTol(t), relTol(t), "new_param");
      expectNear(vOut, vr, absTol(t), relTol(t), "new_velocity");
    }
}

TEST_P(OptimizerDTypeTest, AdamOnnx) {
  DType t = GetParam();
  for (int64_t s : {0, 3}) {
    SCOPED_TRACE("step " + std::to_string(s));
    AdamOnnxRef r{0.95, 0.1, 1e-7, 0.001, 0.02};
    Buf lr = lrBuf(0.1, DType::F64), step = stepBuf(s),
        p = randomBuf(t, kShape, 6), g = randomBuf(t, kShape, 7),
        m = randomBuf(t, kShape, 8), v = randomBuf(t, kShape, 9, 0.01, 1),
        pOut(t, kShape), mOut(t, kShape), vOut(t, kShape);
    ASSERT_TRUE(adamCall(lr, step, p, g, m, v, pOut, mOut, vOut, "onnx",
                         r.alpha, r.beta, r.eps, r.nc, r.ncPost, 0)
                    .run(&testPool()));
    std::vector<double> pr = p.values(), mr = m.values(), vr = v.values();
    for (int64_t i = 0; i < p.size(); ++i)
      r.apply(0.1, s, pr[i], g.get(i), mr[i], vr[i]);
    expectNear(pOut, pr, absTol(t), relTol(t), "new_param");
    expectNear(mOut, mr, absTol(t), relTol(t), "new_m");
    expectNear(vOut, vr, absTol(t), relTol(t), "new_v");
  }
}

TEST_P(OptimizerDTypeTest, AdamPytorch) {
  DType t = GetParam();
  // One torch step from the state after `s` steps (t = s + 1), AdamW's
  // decoupled decay and Adam's L2 decay together as the op defines them.
  for (int64_t s : {0, 5}) {
    SCOPED_TRACE("step " + std::to_string(s));
    Buf lr = lrBuf(0.01), step = stepBuf(s), p = randomBuf(t, kShape, 10),
        g = randomBuf(t, kShape, 11), m = randomBuf(t, kShape, 12),
        v = randomBuf(t, kShape, 13, 0.01, 1), pOut(t, kShape), mOut(t, kShape),
        vOut(t, kShape);
    double b1 = 0.9, b2 = 0.99, eps = 1e-8, l2 = 0.03, wd = 0.1, lrv = 0.01f;
    ASSERT_TRUE(adamCall(lr, step, p, g, m, v, pOut, mOut, vOut, "pytorch", b1,
                         b2, eps, l2, 0, wd)
                    .run(&testPool()));
    std::vector<double> pr(p.size()), mr(p.size()), vr(p.size());
    double tt = s + 1;
    for (int64_t i = 0; i < p.size(); ++i) {
      double x = p.get(i), gi = g.get(i) + l2 * x;
      mr[i] = b1 * m.get(i) + (1 - b1) * gi;
      vr[i] = b2 * v.get(i) + (1 - b2) * gi * gi;
      double mHat = mr[i] / (1 - std::pow(b1, tt));
      double vHat = vr[i] / (1 - std::pow(b2, tt));
      pr[i] = x * (1 - lrv * wd) - lrv * mHat / (std::sqrt(vHat) + eps);
    }
    expectNear(pOut, pr, absTol(t), relTol(t), "new_param");
    expectNear(mOut, mr, absTol(t), relTol(t), "new_m");
    expectNear(vOut, vr, absTol(t), relTol(t), "new_v");
  }
}

TEST_P(OptimizerDTypeTest, Adagrad) {
  DType t = GetParam();
  for (int64_t s : {0, 7}) {
    SCOPED_TRACE("step " + std::to_string(s));
    AdagradRef r{0.1, 1e-5, 0.001};
    Buf lr = lrBuf(0.1, DType::F64), step = stepBuf(s),
        p = randomBuf(t, kShape, 14), g = randomBuf(t, kShape, 15),
        h = randomBuf(t, kShape, 16, 0, 2), pOut(t, kShape), hOut(t, kShape);
    ASSERT_TRUE(adagradCall(lr, step, p, g, h, pOut, hOut, r).run(&testPool()));
    std::vector<double> pr = p.values(), hr = h.values();
    for (int64_t i = 0; i < p.size(); ++i)
      r.apply(0.1, s, pr[i], g.get(i), hr[i]);
    expectNear(pOut, pr, absTol(t), relTol(t), "new_param");
    expectNear(hOut, hr, absTol(t), relTol(t), "new_accumulator");
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, OptimizerDTypeTest,
                         ::testing::ValuesIn(kFloats), dtypeName);

// ONNX's own node test (node/test_adam, data set 0): element 0 of its
// inputs and of output_0.pb .. output_2.pb, so the reference above is
// pinned to ONNX's data too.
TEST(OptimizerOnnx, AdamNodeTestValues) {
  AdamOnnxRef r{0.95f, 0.1f, 1e-7f, 0.001f, 0};
  double x = 1.2f, v = 1.7f, h = 0.1f;
  r.apply(0.1f, 0, x, -0.94f, v, h);
  EXPECT_NEAR(x, 1.0250363, 2e-6);
  EXPECT_NEAR(v, 1.56806, 2e-6);
  EXPECT_NEAR(h, 0.8032108, 2e-6);
}

//===----------------------------------------------------------------------===//
// PyTorch equivalences over three steps (f64 kernels, the kernel's state
// carried from step to step)
//===----------------------------------------------------------------------===//

Buf vecBuf(const std::vector<double> &v) {
  return makeBuf(DType::F64, {static_cast<int64_t>(v.size())}, v);
}

void expectVec(const Buf &got, const std::vector<double> &want,
               const std::string &what) {
  expectNear(got, want, 1e-14, 1e-12, what);
}

// momentum_update with alpha = momentum, beta = 1 - dampening,
// norm_coefficient = weight_decay and v starting at 0 is torch's SGD.
void checkMomentumAsTorch(bool nesterov, double dampening, const Steps &want) {
  MomentumRef r{0.9, 1 - dampening, 0.01, nesterov};
  Buf lr = lrBuf(0.1, DType::F64), p = vecBuf(kP0),
      v = vecBuf(std::vector<double>(3, 0.0));
  for (int s = 0; s < 3; ++s) {
    Buf step = stepBuf(s), g = vecBuf(kGrads[s]);
    ASSERT_TRUE(momentumCall(lr, step, p, g, v, p, v, r).run());
    expectVec(p, want[s], "param after step " + std::to_string(s + 1));
  }
}

TEST(OptimizerTorch, MomentumIsSgdWithDampening) {
  checkMomentumAsTorch(false, 0.25, kTorchSgdMomentum);
  checkMomentumAsTorch(false, 0.25,
                       runTorchRule(TorchSgd{0.1, 0.9, 0.25, 0.01, false, {}}));
}

TEST(OptimizerTorch, NesterovIsSgdNesterov) {
  checkMomentumAsTorch(true, 0.0, kTorchSgdNesterov);
}

void checkAdamAsTorch(double l2, double wd, const Steps &want) {
  Buf lr = lrBuf(0.01, DType::F64), p = vecBuf(kP0),
      m = vecBuf(std::vector<double>(3, 0.0)),
      v = vecBuf(std::vector<double>(3, 0.0));
  for (int s = 0; s < 3; ++s) {
    Buf step = stepBuf(s), g = vecBuf(kGrads[s]);
    ASSERT_TRUE(adamCall(lr, step, p, g, m, v, p, m, v, "pytorch", 0.9, 0.99,
                         1e-8, l2, 0, wd)
                    .run());
    expectVec(p, want[s], "param after step " + std::to_string(s + 1));
  }
}

TEST(OptimizerTorch, AdamL2IsTorchAdam) {
  checkAdamAsTorch(0.1, 0, kTorchAdamL2);
}

TEST(OptimizerTorch, AdamWeightDecayIsTorchAdamW) {
  checkAdamAsTorch(0, 0.1, kTorchAdamW);
}

TEST(OptimizerTorch, AdagradIsTorchAdagrad) {
  AdagradRef r{0.1, 1e-10, 0.01};
  Buf lr = lrBuf(0.1, DType::F64), p = vecBuf(kP0),
      h = vecBuf(std::vector<double>(3, 0.0));
  for (int s = 0; s < 3; ++s) {
    Buf step = stepBuf(s), g = vecBuf(kGrads[s]);
    ASSERT_TRUE(adagradCall(lr, step, p, g, h, p, h, r).run());
    expectVec(p, kTorchAdagrad[s], "param after step " + std::to_string(s + 1));
  }
}

//===----------------------------------------------------------------------===//
// Outputs over their inputs
//===----------------------------------------------------------------------===//

class OptimizerInPlaceTest : public ::testing::TestWithParam<DType> {};

// Runs `make` once with fresh outputs and once with every output being the
// input it replaces; both must give the same bits.
TEST_P(OptimizerInPlaceTest, SameBitsAsSeparateBuffers) {
  DType t = GetParam();
  Shape s = {40001};
  Buf lr = lrBuf(0.1), step = stepBuf(2);
  auto fresh = [&](uint32_t seed, double lo = -1) {
    return randomBuf(t, s, seed, lo, 1);
  };
  {
    SCOPED_TRACE("sgd_update");
    Buf p = fresh(1), g = fresh(2), out(t, s);
    Call sep{"sgd_update", sgdAttrs(), {&lr, &p, &g}, {&out}};
    sep.attrs.setFloat("weight_decay", 0.01);
    ASSERT_TRUE(sep.run(&testPool()));
    Call in = sep;
    in.outs = {&p};
    ASSERT_TRUE(in.run(&testPool()));
    EXPECT_TRUE(sameBits(p, out));
  }
  for (bool nesterov : {false, true}) {
    SCOPED_TRACE("momentum_update");
    MomentumRef r{0.9, 0.8, 0.01, nesterov};
    Buf p = fresh(3), g = fresh(4), v = fresh(5), pOut(t, s), vOut(t, s);
    ASSERT_TRUE(
        momentumCall(lr, step, p, g, v, pOut, vOut, r).run(&testPool()));
    ASSERT_TRUE(momentumCall(lr, step, p, g, v, p, v, r).run(&testPool()));
    EXPECT_TRUE(sameBits(p, pOut));
    EXPECT_TRUE(sameBits(v, vOut));
  }
  for (const char *mode : {"onnx", "pytorch"}) {
    SCOPED_TRACE(std::string("adam_update ") + mode);
    bool torch = std::string(mode) == "pytorch";
    Buf p = fresh(6), g = fresh(7), m = fresh(8), v = fresh(9, 0), pOut(t, s),
        mOut(t, s), vOut(t, s);
    auto call = [&](Buf &po, Buf &mo, Buf &vo) {
      return adamCall(lr, step, p, g, m, v, po, mo, vo, mode, 0.9, 0.999, 1e-6,
                      0.01, torch ? 0 : 0.01, torch ? 0.01 : 0);
    };
    ASSERT_TRUE(call(pOut, mOut, vOut).run(&testPool()));
    ASSERT_TRUE(call(p, m, v).run(&testPool()));
    EXPECT_TRUE(sameBits(p, pOut));
    EXPECT_TRUE(sameBits(m, mOut));
    EXPECT_TRUE(sameBits(v, vOut));
  }
  {
    SCOPED_TRACE("adagrad_update");
    AdagradRef r{0.1, 1e-6, 0.01};
    Buf p = fresh(10), g = fresh(11), h = fresh(12, 0), pOut(t, s), hOut(t, s);
    ASSERT_TRUE(adagradCall(lr, step, p, g, h, pOut, hOut, r).run(&testPool()));
    ASSERT_TRUE(adagradCall(lr, step, p, g, h, p, h, r).run(&testPool()));
    EXPECT_TRUE(sameBits(p, pOut));
    EXPECT_TRUE(sameBits(h, hOut));
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, OptimizerInPlaceTest,
                         ::testing::ValuesIn(kFloats), dtypeName);

//===----------------------------------------------------------------------===//
// The working copy: one more output, the new parameter rounded
//===----------------------------------------------------------------------===//

// Given one more f16 or bf16 output, each update of an f32 parameter writes
// there the new parameter rounded to nearest even (what a separate cast
// stores; Half.h's conversions are the reference), in place over the old
// copy too, and leaves its other outputs' bits as they were without it.
TEST(OptimizerWorkingCopy, IsTheNewParameterRounded) {
  Shape s = {40001};
  const DType f32 = DType::F32;
  Buf lr = lrBuf(0.1), step = stepBuf(2), p = randomBuf(f32, s, 30),
      g = randomBuf(f32, s, 31), m = randomBuf(f32, s, 32),
      v = randomBuf(f32, s, 33, 0, 1);
  for (DType low : {DType::F16, DType::BF16}) {
    Buf o1(f32, s), o2(f32, s), o3(f32, s);
    Call sgd{"sgd_update", sgdAttrs(), {&lr, &p, &g}, {&o1}};
    std::pair<const char *, Call> calls[] = {
        {"sgd_update", sgd},
        {"momentum_update",
         momentumCall(lr, step, p, g, v, o1, o2, {0.9, 0.8, 0.01, false})},
        {"adam_update", adamCall(lr, step, p, g, m, v, o1, o2, o3, "pytorch",
                                 0.9, 0.999, 1e-6, 0, 0, 0.01)},
        {"adagrad_update",
         adagradCall(lr, step, p, g, v, o1, o2, {0.1, 1e-6, 0.01})}};
    for (auto &[op, without] : calls) {
      SCOPED_TRACE(std::string(op) + " to " + std::string(name(low)));
      ASSERT_TRUE(without.run(&testPool()));
      std::vector<Buf> want;
      for (Buf *o : without.outs)
        want.push_back(*o);
      // The copy is written over a buffer that held the old one.
      Buf copy = randomBuf(low, s, 34);
      Call with = without;
      with.outs.push_back(&copy);
      ASSERT_TRUE(with.run(&testPool()));
      for (size_t k = 0; k < want.size(); ++k)
        EXPECT_TRUE(sameBits(*with.outs[k], want[k])) << "output " << k;
      Buf rounded(low, s);
      for (int64_t i = 0; i < rounded.size(); ++i)
        rounded.set(i, want[0].get(i));
      EXPECT_TRUE(sameBits(copy, rounded));
    }
  }
}

TEST(OptimizerWorkingCopy, Errors) {
  Shape s = {3};
  Buf lr = lrBuf(0.1), step = stepBuf(0), p(DType::F32, s), g(DType::F32, s),
      v(DType::F32, s), po(DType::F32, s), vo(DType::F32, s);
  Call c = momentumCall(lr, step, p, g, v, po, vo, {0.9, 0.8, 0, false});
  Buf copy(DType::F16, s);
  c.outs.push_back(&copy);
  EXPECT_TRUE(c.check());
  copy = Buf(DType::F32, s);
  expectError(c.check(), "working_copy (output 2) must be f16 or bf16, got "
                         "f32");
  copy = Buf(DType::BF16, {2});
  expectError(c.check(), "working_copy has shape [2] but the op computes [3]");
  copy = Buf(DType::F16, s);
  c.outs.push_back(&copy);
  expectError(c.check(), "expects 2 outputs, got 4");
}

//===----------------------------------------------------------------------===//
// skip: the update of a step that loss scaling found to overflow
//===----------------------------------------------------------------------===//

struct UpdateOp {
  const char *op;
  bool hasStep;
  int states; // state tensors after grad, each replaced by one output
};
const UpdateOp kUpdates[] = {{"sgd_update", false, 0},
                             {"momentum_update", true, 1},
                             {"adam_update", true, 2},
                             {"adagrad_update", true, 1}};

// An update of `p` with state `state` into `outs` (new param, new state,
// optional working copy), and skip when given; with lossScale, skip (absent
// when null) then lossScale.
Call updateCall(const UpdateOp &u, Buf &lr, Buf &step, Buf &p, Buf &g,
                std::vector<Buf> &state, std::vector<Buf *> outs, Buf *skip,
                Buf *lossScale = nullptr) {
  Call c{u.op, {}, {&lr}, std::move(outs)};
  if (u.hasStep)
    c.ins.push_back(&step);
  c.ins.push_back(&p);
  c.ins.push_back(&g);
  for (Buf &b : state)
    c.ins.push_back(&b);
  if (skip || lossScale)
    c.ins.push_back(skip);
  if (lossScale)
    c.ins.push_back(lossScale);
  std::string op = u.op;
  if (op == "sgd_update") {
    c.attrs.setFloat("weight_decay", 0.01);
  } else if (op == "momentum_update") {
    c.attrs.setFloat("alpha", 0.9);
    c.attrs.setFloat("beta", 0.8);
    c.attrs.setFloat("norm_coefficient", 0.01);
    c.attrs.setString("mode", "standard");
  } else if (op == "adam_update") {
    c.attrs.setString("mode", "pytorch");
    c.attrs.setFloat("alpha", 0.9);
    c.attrs.setFloat("beta", 0.999);
    c.attrs.setFloat("epsilon", 1e-6);
    c.attrs.setFloat("norm_coefficient", 0);
    c.attrs.setFloat("norm_coefficient_post", 0);
    c.attrs.setFloat("weight_decay", 0.01);
  } else {
    c.attrs.setFloat("decay_factor", 0.1);
    c.attrs.setFloat("epsilon", 1e-6);
    c.attrs.setFloat("norm_coefficient", 0.01);
  }
  return c;
}

std::vector<Buf> randomState(const UpdateOp &u, DType t, const Shape &s) {
  std::vector<Buf> state;
  for (int k = 0; k < u.states; ++k) // >= 0: Adam's v, Adagrad's sum
    state.push_back(randomBuf(t, s, 40 + k, 0, 1));
  return state;
}

// The working copy of `p`: its value rounded once to `low` (Half.h).
Buf roundedCopy(const Buf &p, DType low) {
  Buf w(low, p.shape);
  for (int64_t i = 0; i < p.size(); ++i) {
    uint16_t bits =
        p.dtype == DType::F64
            ? (low == DType::F16 ? doubleToHalfBits(p.get(i))
                                 : doubleToBFloatBits(p.get(i)))
            : (low == DType::F16
                   ? floatToHalfBits(static_cast<float>(p.get(i)))
                   : floatToBFloatBits(static_cast<float>(p.get(i))));
    std::memcpy(w.bytes() + 2 * i, &bits, 2);
  }
  return w;
}

class OptimizerSkipTest : public ::testing::TestWithParam<DType> {};

// With skip set, every output holds the bits of the input it replaces
// (written over it or not), the working copy the old parameter rounded, and
// nothing else is read: the gradient, lr and step are NaN, NaN and -1
// (which a running update rejects).
// Runs u skipped on a fresh param and state (of dtype `param`, shape s),
// writing its outputs over them (inPlace) or into fresh buffers, and a
// `low` working copy if given, then checks that every output, the param and
// the state hold their old bits and the copy the old param rounded.
void expectSkippedUpdateKeepsState(const UpdateOp &u, DType param,
                                   const Shape &s, Buf &lr, Buf &step, Buf &g,
                                   Buf &skip, Buf *lossScale, bool inPlace,
                                   std::optional<DType> low) {
  Buf p = randomBuf(param, s, 1);
  std::vector<Buf> state = randomState(u, param, s);
  const Buf pBefore = p;
  const std::vector<Buf> stateBefore = state;
  std::vector<Buf> fresh;
  for (int k = 0; k <= u.states; ++k)
    fresh.push_back(randomBuf(param, s, 60 + k));
  std::vector<Buf *> outs;
  outs.push_back(inPlace ? &p : &fresh[0]);
  for (int k = 0; k < u.states; ++k)
    outs.push_back(inPlace ? &state[k] : &fresh[k + 1]);
  Buf copy = low ? randomBuf(*low, s, 70) : Buf();
  if (low)
    outs.push_back(&copy);
  Status st = updateCall(u, lr, step, p, g, state, outs, &skip, lossScale)
                  .run(&testPool());
  ASSERT_TRUE(st.isOk()) << st.message();
  EXPECT_TRUE(sameBits(*outs[0], pBefore)) << "new param";
  for (int k = 0; k < u.states; ++k)
    EXPECT_TRUE(sameBits(*outs[k + 1], stateBefore[k])) << "new state " << k;
  EXPECT_TRUE(sameBits(p, pBefore)) << "param";
  for (int k = 0; k < u.states; ++k)
    EXPECT_TRUE(sameBits(state[k], stateBefore[k])) << "state " << k;
  if (low) {
    EXPECT_TRUE(sameBits(copy, roundedCopy(pBefore, *low)))
        << "working copy";
  }
}

TEST_P(OptimizerSkipTest, LeavesEveryOutputAsTheStateItReplaces) {
  const DType t = GetParam();
  const Shape s = {40001};
  Buf lr = lrBuf(std::numeric_limits<double>::quiet_NaN()), step = stepBuf(-1),
      skip = makeBuf(DType::I1, {}, {1});
  Buf g(t, s);
  for (int64_t i = 0; i < g.size(); ++i)
    g.set(i, std::numeric_limits<double>::quiet_NaN());
  for (const UpdateOp &u : kUpdates)
    for (bool inPlace : {false, true})
      for (std::optional<DType> low :
           {std::optional<DType>(), std::optional<DType>(DType::F16),
            std::optional<DType>(DType::BF16)}) {
        SCOPED_TRACE(
            std::string(u.op) + (inPlace ? " in place" : "") +
            (low ? " with an " + std::string(name(*low)) + " copy" : ""));
        expectSkippedUpdateKeepsState(u, t, s, lr, step, g, skip, nullptr,
                                      inPlace, low);
      }
}

// skip = 0 (and skip listed but absent) is the update without skip.
TEST_P(OptimizerSkipTest, UnsetIsTheUpdateWithoutSkip) {
  const DType t = GetParam();
  const Shape s = {40001};
  Buf lr = lrBuf(0.1), step = stepBuf(2), noSkip = makeBuf(DType::I1, {}, {0}),
      p = randomBuf(t, s, 1), g = randomBuf(t, s, 2);
  for (const UpdateOp &u : kUpdates) {
    SCOPED_TRACE(u.op);
    std::vector<Buf> state = randomState(u, t, s);
    auto outputs = [&] {
      std::vector<Buf> o(u.states + 1, Buf(t, s));
      o.push_back(Buf(DType::F16, s));
      return o;
    };
    auto pointers = [](std::vector<Buf> &o) {
      std::vector<Buf *> v;
      for (Buf &b : o)
        v.push_back(&b);
      return v;
    };
    std::vector<Buf> want = outputs(), got = outputs(), absent = outputs();
    ASSERT_TRUE(updateCall(u, lr, step, p, g, state, pointers(want), nullptr)
                    .run(&testPool()));
    ASSERT_TRUE(updateCall(u, lr, step, p, g, state, pointers(got), &noSkip)
                    .run(&testPool()));
    Call withAbsent =
        updateCall(u, lr, step, p, g, state, pointers(absent), nullptr);
    withAbsent.ins.push_back(nullptr);
    ASSERT_TRUE(withAbsent.run(&testPool()));
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_TRUE(sameBits(got[k], want[k])) << "output " << k;
      EXPECT_TRUE(sameBits(absent[k], want[k])) << "output " << k;
    }
    // The update did run: the parameter moved.
    EXPECT_FALSE(sameBits(want[0], p));
  }
}

INSTANTIATE_TEST_SUITE_P(Floats, OptimizerSkipTest,
                         ::testing::ValuesIn(kFloats), dtypeName);

TEST(OptimizerSkip, Errors) {
  Shape s = {3};
  Buf lr = lrBuf(0.1), p(DType::F32, s), g(DType::F32, s), out(DType::F32, s),
      skip = makeBuf(DType::I1, {}, {1}), notFlag(DType::F32, {}),
      flags(DType::I1, {2});
  Call c{"sgd_update", sgdAttrs(), {&lr, &p, &g, &skip}, {&out}};
  EXPECT_TRUE(c.check());
  c.ins[3] = &notFlag;
  expectError(c.check(), "op 'sgd_update': skip (input 3) must be a scalar "
                         "(rank 0) i1 tensor, got tensor<f32>");
  c.ins[3] = &flags;
  expectError(c.check(), "skip (input 3) must be a scalar (rank 0) i1 "
                         "tensor, got tensor<2xi1>");
  c.ins[3] = &skip;
  // The input after skip is loss_scale, an f32 scalar (as notFlag is): a
  // second flag is not.
  c.ins.push_back(&skip);
  expectError(c.check(), "loss_scale (input 4) must be a scalar (rank 0) f32 "
                         "tensor, got tensor<i1>");
  c.ins[4] = &notFlag;
  EXPECT_TRUE(c.check());
  c.ins.push_back(&skip);
  expectError(c.check(), "expects 3 to 5 inputs, got 6");
  Buf step = stepBuf(0), v(DType::F32, s), vo(DType::F32, s);
  Call m = momentumCall(lr, step, p, g, v, out, vo, {0.9, 0.9, 0, false});
  m.ins.push_back(&notFlag);
  expectError(m.check(), "skip (input 5) must be a scalar (rank 0) i1");
}

//===----------------------------------------------------------------------===//
// loss_scale: the gradient read unscaled, f16/bf16 widened for f32
//===----------------------------------------------------------------------===//

Buf lossScaleBuf(float scale) { return makeBuf(DType::F32, {}, {scale}); }

std::vector<Buf *> pointersTo(std::vector<Buf> &bufs) {
  std::vector<Buf *> v;
  for (Buf &b : bufs)
    v.push_back(&b);
  return v;
}

// The outputs of an update of a `t` parameter: new param and new states,
// then the working copy when `low` is given.
std::vector<Buf> updateOutputs(const UpdateOp &u, DType t, const Shape &s,
                               std::optional<DType> low) {
  std::vector<Buf> o(u.states + 1, Buf(t, s));
  if (low)
    o.push_back(Buf(*low, s));
  return o;
}

// A zero weight decay (norm_coefficient) adds nothing to the gradient, as
// in PyTorch: an infinite parameter (a -inf attention mask trained as a
// weight) stays infinite instead of turning NaN through 0 * inf, and a
// finite one moves by its gradient alone. A nonzero decay of inf is NaN,
// as in PyTorch.
TEST(OptimizerDecay, ZeroDecayNeverMultipliesTheParameter) {
  const double inf = std::numeric_limits<double>::infinity();
  const Shape s = {4};
  for (DType t : {DType::F32, DType::F64, DType::F16, DType::BF16})
    for (const UpdateOp &u : kUpdates) {
      SCOPED_TRACE(std::string(u.op) + " " + std::string(name(t)));
      Buf lr = lrBuf(0.1), step = stepBuf(3);
      Buf p = makeBuf(t, s, {-inf, inf, 1.5, -2}),
          g = makeBuf(t, s, {0, 0.25, 0.5, 0});
      std::vector<Buf> state(u.states, makeBuf(t, s, {0.5, 0.5, 0.5, 0.5}));
      std::vector<Buf> outs = updateOutputs(u, t, s, std::nullopt);
      Call c = updateCall(u, lr, step, p, g, state, pointersTo(outs), nullptr);
      c.attrs.setFloat("weight_decay", 0);
      c.attrs.setFloat("norm_coefficient", 0);
      ASSERT_TRUE(c.run().isOk());
      EXPECT_EQ(outs[0].get(0), -inf);
      EXPECT_EQ(outs[0].get(1), inf);
      EXPECT_TRUE(std::isfinite(outs[0].get(2)) &&
                  std::isfinite(outs[0].get(3)));
      for (int k = 0; k < u.states; ++k)
        for (int64_t i = 0; i < 4; ++i)
          EXPECT_FALSE(std::isnan(outs[k + 1].get(i))) << "state " << k;

      // A coupled L2 decay of the infinite parameter: NaN, where PyTorch
      // gives NaN. (Adam's decoupled weight_decay scales the parameter,
      // which keeps it infinite, as AdamW does.)
      c.attrs.setFloat(std::string(u.op) == "sgd_update" ? "weight_decay"
                                                         : "norm_coefficient",
                       0.01);
      ASSERT_TRUE(c.run().isOk());
      EXPECT_TRUE(std::isnan(outs[0].get(0)));
    }
}

// Runs `u` of `p` with gradient `g`, skip 0 and loss_scale `scale` (into
// fresh outputs, or over p and the state), and the same update with
// gradient `ref` and neither skip nor loss_scale; every output must hold
// the same bits.
void expectScaledIsReference(const UpdateOp &u, const Buf &p, const Buf &g,
                             float scale, const Buf &ref,
                             std::optional<DType> low, bool inPlace) {
  const Shape &s = p.shape;
  Buf lr = lrBuf(0.1), step = stepBuf(2), noSkip = makeBuf(DType::I1, {}, {0}),
      ls = lossScaleBuf(scale);
  Buf pRef = p, gRef = ref, pRun = p, gRun = g;
  std::vector<Buf> stateRef = randomState(u, p.dtype, s), stateRun = stateRef;
  std::vector<Buf> want = updateOutputs(u, p.dtype, s, low);
  Status st =
      updateCall(u, lr, step, pRef, gRef, stateRef, pointersTo(want), nullptr)
          .run(&testPool());
  ASSERT_TRUE(st.isOk()) << st.message();
  std::vector<Buf> fresh = updateOutputs(u, p.dtype, s, low);
  std::vector<Buf *> outs = pointersTo(fresh);
  if (inPlace) {
    outs[0] = &pRun;
    for (int k = 0; k < u.states; ++k)
      outs[k + 1] = &stateRun[k];
  }
  st = updateCall(u, lr, step, pRun, gRun, stateRun, outs, &noSkip, &ls)
           .run(&testPool());
  ASSERT_TRUE(st.isOk()) << st.message();
  for (size_t k = 0; k < want.size(); ++k)
    EXPECT_TRUE(sameBits(*outs[k], want[k])) << "output " << k;
  EXPECT_TRUE(sameBits(gRun, g)) << "the gradient is read only";
  // The update did run: the parameter moved.
  EXPECT_FALSE(sameBits(want[0], p));
}

// An f32 parameter with an f16, bf16 or f32 gradient and a loss_scale:
// bit for bit the update of the gradient widened to f32 and multiplied by
// 1.0f / scale in f32 (what the removed unscale_and_check stored), with no
// loss_scale.
// Powers of two (exact), 3 and 0.75 (whose f32 reciprocals are rounded)
// and 1; with and without a working copy, into fresh outputs and in place;
// 40001 elements (blocks, threads and a partial last block).
TEST(OptimizerLossScale, F32ParamMatchesTheWidenedUnscaledGradient) {
  const Shape s = {40001};
  Buf p = randomBuf(DType::F32, s, 1);
  for (const UpdateOp &u : kUpdates)
    for (DType gt : {DType::F16, DType::BF16, DType::F32})
      for (float scale : {1024.0f, 65536.0f, 3.0f, 0.75f, 1.0f}) {
        // Scaled gradients: up to `scale` in magnitude, within f16's range.
        double big = std::min<double>(scale, 60000);
        Buf g = randomBuf(gt, s, 2, -big, big), ref(DType::F32, s);
        for (int64_t i = 0; i < s[0]; ++i)
          ref.set(i, static_cast<float>(g.get(i)) * (1.0f / scale));
        struct Variant {
          std::optional<DType> low;
          bool inPlace;
        };
        for (Variant v :
             {Variant{std::nullopt, false}, Variant{DType::BF16, true},
              Variant{DType::F16, false}}) {
          SCOPED_TRACE(
              std::string(u.op) + " grad " + std::string(name(gt)) + " scale " +
              std::to_string(scale) +
              (v.low ? " with an " + std::string(name(*v.low)) + " copy" : "") +
              (v.inPlace ? " in place" : ""));
          expectScaledIsReference(u, p, g, scale, ref, v.low, v.inPlace);
        }
      }
}

// Without loss_scale an f32 parameter's f16/bf16 gradient is widened and
// used as it is.
TEST(OptimizerLossScale, F32ParamWidensWithoutLossScale) {
  const Shape s = {4099};
  Buf lr = lrBuf(0.1), step = stepBuf(1), p = randomBuf(DType::F32, s, 1);
  for (const UpdateOp &u : kUpdates)
    for (DType gt : {DType::F16, DType::BF16}) {
      SCOPED_TRACE(std::string(u.op) + " grad " + std::string(name(gt)));
      Buf g = randomBuf(gt, s, 3), wide(DType::F32, s);
      for (int64_t i = 0; i < s[0]; ++i)
        wide.set(i, g.get(i));
      std::vector<Buf> state = randomState(u, DType::F32, s);
      std::vector<Buf> want = updateOutputs(u, DType::F32, s, DType::F16),
                       got = updateOutputs(u, DType::F32, s, DType::F16);
      ASSERT_TRUE(
          updateCall(u, lr, step, p, wide, state, pointersTo(want), nullptr)
              .run(&testPool()));
      ASSERT_TRUE(updateCall(u, lr, step, p, g, state, pointersTo(got), nullptr)
                      .run(&testPool()));
      for (size_t k = 0; k < want.size(); ++k)
        EXPECT_TRUE(sameBits(got[k], want[k])) << "output " << k;
    }
}

// A gradient of the parameter's own dtype is unscaled alike: f64 by the
// f32 reciprocal widened, in f64; f16 and bf16 (computed in f32) by powers
// of two, where g / scale is exact in the dtype and is the reference
// gradient.
TEST(OptimizerLossScale, SameDTypeGradientIsUnscaledToo) {
  const Shape s = {9001};
  for (const UpdateOp &u : kUpdates) {
    for (float scale : {3.0f, 1024.0f, 0.75f}) {
      SCOPED_TRACE(std::string(u.op) + " f64 scale " + std::to_string(scale));
      Buf p = randomBuf(DType::F64, s, 5),
          g = randomBuf(DType::F64, s, 6, -3, 3), ref(DType::F64, s);
      const double inv = static_cast<double>(1.0f / scale);
      for (int64_t i = 0; i < s[0]; ++i)
        ref.set(i, g.get(i) * inv);
      expectScaledIsReference(u, p, g, scale, ref, DType::BF16, false);
    }
    for (DType t : {DType::F16, DType::BF16})
      for (float scale : {1024.0f, 0.25f}) {
        SCOPED_TRACE(std::string(u.op) + " " + std::string(name(t)) +
                     " scale " + std::to_string(scale));
        // |ref| >= 2^-8, so ref * scale stays a normal number.
        Buf p = randomBuf(t, s, 7), ref = randomBuf(t, s, 8), g(t, s);
        for (int64_t i = 0; i < s[0]; ++i) {
          double r = ref.get(i);
          if (std::fabs(r) < 0x1p-8)
            ref.set(i, r < 0 ? -0x1p-8 : 0x1p-8);
          g.set(i, ref.get(i) * scale);
          ASSERT_EQ(g.get(i) / scale, ref.get(i)) << "element " << i;
        }
        expectScaledIsReference(u, p, g, scale, ref, std::nullopt, scale > 1);
      }
  }
}

// A skipped step with a loss_scale writes every output (and the working
// copy) as the state it replaces, bit for bit, and reads neither the
// gradient (NaN), lr (NaN), step (-1) nor the scale (0: 1 / 0 is inf).
TEST(OptimizerLossScale, SkippedScaledUpdateKeepsEveryOutput) {
  const Shape s = {40001};
  Buf lr = lrBuf(std::numeric_limits<double>::quiet_NaN()), step = stepBuf(-1),
      skip = makeBuf(DType::I1, {}, {1}), ls = lossScaleBuf(0);
  struct Pair {
    DType param, grad;
  };
  for (const UpdateOp &u : kUpdates)
    for (Pair pr : {Pair{DType::F32, DType::F16}, Pair{DType::F32, DType::BF16},
                    Pair{DType::F32, DType::F32}, Pair{DType::F64, DType::F64},
                    Pair{DType::F16, DType::F16}})
      for (bool inPlace : {false, true})
        for (std::optional<DType> low :
             {std::optional<DType>(), std::optional<DType>(DType::F16),
              std::optional<DType>(DType::BF16)}) {
          SCOPED_TRACE(
              std::string(u.op) + " " + std::string(name(pr.param)) +
              " param, " + std::string(name(pr.grad)) + " grad" +
              (inPlace ? " in place" : "") +
              (low ? " with an " + std::string(name(*low)) + " copy" : ""));
          Buf g(pr.grad, s);
          for (int64_t i = 0; i < g.size(); ++i)
            g.set(i, std::numeric_limits<double>::quiet_NaN());
          expectSkippedUpdateKeepsState(u, pr.param, s, lr, step, g, skip,
                                        &ls, inPlace, low);
        }
}

TEST(OptimizerLossScale, Errors) {
  Shape s = {4};
  Buf lr = lrBuf(0.1), p(DType::F32, s), g16(DType::F16, s), out(DType::F32, s),
      skip = makeBuf(DType::I1, {}, {0}), ls = lossScaleBuf(1024);
  Call c{"sgd_update", sgdAttrs(), {&lr, &p, &g16, &skip, &ls}, {&out}};
  EXPECT_TRUE(c.check());
  // loss_scale needs skip: listed but absent, or left off.
  c.ins[3] = nullptr;
  expectError(c.check(), "op 'sgd_update': has loss_scale (input 4) but no "
                         "skip (input 3): a loss-scaled gradient can "
                         "overflow, and the step must be able to skip the "
                         "update");
  c.ins[3] = &skip;
  c.ins[4] = nullptr;
  EXPECT_TRUE(c.check()); // loss_scale listed but absent
  // loss_scale is an f32 scalar.
  Buf ls64 = makeBuf(DType::F64, {}, {1024}), lsVec(DType::F32, {1}),
      ls16 = makeBuf(DType::F16, {}, {1024});
  for (auto [b, type] : {std::pair<Buf *, const char *>{&ls64, "tensor<f64>"},
                         {&lsVec, "tensor<1xf32>"},
                         {&ls16, "tensor<f16>"}}) {
    c.ins[4] = b;
    expectError(c.check(), std::string("loss_scale (input 4) must be a "
                                       "scalar (rank 0) f32 tensor, got ") +
                               type);
  }
  c.ins[4] = &ls;
  // Counted after the state tensors.
  Buf step = stepBuf(0), v(DType::F32, s), vo(DType::F32, s);
  Call m = momentumCall(lr, step, p, g16, v, out, vo, {0.9, 0.9, 0, false});
  EXPECT_TRUE(m.check());
  m.ins.push_back(nullptr);
  m.ins.push_back(&ls);
  expectError(m.check(), "has loss_scale (input 6) but no skip (input 5)");
  m.ins[5] = &skip;
  EXPECT_TRUE(m.check());
  m.ins[6] = &lsVec;
  expectError(m.check(), "loss_scale (input 6) must be a scalar (rank 0) f32");

  // Only an f32 parameter takes an f16/bf16 gradient, of its shape.
  Buf g16Wrong(DType::F16, {5}), gbf(DType::BF16, s), g64(DType::F64, s);
  c.ins[2] = &g16Wrong;
  expectError(c.check(), "grad has shape [5] but param has [4]");
  c.ins[2] = &gbf;
  EXPECT_TRUE(c.check());
  c.ins[2] = &g64;
  expectError(c.check(), "grad is f64 but param is f32 (a gradient has the "
                         "parameter's dtype, or f16/bf16 for an f32 "
                         "parameter)");
  Buf p64(DType::F64, s), out64(DType::F64, s);
  Call c64{"sgd_update", sgdAttrs(), {&lr, &p64, &g16, &skip, &ls}, {&out64}};
  expectError(c64.check(), "grad is f16 but param is f64 (a gradient has the "
                           "parameter's dtype");
  Buf p16(DType::F16, s), out16(DType::F16, s);
  Call c16{"sgd_update", sgdAttrs(), {&lr, &p16, &gbf, &skip, &ls}, {&out16}};
  expectError(c16.check(), "grad is bf16 but param is f16");
  c16.ins[2] = &g16; // the parameter's own dtype
  EXPECT_TRUE(c16.check());
  Buf pbf(DType::BF16, s), outbf(DType::BF16, s);
  Call cbf{"sgd_update", sgdAttrs(), {&lr, &pbf, &g16, &skip, &ls}, {&outbf}};
  expectError(cbf.check(), "grad is f16 but param is bf16");
}

//===----------------------------------------------------------------------===//
// lr_schedule
//===----------------------------------------------------------------------===//

double schedule(const std::string &kind, int64_t s, DType out,
                void (*set)(Attrs &) = nullptr) {
  Buf step = stepBuf(s), lr(out, {});
  Call c{"lr_schedule", {}, {&step}, {&lr}};
  c.attrs.setFloat("base_lr", 0.1);
  c.attrs.setString("kind", kind);
  // Every attribute, as the compiler writes them; `set` changes some.
  c.attrs.setInt("step_size", 1);
  c.attrs.setFloat("gamma", 0.1);
  c.attrs.setInt("total_steps", 1);
  c.attrs.setFloat("min_lr", 0);
  if (set)
    set(c.attrs);
  Status st = c.run();
  EXPECT_TRUE(st.isOk()) << st.message();
  return lr.get(0);
}

TEST(LrSchedule, Constant) {
  EXPECT_EQ(schedule("constant", 0, DType::F64), 0.1);
  EXPECT_EQ(schedule("constant", 12345, DType::F32), 0.1f);
}

TEST(LrSchedule, StepDecaysEveryStepSizeSteps) {
  auto set = [](Attrs &a) {
    a.setInt("step_size", 3);
    a.setFloat("gamma", 0.5);
  };
  const double want[] = {0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.025, 0.025};
  for (int64_t s = 0; s < 8; ++s) {
    EXPECT_DOUBLE_EQ(schedule("step", s, DType::F64, set), want[s]) << s;
    EXPECT_EQ(schedule("step", s, DType::F32, set), static_cast<float>(want[s]))
        << s;
  }
}

TEST(LrSchedule, CosineAnnealsToMinAndStays) {
  auto set = [](Attrs &a) {
    a.setInt("total_steps", 10);
    a.setFloat("min_lr", 0.01);
  };
  EXPECT_DOUBLE_EQ(schedule("cosine", 0, DType::F64, set), 0.1);
  EXPECT_DOUBLE_EQ(schedule("cosine", 5, DType::F64, set), 0.055);
  EXPECT_NEAR(schedule("cosine", 2, DType::F64, set),
              0.01 + 0.09 * (1 + std::cos(M_PI * 0.2)) / 2, 1e-15);
  EXPECT_DOUBLE_EQ(schedule("cosine", 10, DType::F64, set), 0.01);
  EXPECT_DOUBLE_EQ(schedule("cosine", 25, DType::F64, set), 0.01);
  EXPECT_EQ(schedule("cosine", 5, DType::F32, set), 0.055f);
}

//===----------------------------------------------------------------------===//
// Errors
//===----------------------------------------------------------------------===//

struct MomentumFixture : ::testing::Test {
  Shape s = {4};
  Buf lr = lrBuf(0.1), step = stepBuf(0), p = Buf(DType::F32, s),
      g = Buf(DType::F32, s), v = Buf(DType::F32, s), pOut = Buf(DType::F32, s),
      vOut = Buf(DType::F32, s);
  Call call() {
    return momentumCall(lr, step, p, g, v, pOut, vOut,
                        MomentumRef{0.9, 0.9, 0, false});
  }
};

TEST_F(MomentumFixture, ScalarsMustBeScalars) {
  lr = Buf(DType::F32, {1});
  expectError(call().check(), "lr must be a scalar (rank 0) f32 or f64 "
                              "tensor, got tensor<1xf32>");
  lr = Buf(DType::I64, {});
  expectError(call().check(), "lr must be a scalar (rank 0) f32 or f64 "
                              "tensor, got tensor<i64>");
  lr = lrBuf(0.1);
  step = Buf(DType::F32, {});
  expectError(call().check(),
              "step must be a scalar (rank 0) i64 tensor, got tensor<f32>");
  step = Buf(DType::I64, {2});
  expectError(call().check(),
              "step must be a scalar (rank 0) i64 tensor, got tensor<2xi64>");
}

TEST_F(MomentumFixture, TensorsMustMatchParam) {
  ASSERT_TRUE(call().check().isOk());
  g = Buf(DType::F32, {5});
  expectError(call().check(), "grad has shape [5] but param has [4]");
  g = Buf(DType::F32, s);
  v = Buf(DType::F16, s);
  // Only the gradient may be narrower than an f32 parameter.
  expectError(call().check(), "velocity is f16 but param is f32");
  v = Buf(DType::F32, s);
  vOut = Buf(DType::F32, {2, 2});
  expectError(call().check(),
              "new_velocity has shape [2, 2] but the op computes [4]");
  vOut = Buf(DType::F32, s);
  p = g = v = pOut = vOut = Buf(DType::I64, s);
  expectError(call().check(), "param must be f32, f16, bf16 or f64, got i64");
}

TEST_F(MomentumFixture, Attributes) {
  Call c = call();
  c.attrs.setString("mode", "nesterovv");
  expectError(c.check(), "attribute 'mode' must be \"standard\" or "
                         "\"nesterov\", got \"nesterovv\"");
  Call missing{"momentum_update", {}, c.ins, c.outs};
  missing.attrs.setFloat("beta", 0.9);
  expectError(missing.check(), "attribute 'alpha' is missing");
  Call arity = call();
  arity.ins.pop_back();
  expectError(arity.check(), "expects 5 to 7 inputs, got 4");
  Call more = call();
  Buf skip = makeBuf(DType::I1, {}, {0}), scale = makeBuf(DType::F32, {}, {1});
  more.ins.push_back(&skip);
  more.ins.push_back(&scale);
  EXPECT_TRUE(more.check());
  more.ins.push_back(&skip);
  expectError(more.check(), "expects 5 to 7 inputs, got 8");
}

TEST_F(MomentumFixture, NegativeStepIsARunError) {
  step = stepBuf(-1);
  expectError(call().run(), "step is -1, but it counts the updates already "
                            "done and must be >= 0");
}

TEST(OptimizerErrors, Adam) {
  Shape s = {3};
  Buf lr = lrBuf(0.1), step = stepBuf(0), p(DType::F32, s), g(DType::F32, s),
      m(DType::F32, s), v(DType::F32, s), po(DType::F32, s), mo(DType::F32, s),
      vo(DType::F32, s);
  auto call = [&](const std::string &mode, double alpha, double beta,
                  double eps, double ncPost, double wd) {
    return adamCall(lr, step, p, g, m, v, po, mo, vo, mode, alpha, beta, eps, 0,
                    ncPost, wd)
        .check();
  };
  EXPECT_TRUE(call("onnx", 1, 1, 0, 0.1, 0).isOk());
  expectError(call("keras", 0.9, 0.999, 1e-8, 0, 0),
              "attribute 'mode' must be \"onnx\" or \"pytorch\", got "
              "\"keras\"");
  expectError(call("onnx", 1.5, 0.999, 1e-8, 0, 0),
              "attribute 'alpha' must be in [0, 1], got 1.5");
  expectError(call("onnx", 0.9, -0.1, 1e-8, 0, 0),
              "attribute 'beta' must be in [0, 1], got -0.1");
  expectError(call("onnx", 0.9, 0.999, -1, 0, 0),
              "attribute 'epsilon' must be >= 0");
  expectError(call("pytorch", 0.9, 1, 1e-8, 0, 0),
              "attribute 'beta' must be < 1 in \"pytorch\" mode");
  expectError(call("onnx", 0.9, 0.999, 1e-8, 0, 0.01),
              "attribute 'weight_decay' is used in \"pytorch\" mode only");
  expectError(call("pytorch", 0.9, 0.999, 1e-8, 0.01, 0),
              "attribute 'norm_coefficient_post' is used in \"onnx\" mode "
              "only");
  mo = Buf(DType::F64, s);
  expectError(call("pytorch", 0.9, 0.999, 1e-8, 0, 0),
              "new_m has element type f64 but the op computes f32");
}

TEST(OptimizerErrors, AdagradAndSgd) {
  Shape s = {3};
  Buf lr = lrBuf(0.1), step = stepBuf(0), p(DType::BF16, s), g(DType::BF16, s),
      h(DType::BF16, s), po(DType::BF16, s), ho(DType::BF16, s);
  EXPECT_TRUE(adagradCall(lr, step, p, g, h, po, ho, {0, 1e-6, 0}).check());
  expectError(adagradCall(lr, step, p, g, h, po, ho, {0, -1, 0}).check(),
              "attribute 'epsilon' must be >= 0");
  expectError(adagradCall(lr, step, p, g, h, po, ho, {-0.5, 0, 0}).check(),
              "attribute 'decay_factor' must be >= 0");
  Buf wrong(DType::BF16, {3, 1});
  expectError(adagradCall(lr, step, p, g, wrong, po, ho, {0, 0, 0}).check(),
              "accumulator has shape [3, 1] but param has [3]");
  Call sgd{"sgd_update", sgdAttrs(), {&lr, &p, &g}, {&po}};
  EXPECT_TRUE(sgd.check());
  sgd.attrs.setString("weight_decay", "lots");
  expectError(sgd.check(), "attribute 'weight_decay' must be a float, got a "
                           "string");
}

TEST(OptimizerErrors, LrSchedule) {
  Buf step = stepBuf(0), lr(DType::F32, {});
  Call c{"lr_schedule", {}, {&step}, {&lr}};
  expectError(c.check(), "attribute 'base_lr' is missing");
  c.attrs.setFloat("base_lr", 0.1);
  c.attrs.setString("kind", "constant");
  c.attrs.setInt("step_size", 1);
  c.attrs.setFloat("gamma", 0.1);
  c.attrs.setInt("total_steps", 1);
  expectError(c.check(), "attribute 'min_lr' is missing");
  c.attrs.setFloat("min_lr", 0);
  EXPECT_TRUE(c.check());
  c.attrs.setString("kind", "linear");
  expectError(c.check(), "attribute 'kind' must be \"constant\", \"step\" or "
                         "\"cosine\", got \"linear\"");
  c.attrs.setString("kind", "step");
  c.attrs.setInt("step_size", 0);
  expectError(c.check(), "attribute 'step_size' must be >= 1, got 0");
  c.attrs.setInt("step_size", 1);
  c.attrs.setInt("total_steps", -2);
  expectError(c.check(), "attribute 'total_steps' must be >= 1, got -2");
  c.attrs.setInt("total_steps", 1);
  Buf intLr(DType::I64, {});
  c.outs = {&intLr};
  expectError(c.check(), "lr must be a scalar (rank 0) f32 or f64 tensor, "
                         "got tensor<i64>");
}

} // namespace
