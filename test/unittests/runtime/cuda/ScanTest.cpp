//===- ScanTest.cpp - CUDA arg_max, cumsum and top_k against the CPU ------===//
//
// Every dtype, every axis of a 3-D tensor and a long axis (cumsum's column
// walk, top_k's rank counting); cumsum with each exclusive/reverse
// combination, arg_max and top_k with ties and NaN, k from 0 to the whole
// axis. The running sums add in the CPU's order and compute type, so every
// comparison is within the default (dtype) tolerance.
//
//===----------------------------------------------------------------------===//
#include "CudaTestUtil.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cuda::test {
namespace {

const DType kNumeric[] = {DType::F32, DType::F16, DType::BF16,
                          DType::F64, DType::I64, DType::I32};
const Shape kShapes[] = {{3, 5, 4}, {2, 1, 7}, {1, 3000, 2}};

Shape along(Shape s, int64_t axis, int64_t size, bool keep = true) {
  if (keep)
    s[axis] = size;
  else
    s.erase(s.begin() + axis);
  return s;
}

// Few distinct values, so ties are common.
HostTensor tiedValues(DType t, const Shape &s, uint64_t seed) {
  HostTensor x = HostTensor::random(t, s, seed, -3, 3);
  std::vector<double> v;
  for (int64_t i = 0; i < numElements(s); ++i)
    v.push_back(std::round(x.at(i)));
  return HostTensor::fromValues(t, s, v);
}

TEST(CudaScan, CumSumEveryAxisAndDirection) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kNumeric)
    for (const Shape &s : kShapes)
      for (int64_t axis = 0; axis < 3; ++axis)
        for (int flags = 0; flags < 4; ++flags) {
          SCOPED_TRACE(caseLabel("cumsum", t, s) + " axis " +
                       std::to_string(axis) + " flags " +
                       std::to_string(flags));
          OpCase c;
          c.op = "cumsum";
          c.attrs.setInt("axis", axis);
          c.attrs.setInt("exclusive", flags & 1);
          c.attrs.setInt("reverse", flags >> 1);
          c.inputs = {HostTensor::random(t, s, 5 + flags)};
          c.outputs = {HostTensor::empty(t, s)};
          expectCudaMatchesCpu(c);
        }
}

TEST(CudaScan, ArgMaxAndTopKWithTies) {
  AMPC_SKIP_WITHOUT_GPU();
  for (DType t : kNumeric)
    for (const Shape &s : kShapes)
      for (int64_t axis = 0; axis < 3; ++axis) {
        HostTensor x = tiedValues(t, s, 11 + axis);
        for (int last = 0; last < 2; ++last) {
          SCOPED_TRACE(caseLabel("arg_max", t, s) + " axis " +
                       std::to_string(axis));
          OpCase c;
          c.op = "arg_max";
          c.attrs.setInt("axis", axis);
          c.attrs.setInt("keepdims", last);
          c.attrs.setInt("select_last_index", last);
          c.inputs = {x};
          c.outputs = {HostTensor::empty(DType::I64, along(s, axis, 1, last))};
          expectCudaMatchesCpu(c);
        }
        for (int64_t k : {int64_t(0), int64_t(1), s[axis] / 2, s[axis]})
          for (int largest = 0; largest < 2; ++largest) {
            SCOPED_TRACE(caseLabel("top_k", t, s) + " axis " +
                         std::to_string(axis) + " k " + std::to_string(k));
            OpCase c;
            c.op = "top_k";
            c.attrs.setInt("axis", axis);
            c.attrs.setInt("k", k);
            c.attrs.setInt("largest", largest);
            c.inputs = {x};
            c.outputs = {HostTensor::empty(t, along(s, axis, k)),
                         HostTensor::empty(DType::I64, along(s, axis, k))};
            expectCudaMatchesCpu(c);
          }
      }
}

TEST(CudaScan, NaNIsTheMaximum) {
  AMPC_SKIP_WITHOUT_GPU();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (DType t : {DType::F32, DType::F16, DType::BF16, DType::F64}) {
    SCOPED_TRACE(name(t));
    HostTensor x =
        HostTensor::fromValues(t, {2, 4}, {1, nan, 3, nan, 2, 2, -1, 2});
    for (int last = 0; last < 2; ++last) {
      OpCase c;
      c.op = "arg_max";
      c.attrs.setInt("axis", 1);
      c.attrs.setInt("keepdims", 0);
      c.attrs.setInt("select_last_index", last);
      c.inputs = {x};
      c.outputs = {HostTensor::empty(DType::I64, {2})};
      expectCudaMatchesCpu(c);
    }
    OpCase k;
    k.op = "top_k";
    k.attrs.setInt("axis", 1);
    k.attrs.setInt("k", 3);
    k.attrs.setInt("largest", 1);
    k.inputs = {x};
    k.outputs = {HostTensor::empty(t, {2, 3}),
                 HostTensor::empty(DType::I64, {2, 3})};
    expectCudaMatchesCpu(k);
  }
}

} // namespace
} // namespace ampc::rt::cuda::test
