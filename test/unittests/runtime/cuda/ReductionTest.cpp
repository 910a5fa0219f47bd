//===- ReductionTest.cpp - CUDA reductions against the CPU ----------------===//
//
// reduce_sum, reduce_mean and reduce_max in every dtype they take, over
// ranks 1 to 5 with the last dim reduced (row kernel) or kept (column
// kernel), several axis groups, keepdims on and off, size-1 and empty dims,
// and shapes with few outputs over many elements (the two-pass split).
// reduce_max with NaN and ties; reduce_max_grad sharing a group's grad
// among tied maxima.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"
#include "runtime/ops/ReducePlan.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kNumeric[] = {DType::F32, DType::F16, DType::BF16,
                          DType::F64, DType::I64, DType::I32};
const DType kFloats[] = {DType::F32, DType::F16, DType::BF16, DType::F64};
const char *const kOps[] = {"reduce_sum", "reduce_mean", "reduce_max"};

OpCase reduceCase(const std::string &op, const HostTensor &x,
                  const std::vector<int64_t> &axes, bool keep) {
  OpCase c;
  c.op = op;
  c.attrs.setInts("axes", axes);
  c.attrs.setInt("keepdims", keep);
  c.inputs = {x};
  c.outputs = {
      HostTensor::empty(x.dtype, ops::reducedShape(x.shape, axes, keep))};
  return c;
}

struct Case {
  Shape shape;
  std::vector<int64_t> axes;
};

const Case kCases[] = {
    {{37}, {0}},
    {{3, 5, 7}, {2}},
    {{3, 5, 7}, {1}},
    {{3, 5, 7}, {0}},
    {{3, 5, 7}, {0, 2}},
    {{3, 5, 7}, {0, 1, 2}},
    {{2, 3, 4, 5}, {1, 2}},
    {{2, 3, 4, 5, 6}, {1, 3}},
    {{2, 3, 4, 5, 6}, {0, 2, 4}},
    {{5, 1, 7}, {1}},
    {{1, 1}, {0}},
    {{0, 3}, {0}}, // every output reduces nothing
    {{3, 0}, {0}}, // no outputs
    {{4099}, {0}},
    {{3, 70001}, {1}}, // few long rows: split in chunks
    {{70001, 3}, {0}}, // few long columns: split in chunks
    {{33, 2049}, {1}},
    {{129, 65}, {0}},
};

std::string label(const std::string &op, DType t, const Case &k, bool keep) {
  return op + " " + std::string(name(t)) + " " + str(k.shape) + " axes " +
         str(k.axes) + (keep ? " keepdims" : "");
}

TEST(CudaReduction, EveryOpDtypeAndLayout) {
  AMPC_SKIP_WITHOUT_GPU();
  for (const char *op : kOps)
    for (DType t : kNumeric)
      for (const Case &k : kCases)
        for (bool keep : {true, false}) {
          SCOPED_TRACE(label(op, t, k, keep));
          // Non-negative floats keep long sums away from cancellation, so
          // the summation order (not the CPU's) moves only the last bits.
          HostTensor x = isInt(t)
                             ? HostTensor::random(t, k.shape, 21, -1000, 1000)
                             : HostTensor::random(t, k.shape, 21, 0, 1);
          Tolerance tol;
          if (std::string(op) != "reduce_max" && t == DType::F32)
            tol = {1e-5, 1e-4};
          expectCudaMatchesCpu(reduceCase(op, x, k.axes, keep), tol);
        }
}

TEST(CudaReduction, MaxPropagatesNaNAndInfinities) {
  AMPC_SKIP_WITHOUT_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(name(t));
    HostTensor x = HostTensor::fromValues(
        t, {3, 4}, {1, nan, 3, 2, -inf, -inf, -inf, -inf, 0, -0.0, 5, 5});
    expectCudaMatchesCpu(reduceCase("reduce_max", x, {1}, false));
    expectCudaMatchesCpu(reduceCase("reduce_max", x, {0}, true));
  }
}

TEST(CudaReduction, IntegerSumsWrapAndMeansTruncate) {
  AMPC_SKIP_WITHOUT_GPU();
  const double big = 9.2e18;
  HostTensor x =
      HostTensor::fromValues(DType::I64, {2, 3}, {big, big, 1, -7, 2, 0});
  expectCudaMatchesCpu(reduceCase("reduce_sum", x, {1}, false));
  expectCudaMatchesCpu(reduceCase("reduce_mean", x, {1}, false));
  HostTensor y = HostTensor::fromValues(DType::I32, {4}, {-7, 2, 0, 0});
  expectCudaMatchesCpu(reduceCase("reduce_mean", y, {0}, true));
}

TEST(CudaReduction, MaxGradSharesAmongTies) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kFloats)
    for (const Case &k : kCases)
      for (bool keep : {true, false}) {
        SCOPED_TRACE(label("reduce_max_grad", t, k, keep));
        // Small integers: many elements tie for the maximum.
        std::vector<double> v(numElements(k.shape));
        for (size_t i = 0; i < v.size(); ++i)
          v[i] = double((i * 7919) % 5);
        HostTensor x = HostTensor::fromValues(t, k.shape, v);
        std::vector<HostTensor> m;
        ASSERT_TRUE(runCpu(reduceCase("reduce_max", x, k.axes, keep), m));
        OpCase c;
        c.op = "reduce_max_grad";
        c.attrs.setInts("axes", k.axes);
        c.attrs.setInt("keepdims", keep);
        c.inputs = {HostTensor::random(t, m[0].shape, 22, -2, 2), x, m[0]};
        c.outputs = {HostTensor::empty(t, k.shape)};
        expectCudaMatchesCpu(c);
      }
}

TEST(CudaReduction, MaxGradNaNMaximum) {
  AMPC_SKIP_WITHOUT_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : kFloats) {
    SCOPED_TRACE(name(t));
    HostTensor x = HostTensor::fromValues(t, {2, 3}, {1, nan, nan, 4, 4, 2});
    HostTensor m = HostTensor::fromValues(t, {2}, {nan, 4});
    OpCase c;
    c.op = "reduce_max_grad";
    c.attrs.setInts("axes", {1});
    c.attrs.setInt("keepdims", 0);
    c.inputs = {HostTensor::fromValues(t, {2}, {3, 5}), x, m};
    c.outputs = {HostTensor::empty(t, {2, 3})};
    expectCudaMatchesCpu(c);
  }
}

} // namespace
} // namespace ampc::rt::cuda::test
