//===- CudnnTest.cpp - CUDA conv, batch norm and pooling against the CPU --===//
//
// conv2d (with and without bias), conv2d_backward_data/filter, batch norm
// (training, inference, grad), max/avg pooling and their gradients, and
// global_avg_pool, in f32/f16/bf16 (and f64 where the CUDA kernels take
// it), over strides, symmetric and asymmetric pads (the explicitly padded
// path and the one cuDNN's symmetric padding covers), dilations, groups,
// odd sizes, batches of 1 and 3, empty batches, ceil mode,
// count_include_pad, max-pool ties and NaN.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kFloats[] = {DType::F32, DType::F16, DType::BF16};
const DType kFloatsAndF64[] = {DType::F32, DType::F16, DType::BF16, DType::F64};

std::string typeName(DType t) { return std::string(name(t)); }

//===----------------------------------------------------------------------===//
// conv2d and its gradients
//===----------------------------------------------------------------------===//

struct Conv {
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
  Attrs attrs() const {
    Attrs a;
    a.setInts("strides", strides);
    a.setInts("pads", pads);
    a.setInts("dilations", dilations);
    a.setInt("group", group);
    return a;
  }
  std::string str() const {
    return "x" + rt::str(input()) + " w" + rt::str(filter()) + " strides" +
           rt::str(strides) + " pads" + rt::str(pads) + " dilations" +
           rt::str(dilations) + " group " + std::to_string(group);
  }
};

const Conv kConvs[] = {
    // 3x3 same padding, batch 3, odd sizes
    {3, 3, 7, 9, 5, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1},
    // batch 1, stride 2, asymmetric pads that change the windows
    // (explicitly padded path)
    {1, 4, 7, 6, 6, 3, 2, {2, 1}, {1, 0, 2, 1}, {1, 2}, 2},
    // asymmetric pads whose extra end padding is never read (cuDNN's
    // symmetric padding gives the same windows)
    {3, 2, 7, 7, 3, 3, 3, {2, 2}, {1, 1, 2, 2}, {1, 1}, 1},
    // pads only at the end
    {1, 3, 5, 5, 2, 2, 2, {1, 1}, {0, 0, 1, 1}, {1, 1}, 1},
    // 1x1 stride 1 unpadded
    {3, 6, 5, 3, 7, 1, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1},
    // depthwise, dilation 2
    {3, 8, 9, 7, 8, 3, 3, {1, 1}, {2, 2, 2, 2}, {2, 2}, 8},
    // grouped, stride larger than the kernel
    {3, 6, 11, 10, 9, 2, 2, {3, 3}, {0, 0, 0, 0}, {1, 1}, 3},
    // kernel covering the whole padded input
    {1, 1, 2, 2, 1, 4, 4, {3, 3}, {1, 1, 1, 1}, {1, 1}, 1},
};

// cuDNN may pick a Winograd or FFT algorithm, whose f32 rounding differs
// from a direct sum by more than the f32 default.
Tolerance f32Tol(DType t) {
  Tolerance tol;
  if (t == DType::F32)
    tol = {1e-4, 1e-4};
  return tol;
}

OpCase convCase(const Conv &cv, DType t, bool bias, uint64_t seed) {
  OpCase c;
  c.op = "conv2d";
  c.attrs = cv.attrs();
  c.inputs = {HostTensor::random(t, cv.input(), seed),
              HostTensor::random(t, cv.filter(), seed + 1)};
  if (bias)
    c.inputs.push_back(HostTensor::random(t, {cv.o}, seed + 2));
  c.outputs = {HostTensor::empty(t, cv.output())};
  return c;
}

OpCase convDataCase(const Conv &cv, DType t, uint64_t seed) {
  OpCase c;
  c.op = "conv2d_backward_data";
  c.attrs = cv.attrs();
  c.inputs = {HostTensor::random(t, cv.output(), seed),
              HostTensor::random(t, cv.filter(), seed + 1)};
  c.outputs = {HostTensor::empty(t, cv.input())};
  return c;
}

OpCase convFilterCase(const Conv &cv, DType t, uint64_t seed) {
  OpCase c;
  c.op = "conv2d_backward_filter";
  c.attrs = cv.attrs();
  c.inputs = {HostTensor::random(t, cv.output(), seed),
              HostTensor::random(t, cv.input(), seed + 1)};
  c.outputs = {HostTensor::empty(t, cv.filter())};
  return c;
}

TEST(CudaCudnn, Conv2dEveryGeometryAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 100;
  for (const Conv &cv : kConvs)
    for (DType t : kFloatsAndF64)
      for (bool bias : {false, true}) {
        SCOPED_TRACE("conv2d " + typeName(t) + " " + cv.str() +
                     (bias ? " bias" : ""));
        expectCudaMatchesCpu(convCase(cv, t, bias, seed += 3), f32Tol(t));
      }
}

TEST(CudaCudnn, Conv2dBackwardDataEveryGeometryAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 200;
  for (const Conv &cv : kConvs)
    for (DType t : kFloatsAndF64) {
      SCOPED_TRACE("conv2d_backward_data " + typeName(t) + " " + cv.str());
      expectCudaMatchesCpu(convDataCase(cv, t, seed += 2), f32Tol(t));
    }
}

TEST(CudaCudnn, Conv2dBackwardFilterEveryGeometryAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 300;
  for (const Conv &cv : kConvs)
    for (DType t : kFloatsAndF64) {
      SCOPED_TRACE("conv2d_backward_filter " + typeName(t) + " " + cv.str());
      // The filter gradient sums over the batch and the output plane:
      // larger sums, compared relative to their size.
      expectCudaMatchesCpu(convFilterCase(cv, t, seed += 2), f32Tol(t));
    }
}

TEST(CudaCudnn, Conv2dTf32StaysCloseToF32) {
  AMPC_SKIP_WITHOUT_GPU();
  CudaDevice *device = testDevice();
  const Conv cv{3, 16, 9, 9, 32, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
  OpCase c = convCase(cv, DType::F32, true, 7);
  std::vector<HostTensor> expected;
  ASSERT_TRUE(runCpu(c, expected).isOk());
  std::vector<std::vector<HostTensor>> got;
  Status s = runCuda(*device, {c}, got, /*allowTf32=*/true);
  ASSERT_TRUE(s.isOk()) << s.message();
  // TF32 keeps 10 mantissa bits: 144 products of values in [-1, 1].
  expectClose(expected[0], got[0][0], {2e-2, 2e-3}, "conv2d tf32");
}

TEST(CudaCudnn, ConvEmptyBatchAndEmptyChannels) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats) {
    SCOPED_TRACE(typeName(t));
    // N = 0: empty outputs, and a filter gradient of zeros.
    const Conv empty{0, 2, 5, 5, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
    expectCudaMatchesCpu(convCase(empty, t, true, 1));
    expectCudaMatchesCpu(convDataCase(empty, t, 2));
    expectCudaMatchesCpu(convFilterCase(empty, t, 3));
    // C = 0: the output is the bias alone.
    const Conv noChannels{2, 0, 4, 4, 3, 3, 3, {1, 1}, {1, 1, 1, 1}, {1, 1}, 1};
    expectCudaMatchesCpu(convCase(noChannels, t, true, 4));
    expectCudaMatchesCpu(convCase(noChannels, t, false, 5));
  }
}

//===----------------------------------------------------------------------===//
// batch norm
//===----------------------------------------------------------------------===//

const Shape kBnShapes[] = {{3, 5, 7, 9}, {1, 3, 4, 4},   {3, 4},
                           {1, 2, 1, 1}, {3, 7, 33, 31}, {2, 3, 5}};

OpCase bnTrainingCase(DType t, DType p, const Shape &s, uint64_t seed,
                      double momentum = 0.9) {
  int64_t c = s[1];
  OpCase k;
  k.op = "batch_norm_training";
  k.attrs.setFloat("epsilon", 1e-5);
  k.attrs.setFloat("momentum", momentum);
  k.inputs = {HostTensor::random(t, s, seed, -2, 3),
              HostTensor::random(p, {c}, seed + 1, 0.5, 1.5),
              HostTensor::random(p, {c}, seed + 2),
              HostTensor::random(p, {c}, seed + 3),
              HostTensor::random(p, {c}, seed + 4, 0.5, 2)};
  k.outputs = {HostTensor::empty(t, s)};
  for (int i = 0; i < 4; ++i)
    k.outputs.push_back(HostTensor::empty(p, {c}));
  return k;
}

TEST(CudaCudnn, BatchNormTrainingEveryShapeAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 400;
  for (const Shape &s : kBnShapes)
    for (DType t : kFloatsAndF64) {
      SCOPED_TRACE("batch_norm_training " + typeName(t) + " " + str(s));
      expectCudaMatchesCpu(bnTrainingCase(t, DType::F32, s, seed += 5));
      // Parameters in the data's dtype (O3) and momentum 0 / 1.
      expectCudaMatchesCpu(bnTrainingCase(t, t, s, seed += 5, 0.0));
      expectCudaMatchesCpu(bnTrainingCase(t, DType::F32, s, seed += 5, 1.0));
    }
}

TEST(CudaCudnn, BatchNormTrainingLargeMeanIsStable) {
  AMPC_SKIP_WITHOUT_GPU();
  // A mean far from zero: the two-pass variance must not cancel.
  OpCase k = bnTrainingCase(DType::F32, DType::F32, {3, 4, 17, 19}, 9);
  k.inputs[0] = HostTensor::random(DType::F32, {3, 4, 17, 19}, 9, 1000, 1001);
  expectCudaMatchesCpu(k, {1e-4, 1e-4});
}

TEST(CudaCudnn, BatchNormInferenceEveryShapeAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 500;
  for (const Shape &s : kBnShapes)
    for (DType t : kFloatsAndF64)
      for (DType p : {DType::F32, t}) {
        SCOPED_TRACE("batch_norm_inference " + typeName(t) + " params " +
                     typeName(p) + " " + str(s));
        int64_t c = s[1];
        OpCase k;
        k.op = "batch_norm_inference";
        k.attrs.setFloat("epsilon", 1e-3);
        k.inputs = {HostTensor::random(t, s, seed += 5, -2, 3),
                    HostTensor::random(p, {c}, seed + 1, 0.5, 1.5),
                    HostTensor::random(p, {c}, seed + 2),
                    HostTensor::random(p, {c}, seed + 3),
                    HostTensor::random(p, {c}, seed + 4, 0.5, 2)};
        k.outputs = {HostTensor::empty(t, s)};
        expectCudaMatchesCpu(k);
      }
}

TEST(CudaCudnn, BatchNormInferenceEmptyBatch) {
  AMPC_SKIP_WITHOUT_GPU();
  OpCase k;
  k.op = "batch_norm_inference";
  k.attrs.setFloat("epsilon", 1e-5);
  k.inputs = {HostTensor::random(DType::F16, {0, 3, 4, 4}, 1),
              HostTensor::random(DType::F32, {3}, 2),
              HostTensor::random(DType::F32, {3}, 3),
              HostTensor::random(DType::F32, {3}, 4),
              HostTensor::random(DType::F32, {3}, 5, 0.5, 1)};
  k.outputs = {HostTensor::empty(DType::F16, {0, 3, 4, 4})};
  expectCudaMatchesCpu(k);
}

TEST(CudaCudnn, BatchNormGradEveryShapeAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 600;
  for (const Shape &s : kBnShapes)
    for (DType t : kFloatsAndF64)
      for (DType p : {DType::F32, t}) {
        SCOPED_TRACE("batch_norm_grad " + typeName(t) + " params " +
                     typeName(p) + " " + str(s));
        int64_t c = s[1];
        OpCase k;
        k.op = "batch_norm_grad";
        k.inputs = {HostTensor::random(t, s, seed += 5),
                    HostTensor::random(t, s, seed + 1, -2, 3),
                    HostTensor::random(p, {c}, seed + 2, 0.5, 1.5),
                    HostTensor::random(p, {c}, seed + 3, 0, 1),
                    HostTensor::random(p, {c}, seed + 4, 0.5, 2)};
        k.outputs = {HostTensor::empty(t, s), HostTensor::empty(p, {c}),
                     HostTensor::empty(p, {c})};
        // scale_grad and bias_grad sum up to thousands of terms.
        Tolerance tol;
        if (p == DType::F32 || p == DType::F64)
          tol = {1e-4, 1e-4};
        expectCudaMatchesCpu(k, tol);
      }
}

//===----------------------------------------------------------------------===//
// pooling
//===----------------------------------------------------------------------===//

struct Pool {
  Shape input;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool ceil, countIncludePad;

  Attrs attrs(bool isMax) const {
    Attrs a;
    a.setInts("kernel_shape", kernel);
    a.setInts("strides", strides);
    a.setInts("pads", pads);
    if (isMax)
      a.setInts("dilations", dilations);
    a.setInt("ceil_mode", ceil);
    if (!isMax)
      a.setInt("count_include_pad", countIncludePad);
    return a;
  }
  // WindowGeometry.h's planPool.
  Shape output() const {
    Shape out{input[0], input[1], 0, 0};
    for (int i = 0; i < 2; ++i) {
      int64_t span = dilations[i] * (kernel[i] - 1) + 1;
      int64_t rem = input[2 + i] + pads[i] + pads[i + 2] - span;
      int64_t o =
          (ceil ? (rem + strides[i] - 1) / strides[i] : rem / strides[i]) + 1;
      if (ceil && (o - 1) * strides[i] >= input[2 + i] + pads[i])
        --o;
      out[2 + i] = o;
    }
    return out;
  }
  std::string str() const {
    return "x" + rt::str(input) + " k" + rt::str(kernel) + " s" +
           rt::str(strides) + " p" + rt::str(pads) + " d" + rt::str(dilations) +
           (ceil ? " ceil" : "") +
           (countIncludePad ? " count_include_pad" : "");
  }
};

const Pool kPools[] = {
    {{3, 4, 7, 9}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, false},
    {{1, 3, 7, 9}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, true, false},
    {{3, 2, 8, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, false, true},
    {{3, 2, 8, 7}, {3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}, true, true},
    {{1, 5, 6, 11}, {3, 2}, {2, 3}, {1, 0, 2, 1}, {1, 1}, true, false},
    {{3, 3, 10, 9}, {3, 3}, {1, 1}, {2, 1, 0, 2}, {2, 3}, false, true},
    {{1, 1, 1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, {1, 1}, false, false},
    {{3, 2, 5, 5}, {5, 5}, {1, 1}, {2, 2, 2, 2}, {1, 1}, true, true},
    {{0, 2, 5, 5}, {2, 2}, {2, 2}, {0, 0, 0, 0}, {1, 1}, false, false},
};

OpCase poolCase(const std::string &op, const Pool &p, DType t, uint64_t seed,
                const HostTensor *input = nullptr) {
  bool isMax = op.rfind("max", 0) == 0;
  bool grad = op.find("_grad") != std::string::npos;
  OpCase c;
  c.op = op;
  c.attrs = p.attrs(isMax);
  HostTensor x = input ? *input : HostTensor::random(t, p.input, seed);
  if (!grad) {
    c.inputs = {x};
    c.outputs = {HostTensor::empty(t, p.output())};
    return c;
  }
  c.inputs = {HostTensor::random(t, p.output(), seed + 1)};
  if (isMax)
    c.inputs.push_back(x);
  c.outputs = {HostTensor::empty(t, p.input)};
  return c;
}

TEST(CudaCudnn, PoolingEveryGeometryAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  uint64_t seed = 700;
  for (const Pool &p : kPools)
    for (DType t : kFloatsAndF64)
      for (const char *op :
           {"max_pool2d", "avg_pool2d", "max_pool2d_grad", "avg_pool2d_grad"}) {
        bool isMax = std::string(op).rfind("max", 0) == 0;
        // Average pooling has no dilations.
        if (!isMax && (p.dilations[0] != 1 || p.dilations[1] != 1))
          continue;
        SCOPED_TRACE(std::string(op) + " " + typeName(t) + " " + p.str());
        expectCudaMatchesCpu(poolCase(op, p, t, seed += 2));
      }
}

TEST(CudaCudnn, MaxPoolTiesGoToTheFirstMaximum) {
  AMPC_SKIP_WITHOUT_GPU();
  // Values from {0, 1, 2}: many windows hold their maximum more than once,
  // and the gradient goes to the first in row-major window order.
  const Pool overlapping{{3, 2, 7, 8}, {3, 3}, {1, 2}, {1, 1, 1, 0},
                         {1, 1},       true,   false};
  const Pool dilated{{1, 2, 9, 9}, {2, 3}, {2, 1}, {0, 1, 1, 2},
                     {3, 2},       false,  false};
  for (const Pool *p : {&overlapping, &dilated})
    for (DType t : kFloatsAndF64) {
      SCOPED_TRACE(typeName(t) + " " + p->str());
      std::vector<double> v(numElements(p->input));
      for (size_t i = 0; i < v.size(); ++i)
        v[i] = static_cast<double>((i * 7 + i / 5) % 3);
      HostTensor x = HostTensor::fromValues(t, p->input, v);
      expectCudaMatchesCpu(poolCase("max_pool2d", *p, t, 1, &x));
      expectCudaMatchesCpu(poolCase("max_pool2d_grad", *p, t, 2, &x));
      HostTensor flat = HostTensor::fromValues(
          t, p->input, std::vector<double>(v.size(), -3.0));
      expectCudaMatchesCpu(poolCase("max_pool2d_grad", *p, t, 3, &flat));
    }
}

TEST(CudaCudnn, MaxPoolPropagatesNaNAndInfinity) {
  AMPC_SKIP_WITHOUT_GPU();
  const Pool p{{1, 1, 4, 5}, {2, 2}, {1, 1}, {0, 0, 0, 0},
               {1, 1},       false,  false};
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> v = {1,   nan, 2, 3, -inf, 4, 5,  6,   nan, 7,
                           inf, 8,   9, 0, 1,    2, -1, nan, 3,   4};
  for (DType t : kFloatsAndF64) {
    SCOPED_TRACE(typeName(t));
    HostTensor x = HostTensor::fromValues(t, p.input, v);
    expectCudaMatchesCpu(poolCase("max_pool2d", p, t, 1, &x));
    expectCudaMatchesCpu(poolCase("max_pool2d_grad", p, t, 2, &x));
  }
}

TEST(CudaCudnn, GlobalAvgPoolEveryShapeAndDtype) {
  AMPC_SKIP_WITHOUT_GPU();
  const Shape shapes[] = {{3, 5, 7, 7}, {1, 3, 1, 1},    {3, 2, 33, 35},
                          {3, 4, 9},    {1, 2, 3, 4, 5}, {0, 3, 4, 4},
                          {3, 70, 2, 2}};
  uint64_t seed = 800;
  for (const Shape &s : shapes)
    for (DType t : kFloatsAndF64) {
      SCOPED_TRACE("global_avg_pool " + typeName(t) + " " + str(s));
      OpCase c;
      c.op = "global_avg_pool";
      c.inputs = {HostTensor::random(t, s, seed += 1)};
      Shape out = s;
      std::fill(out.begin() + 2, out.end(), 1);
      c.outputs = {HostTensor::empty(t, out)};
      expectCudaMatchesCpu(c);
    }
}

} // namespace
} // namespace ampc::rt::cuda::test
