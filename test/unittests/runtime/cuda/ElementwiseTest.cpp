//===- ElementwiseTest.cpp - CUDA elementwise ops against the CPU --------===//
//
// Every op runtime/cuda/Elementwise.cpp registers, in f32/f16/bf16 (and the
// integer and f64 domains where the op takes them), on odd sizes, size 1,
// empty tensors and broadcast shapes; casts between every pair of dtypes
// with saturating and NaN values; fused chains that mix dtypes and need
// many live results.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
const DType kAll[] = {DType::F32, DType::F16, DType::BF16, DType::F64,
                      DType::I64, DType::I32, DType::I1};
// Sizes that exercise the vector path's tail, a single element, empty
// tensors and a multi-block grid.
const Shape kShapes[] = {{37}, {3, 5, 7}, {1}, {0}, {2, 0, 3}, {8}, {4099}};

uint64_t seedOf(const std::string &s, int k) {
  uint64_t h = 1469598103934665603ull;
  for (char ch : s)
    h = (h ^ static_cast<uint8_t>(ch)) * 1099511628211ull;
  return h + k;
}

// The attributes the compiler writes for `op` when the model leaves them
// at ONNX's defaults (the runtime keeps none); a test overrides some.
void setOnnxDefaults(OpCase &c) {
  const std::string &op = c.op;
  if (op == "gelu" || op == "gelu_grad")
    c.attrs.setString("approximate", "none");
  if (op == "leaky_relu" || op == "leaky_relu_grad")
    c.attrs.setFloat("alpha", 0.01);
  if (op == "hard_sigmoid" || op == "hard_sigmoid_grad") {
    c.attrs.setFloat("alpha", 0.2);
    c.attrs.setFloat("beta", 0.5);
  }
}

OpCase unaryCase(const std::string &op, DType t, const Shape &shape, double lo,
                 double hi) {
  OpCase c;
  c.op = op;
  setOnnxDefaults(c);
  c.inputs = {HostTensor::random(t, shape, seedOf(op, 1), lo, hi)};
  c.outputs = {HostTensor::empty(t, shape)};
  return c;
}

OpCase binaryCase(const std::string &op, DType t, const Shape &a,
                  const Shape &b, const Shape &out, double lo0, double hi0,
                  double lo1, double hi1) {
  OpCase c;
  c.op = op;
  setOnnxDefaults(c);
  c.inputs = {HostTensor::random(t, a, seedOf(op, 2), lo0, hi0),
              HostTensor::random(t, b, seedOf(op, 3), lo1, hi1)};
  c.outputs = {HostTensor::empty(t, out)};
  return c;
}

TEST(CudaElementwise, UnaryOpsEveryFloatDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  struct U {
    const char *op;
    double lo, hi;
  };
  const U ops[] = {
      {"relu", -3, 3}, {"tanh", -4, 4},         {"sigmoid", -8, 8},
      {"erf", -3, 3},  {"exp", -5, 5},          {"log", 0.01, 50},
      {"sqrt", 0, 50}, {"reciprocal", 0.25, 4}, {"neg", -3, 3},
      {"abs", -3, 3},  {"gelu", -4, 4},         {"leaky_relu", -3, 3},
      {"clip", -3, 3}, {"hard_sigmoid", -4, 4}, {"hard_swish", -5, 5},
      {"sin", -6, 6},  {"cos", -6, 6},          {"softplus", -30, 30}};
  for (const U &u : ops)
    for (DType t : kFloats)
      for (const Shape &s : kShapes) {
        SCOPED_TRACE(caseLabel(u.op, t, s));
        OpCase c = unaryCase(u.op, t, s, u.lo, u.hi);
        if (std::string(u.op) == "clip") {
          c.attrs.setFloat("min", -1.5);
          c.attrs.setFloat("max", 0.75);
        }
        expectCudaMatchesCpu(c);
      }
}

TEST(CudaElementwise, UnaryOpsInF64AndIntegers) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op : {"relu", "tanh", "sigmoid", "erf", "exp", "gelu", "neg",
                         "abs", "clip", "leaky_relu"}) {
    SCOPED_TRACE(op);
    OpCase c = unaryCase(op, DType::F64, {129}, -3, 3);
    c.attrs.setFloat("min", -0.5);
    expectCudaMatchesCpu(c);
  }
  for (DType t : {DType::I64, DType::I32})
    for (const char *op : {"neg", "abs", "clip"}) {
      SCOPED_TRACE(caseLabel(op, t, {131}));
      OpCase c = unaryCase(op, t, {131}, -100, 100);
      // Integer clip rounds its bounds inward (ceil min, floor max).
      c.attrs.setFloat("min", -20.5);
      c.attrs.setFloat("max", 1e30);
      expectCudaMatchesCpu(c);
    }
}

TEST(CudaElementwise, UnarySpecialValues) {
  AMPC_SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> v = {0.0,    -0.0, inf,   -inf, nan, 1e-30,
                                 -1e-30, 88.8, -88.8, 1e4,  -1e4};
  for (const char *op :
       {"relu", "tanh", "sigmoid", "erf", "exp", "log", "sqrt", "reciprocal",
        "neg", "abs", "gelu", "leaky_relu", "clip"})
    for (DType t : kFloats) {
      SCOPED_TRACE(caseLabel(op, t, {11}));
      OpCase c;
      c.op = op;
      setOnnxDefaults(c);
      c.inputs = {HostTensor::fromValues(t, {11}, v)};
      c.outputs = {HostTensor::empty(t, {11})};
      c.attrs.setFloat("max", 2.0); // clip: only an upper bound
      expectCudaMatchesCpu(c);
    }
}

TEST(CudaElementwise, AttributeVariants) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    OpCase g = unaryCase("gelu", t, {257}, -5, 5);
    g.attrs.setString("approximate", "tanh");
    expectCudaMatchesCpu(g);
    OpCase l = unaryCase("leaky_relu", t, {257}, -5, 5);
    l.attrs.setFloat("alpha", 0.2);
    expectCudaMatchesCpu(l);
    OpCase lo = unaryCase("clip", t, {257}, -5, 5);
    lo.attrs.setFloat("min", 0.1);
    expectCudaMatchesCpu(lo);
    OpCase none = unaryCase("clip", t, {257}, -5, 5);
    expectCudaMatchesCpu(none);
  }
}

TEST(CudaElementwise, BinaryOpsBroadcast) {
  AMPC_SKIP_WITHOUT_GPU();
  struct B {
    Shape a, b, out;
  };
  const B shapes[] = {{{1001}, {1001}, {1001}},
                      {{4, 1, 6}, {5, 1}, {4, 5, 6}},
                      {{1}, {2, 3}, {2, 3}},
                      {{2, 3}, {}, {2, 3}},
                      {{3, 1, 7, 1}, {1, 5, 1, 9}, {3, 5, 7, 9}},
                      {{16, 33}, {33}, {16, 33}},
                      {{0, 4}, {4}, {0, 4}},
                      {{1}, {1}, {1}}};
  for (const char *op : {"add", "sub", "mul", "div", "pow"})
    for (DType t : kFloats)
      for (const B &s : shapes) {
        SCOPED_TRACE(caseLabel(op, t, s.out));
        bool pw = std::string(op) == "pow";
        OpCase c = binaryCase(op, t, s.a, s.b, s.out, pw ? 0.1 : -3, 3,
                              pw ? -2 : 0.5, 2);
        expectCudaMatchesCpu(c);
      }
}

TEST(CudaElementwise, BinaryOpsInF64AndIntegers) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op : {"add", "sub", "mul", "div", "pow"}) {
    SCOPED_TRACE(op);
    expectCudaMatchesCpu(
        binaryCase(op, DType::F64, {3, 17}, {17}, {3, 17}, 0.1, 3, 0.5, 2));
  }
  for (DType t : {DType::I64, DType::I32})
    for (const char *op : {"add", "sub", "mul", "div"}) {
      SCOPED_TRACE(caseLabel(op, t, {5, 13}));
      // Divisors in [1, 9]: the CPU refuses a division by zero.
      expectCudaMatchesCpu(
          binaryCase(op, t, {5, 13}, {5, 1}, {5, 13}, -1000, 1000, 1, 9));
    }
}

TEST(CudaElementwise, PowEdgeCases) {
  AMPC_SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> base = {0, 0,   -2,   -2,  -0.0, -0.0, 1,
                                    1, inf, -inf, nan, 2,    0.5,  -1};
  const std::vector<double> expo = {0,   -1, 3, 0.5, -1,   3,   nan,
                                    inf, -1, 3, 0,   -inf, inf, inf};
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(name(t));
    OpCase c;
    c.op = "pow";
    c.inputs = {HostTensor::fromValues(t, {14}, base),
                HostTensor::fromValues(t, {14}, expo)};
    c.outputs = {HostTensor::empty(t, {14})};
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaElementwise, GradOps) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op :
       {"relu_grad", "abs_grad", "leaky_relu_grad", "gelu_grad", "clip_grad",
        "hard_sigmoid_grad", "hard_swish_grad"})
    for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64})
      for (const Shape &s : kShapes) {
        SCOPED_TRACE(caseLabel(op, t, s));
        OpCase c = binaryCase(op, t, s, s, s, -2, 2, -3, 3);
        c.attrs.setFloat("min", -1);
        c.attrs.setFloat("max", 1.5);
        c.attrs.setFloat("alpha", 0.1);
        expectCudaMatchesCpu(c);
      }
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    OpCase g = binaryCase("gelu_grad", t, {513}, {513}, {513}, -2, 2, -5, 5);
    g.attrs.setString("approximate", "tanh");
    expectCudaMatchesCpu(g);
    // The input broadcasts against the gradient.
    OpCase b = binaryCase("relu_grad", t, {6, 7}, {7}, {6, 7}, -2, 2, -3, 3);
    expectCudaMatchesCpu(b);
  }
}

TEST(CudaElementwise, GradOpsKeepNonFiniteGradientsOutOfCutRegions) {
  AMPC_SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // -4 and 4 lie in hard_sigmoid's and hard_swish's cut-off regions.
  const std::vector<double> g = {inf, nan, -inf, 1, nan, inf, -inf, nan};
  const std::vector<double> x = {-1, -2, 0, nan, 0.5, -0.0, -4, 4};
  for (const char *op :
       {"relu_grad", "abs_grad", "leaky_relu_grad", "gelu_grad", "clip_grad",
        "hard_sigmoid_grad", "hard_swish_grad"}) {
    SCOPED_TRACE(op);
    OpCase c;
    c.op = op;
    setOnnxDefaults(c);
    c.inputs = {HostTensor::fromValues(DType::F32, {8}, g),
                HostTensor::fromValues(DType::F32, {8}, x)};
    c.outputs = {HostTensor::empty(DType::F32, {8})};
    c.attrs.setFloat("min", 0);
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaElementwise, WhereBroadcastsEveryOperand) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kAll) {
    if (t == DType::I1)
      continue;
    SCOPED_TRACE(name(t));
    OpCase c;
    c.op = "where";
    c.inputs = {HostTensor::random(DType::I1, {3, 1}, 7),
                HostTensor::random(t, {3, 45}, 8, -50, 50),
                HostTensor::random(t, {45}, 9, -50, 50)};
    c.outputs = {HostTensor::empty(t, {3, 45})};
    expectCudaMatchesCpu(c);
    OpCase same;
    same.op = "where";
    same.inputs = {HostTensor::random(DType::I1, {1027}, 10),
                   HostTensor::random(t, {1027}, 11, -50, 50),
                   HostTensor::random(t, {1027}, 12, -50, 50)};
    same.outputs = {HostTensor::empty(t, {1027})};
    expectCudaMatchesCpu(same);
  }
}

TEST(CudaElementwise, CastBetweenEveryPairOfDtypes) {
  AMPC_SKIP_WITHOUT_GPU();
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // Ties and values that round, overflow f16 or saturate ints, and
  // non-finite values (int results: saturated, NaN 0).
  const std::vector<double> special = {
      0,    -0.0,         0.5,  -2.5,     1.5,   65504,  65520, 70000,
      1e10, -1e10,        3e38, -3e38,    1e-8,  -1e-8,  nan,   inf,
      -inf, 1.0009765625, 2049, 16777217, 3.0e9, -3.0e9, 255,   -129};
  const Shape s = {static_cast<int64_t>(special.size())};
  for (DType from : kAll)
    for (DType to : kAll) {
      SCOPED_TRACE(std::string(name(from)) + " -> " + std::string(name(to)));
      OpCase c;
      c.op = "cast";
      c.inputs = {HostTensor::fromValues(from, s, special)};
      c.outputs = {HostTensor::empty(to, s)};
      expectCudaMatchesCpu(c);
      OpCase r;
      r.op = "cast";
      r.inputs = {HostTensor::random(from, {1031}, 21, -1e5, 1e5)};
      r.outputs = {HostTensor::empty(to, {1031})};
      expectCudaMatchesCpu(r);
    }
}

TEST(CudaElementwise, CastLargeIntegersRoundOnceToHalf) {
  AMPC_SKIP_WITHOUT_GPU();
  // Just above half-way between neighbours: through an RNE f32 these would
  // round twice and land on the wrong 16-bit value.
  const std::vector<double> v = {
      2049, 2051, 33554435, 4294967297.0, -4294967297.0, 9.007199254740993e15};
  for (DType to : {DType::F16, DType::BF16, DType::F32}) {
    SCOPED_TRACE(name(to));
    OpCase c;
    c.op = "cast";
    c.inputs = {HostTensor::fromValues(DType::I64, {6}, v)};
    c.outputs = {HostTensor::empty(to, {6})};
    expectCudaMatchesCpu(c);
  }
}

ops::FusedStep step(const std::string &op, std::vector<int> operands, DType t) {
  ops::FusedStep s;
  s.op = op;
  s.operands = std::move(operands);
  s.dtype = t;
  return s;
}

TEST(CudaElementwise, FusedChainMixingDtypesRoundsEveryStep) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const Shape &out : {Shape{2, 3, 9}, Shape{4096}, Shape{1}}) {
    SCOPED_TRACE(str(out));
    OpCase c;
    c.op = "fused";
    const Shape bias = {out.back()};
    c.inputs = {HostTensor::random(DType::F16, out, 31, -3, 3),
                HostTensor::random(DType::F32, bias, 32, -1, 1),
                HostTensor::random(DType::I1, out, 33)};
    c.steps = {
        step("cast", {0}, DType::F32),        step("add", {-1, 1}, DType::F32),
        step("gelu", {-2}, DType::F32),       step("cast", {-3}, DType::BF16),
        step("mul", {-4, -4}, DType::BF16),   step("cast", {-5}, DType::F16),
        step("where", {2, -6, 0}, DType::F16)};
    c.steps[2].attrs.setString("approximate", "tanh");
    c.outputs = {HostTensor::empty(DType::F16, out)};
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaElementwise, FusedChainThroughIntegersAndF64) {
  AMPC_SKIP_WITHOUT_GPU();
  OpCase c;
  c.op = "fused";
  c.inputs = {HostTensor::random(DType::BF16, {3, 67}, 41, -300, 300),
              HostTensor::random(DType::I32, {67}, 42, -5, 5)};
  c.steps = {step("cast", {0}, DType::I32),    // truncates
             step("add", {-1, 1}, DType::I32), // wraps
             step("cast", {-2}, DType::F64),   //
             step("sqrt", {-3}, DType::F64),   // NaN below 0
             step("cast", {-4}, DType::I64),   // NaN -> 0
             step("clip", {-5}, DType::I64),   //
             step("cast", {-6}, DType::F16)};
  c.steps[5].attrs.setFloat("max", 12.5);
  c.outputs = {HostTensor::empty(DType::F16, {3, 67})};
  expectCudaMatchesCpu(c);
}

// The comparisons in every dtype they take (equal on bools too), with a
// broadcast operand and with equal operands (ties); the logical ops on i1;
// a comparison feeding a where inside a fused chain.
TEST(CudaElementwise, ComparisonsAndLogicalOps) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kAll)
    for (const char *op :
         {"equal", "less", "less_equal", "greater", "greater_equal"}) {
      if (t == DType::I1 && std::string(op) != "equal")
        continue;
      SCOPED_TRACE(caseLabel(op, t, {5, 13}));
      OpCase c;
      c.op = op;
      c.inputs = {HostTensor::random(t, {5, 13}, seedOf(op, 1), -3, 3),
                  HostTensor::random(t, {13}, seedOf(op, 2), -3, 3)};
      c.outputs = {HostTensor::empty(DType::I1, {5, 13})};
      expectCudaMatchesCpu(c);
      OpCase ties = c;
      ties.inputs[1] = HostTensor::random(t, {5, 13}, seedOf(op, 1), -3, 3);
      expectCudaMatchesCpu(ties);
    }
  for (const char *op : {"logical_and", "logical_or", "logical_xor"}) {
    SCOPED_TRACE(op);
    OpCase c;
    c.op = op;
    c.inputs = {HostTensor::random(DType::I1, {3, 1, 9}, seedOf(op, 1)),
                HostTensor::random(DType::I1, {4, 9}, seedOf(op, 2))};
    c.outputs = {HostTensor::empty(DType::I1, {3, 4, 9})};
    expectCudaMatchesCpu(c);
  }
  OpCase n;
  n.op = "logical_not";
  n.inputs = {HostTensor::random(DType::I1, {4099}, 5)};
  n.outputs = {HostTensor::empty(DType::I1, {4099})};
  expectCudaMatchesCpu(n);
  OpCase f;
  f.op = "fused";
  f.inputs = {HostTensor::random(DType::F16, {37, 129}, 6, -3, 3),
              HostTensor::random(DType::F16, {129}, 7, -1, 1)};
  // A comparison of an earlier step's f16 result, negated: the predicate
  // steps read operands from slots as well as from inputs.
  f.steps = {
      step("mul", {0, 1}, DType::F16), step("greater", {-1, 1}, DType::I1),
      step("logical_not", {-2}, DType::I1),
      step("where", {-3, 0, 1}, DType::F16), step("sub", {-4, 1}, DType::F16)};
  f.outputs = {HostTensor::empty(DType::F16, {37, 129})};
  expectCudaMatchesCpu(f);
}

TEST(CudaElementwise, LongFusedChainReusesSlots) {
  AMPC_SKIP_WITHOUT_GPU();
  OpCase c;
  c.op = "fused";
  c.inputs = {HostTensor::random(DType::F32, {777}, 51, -1, 1),
              HostTensor::random(DType::F32, {777}, 52, -1, 1)};
  c.steps.push_back(step("add", {0, 1}, DType::F32));
  // Each step reads the previous one and an input; every fourth also reads
  // a result three steps back, so several stay alive.
  for (int s = 1; s < 40; ++s) {
    if (s % 4 == 0 && s >= 3)
      c.steps.push_back(step("sub", {-s, -(s - 2)}, DType::F32));
    else
      c.steps.push_back(step(s % 2 ? "mul" : "add", {-s, s % 2}, DType::F32));
  }
  c.steps.push_back(step("tanh", {-40}, DType::F32));
  c.outputs = {HostTensor::empty(DType::F32, {777})};
  expectCudaMatchesCpu(c);
}

TEST(CudaElementwise, FusedBroadcastInputsAndUnusedInput) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    OpCase c;
    c.op = "fused";
    c.inputs = {HostTensor::random(t, {2, 1, 5, 1, 3}, 61, -2, 2),
                HostTensor::random(t, {4, 1, 1, 3}, 62, -2, 2),
                HostTensor::random(t, {3}, 63), // never read
                HostTensor::random(t, {1}, 64, -2, 2)};
    c.steps = {step("mul", {0, 1}, t), step("sub", {-1, 3}, t),
               step("relu", {-2}, t)};
    c.outputs = {HostTensor::empty(t, {2, 4, 5, 1, 3})};
    expectCudaMatchesCpu(c);
  }
}

TEST(CudaElementwise, InPlaceOutputOverlaysAnInput) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    OpCase c = binaryCase("add", t, {1029}, {1029}, {1029}, -1, 1, -1, 1);
    c.inPlace = {1};
    expectCudaMatchesCpu(c);
    OpCase b = binaryCase("mul", t, {9, 31}, {31}, {9, 31}, -1, 1, -1, 1);
    b.inPlace = {0};
    expectCudaMatchesCpu(b);
  }
}

} // namespace
} // namespace ampc::rt::cuda::test
