//===- NumericKernelTestUtil.h - helpers for numeric kernel tests ---------===//
//
// Owned by the contraction/normalization/reduction kernel tests: test
// tensors whose elements are written (rounded to nearest even via Half.h's
// scalar conversions) and read as doubles, a call builder that checks
// without data and then runs, and tolerance comparisons per dtype. The
// references the tests compare against are naive double loops over the
// values actually stored.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_NUMERICKERNELTESTUTIL_H
#define AMPC_TEST_RUNTIME_NUMERICKERNELTESTUTIL_H

#include "ElementValue.h"
#include "KernelAttrs.h"
#include "runtime/Half.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/cpu/Parallel.h"
#include "runtime/ops/Check.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace ampc::rt::nktest {

struct Buf {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint64_t> storage;

  Buf() = default;
  Buf(DType t, Shape s) : dtype(t), shape(std::move(s)) {
    storage.assign((numElements(shape) * sizeOf(t) + 7) / 8 + 1, 0);
  }
  int64_t size() const { return numElements(shape); }
  char *bytes() { return reinterpret_cast<char *>(storage.data()); }
  const char *bytes() const {
    return reinterpret_cast<const char *>(storage.data());
  }
  TensorView view(bool withData = true) {
    TensorView v;
    v.dtype = dtype;
    v.shape = shape;
    v.data = withData ? storage.data() : nullptr;
    return v;
  }
  void set(int64_t i, double v) {
    test::writeElement(bytes() + i * sizeOf(dtype), dtype, v);
  }
  double get(int64_t i) const {
    return test::readElement(bytes() + i * sizeOf(dtype), dtype);
  }
  std::vector<double> values() const {
    std::vector<double> v(static_cast<size_t>(size()));
    for (int64_t i = 0; i < size(); ++i)
      v[i] = get(i);
    return v;
  }
};

inline Buf makeBuf(DType t, Shape s, const std::vector<double> &vals) {
  Buf b(t, std::move(s));
  EXPECT_EQ(static_cast<int64_t>(vals.size()), b.size());
  for (int64_t i = 0; i < b.size() && i < (int64_t)vals.size(); ++i)
    b.set(i, vals[i]);
  return b;
}

// Uniform values in [lo, hi), or small integers for integer dtypes.
inline Buf randomBuf(DType t, Shape s, uint32_t seed, double lo = -1,
                     double hi = 1) {
  Buf b(t, std::move(s));
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::uniform_int_distribution<int> ui(-5, 5);
  for (int64_t i = 0; i < b.size(); ++i)
    b.set(i, isInt(t) ? ui(rng) : u(rng));
  return b;
}

// One kernel call: inputs (a null Buf* is an absent optional), outputs.
struct Call {
  std::string op;
  Attrs attrs;
  std::vector<Buf *> ins;
  std::vector<Buf *> outs;

  ops::OpCall make(bool withData) const {
    ops::OpCall c;
    c.op = op;
    c.attrs = &attrs;
    for (Buf *b : ins) {
      c.present.push_back(b != nullptr);
      c.inputs.push_back(b ? b->view(withData) : TensorView{});
    }
    for (Buf *b : outs)
      c.outputs.push_back(b->view(withData));
    return c;
  }
  Status check() const { return ops::checkKernel(make(false)); }
  // Checks (as the Program loader does), then runs; `collective`: the
  // ranks a data-parallel kernel exchanges with.
  Status run(cpu::ThreadPool *pool = nullptr,
             Collective *collective = nullptr) const {
    Status s = check();
    if (!s)
      return s;
    cpu::CpuContext ctx{pool, collective};
    return cpu::runKernel(make(true), ctx);
  }
};

using test::gemmAttrs;

// An sgd_update's attributes, as the compiler writes them.
inline Attrs sgdAttrs(double weightDecay = 0) {
  Attrs a;
  a.setFloat("weight_decay", weightDecay);
  return a;
}

// A loss's (or its gradient's) attributes, as the compiler writes them
// (ignore_index is optional: none).
inline Attrs lossAttrs(const char *reduction = "mean") {
  Attrs a;
  a.setString("reduction", reduction);
  return a;
}

// A reduction's keepdims, as the compiler writes it; the test sets axes.
inline Attrs reduceAttrs(bool keepdims = true) {
  Attrs a;
  a.setInt("keepdims", keepdims);
  return a;
}

// Same dtype, shape and stored bytes.
inline bool sameBits(const Buf &a, const Buf &b) {
  return a.dtype == b.dtype && a.shape == b.shape &&
         std::memcmp(a.bytes(), b.bytes(), a.size() * sizeOf(a.dtype)) == 0;
}

inline cpu::ThreadPool &testPool() {
  static cpu::ThreadPool pool(4);
  return pool;
}

// Tolerance for a value stored in `t` that was computed in f32 (relative to
// the reference, plus an absolute floor for values near zero).
inline double relTol(DType t) {
  switch (t) {
  case DType::F16:
    return 2e-3;
  case DType::BF16:
    return 1.6e-2;
  case DType::F64:
    return 1e-12;
  default:
    return 2e-5;
  }
}

// alpha * op(a) op(b) + beta * c in f64 over the stored values, with c
// (rank <= 2) broadcast to the product's [m, n].
inline std::vector<double> refGemm(const Buf &a, const Buf &b, const Buf *c,
                            double alpha, double beta, bool ta, bool tb) {
  int64_t m = ta ? a.shape[1] : a.shape[0], k = ta ? a.shape[0] : a.shape[1];
  int64_t n = tb ? b.shape[0] : b.shape[1];
  std::vector<double> out;
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += (ta ? a.get(p * m + i) : a.get(i * k + p)) *
             (tb ? b.get(j * k + p) : b.get(p * n + j));
      double v = alpha * s;
      if (c) {
        // Broadcast c (rank <= 2) to [m, n].
        int64_t rows = c->shape.size() == 2 ? c->shape[0] : 1;
        int64_t cols = c->shape.empty() ? 1 : c->shape.back();
        v += beta * c->get((rows == 1 ? 0 : i) * cols + (cols == 1 ? 0 : j));
      }
      out.push_back(v);
    }
  return out;
}

inline void expectNear(const Buf &got, const std::vector<double> &ref,
                       double absTol, double relTolerance,
                       const std::string &what = "") {
  ASSERT_EQ(got.size(), static_cast<int64_t>(ref.size())) << what;
  int failures = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    double g = got.get(i), r = ref[i];
    if (std::isnan(r)) {
      EXPECT_TRUE(std::isnan(g)) << what << " element " << i;
      continue;
    }
    double tol = absTol + relTolerance * std::fabs(r);
    if (!(std::fabs(g - r) <= tol) && failures++ < 10)
      ADD_FAILURE() << what << " element " << i << ": got " << g
                    << ", expected " << r << " (tol " << tol << ")";
  }
}

// Test-name suffix for dtype-parameterized suites.
inline std::string dtypeName(const ::testing::TestParamInfo<DType> &info) {
  return std::string(name(info.param));
}

inline void expectError(const Status &s, const std::string &fragment) {
  ASSERT_FALSE(s.isOk()) << "expected an error containing '" << fragment << "'";
  EXPECT_NE(s.message().find(fragment), std::string::npos)
      << "message: " << s.message();
}

} // namespace ampc::rt::nktest

#endif // AMPC_TEST_RUNTIME_NUMERICKERNELTESTUTIL_H
