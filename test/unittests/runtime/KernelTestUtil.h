//===- KernelTestUtil.h - tensors and calls for CPU kernel tests ----------===//
//
// Owned by the elementwise/movement kernel tests: owning test tensors whose
// elements are written and read with the scalar conversions of Half.h (the
// reference that HalfTest checks), naive index helpers, and a runner that
// checks a call before running it, as the Program loader does.
//
//===----------------------------------------------------------------------===//
#ifndef AMPC_TEST_RUNTIME_KERNELTESTUTIL_H
#define AMPC_TEST_RUNTIME_KERNELTESTUTIL_H

#include "ElementValue.h"
#include "runtime/Half.h"
#include "runtime/cpu/CpuKernels.h"
#include "runtime/ops/Check.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

namespace ampc::rt::test {

struct Tensor {
  DType dtype = DType::F32;
  Shape shape;
  std::vector<uint64_t> storage; // 8-byte aligned

  Tensor() = default;
  Tensor(DType t, Shape s) : dtype(t), shape(std::move(s)) {
    storage.assign((numElements(shape) * sizeOf(t) + 7) / 8 + 1, 0);
  }
  int64_t size() const { return numElements(shape); }
  void *data() { return storage.data(); }
  TensorView view() {
    TensorView v;
    v.dtype = dtype;
    v.shape = shape;
    v.data = storage.data();
    return v;
  }
  // Raw element bits (for bit-exact comparisons).
  uint64_t bits(int64_t i) const {
    uint64_t b = 0;
    std::memcpy(
        &b, reinterpret_cast<const char *>(storage.data()) + i * sizeOf(dtype),
        sizeOf(dtype));
    return b;
  }
  // Writes v rounded to the dtype (f16/bf16 through f32: callers use values
  // that are exact in f32). Ints take the value as is.
  void set(int64_t i, double v) {
    writeElement(reinterpret_cast<char *>(storage.data()) + i * sizeOf(dtype),
                 dtype, v);
  }
  void setInt(int64_t i, int64_t v) {
    char *p = reinterpret_cast<char *>(storage.data()) + i * sizeOf(dtype);
    if (dtype == DType::I64)
      std::memcpy(p, &v, 8);
    else if (dtype == DType::I32) {
      int32_t x = static_cast<int32_t>(v);
      std::memcpy(p, &x, 4);
    } else {
      set(i, static_cast<double>(v));
    }
  }
  double get(int64_t i) const {
    return readElement(reinterpret_cast<const char *>(storage.data()) +
                           i * sizeOf(dtype),
                       dtype);
  }
  int64_t getInt(int64_t i) const {
    uint64_t b = bits(i);
    if (dtype == DType::I64)
      return static_cast<int64_t>(b);
    if (dtype == DType::I32)
      return static_cast<int32_t>(static_cast<uint32_t>(b));
    return static_cast<int64_t>(get(i));
  }
};

inline Tensor makeTensor(DType t, Shape s, const std::vector<double> &v) {
  Tensor x(t, std::move(s));
  for (int64_t i = 0; i < x.size(); ++i)
    x.set(i, v[i % v.size()]);
  return x;
}

// Deterministic pseudo-random values in [lo, hi), rounded to the dtype.
inline Tensor randomTensor(DType t, Shape s, double lo, double hi,
                           uint64_t seed) {
  Tensor x(t, std::move(s));
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + 1;
  for (int64_t i = 0; i < x.size(); ++i) {
    z = z * 6364136223846793005ull + 1442695040888963407ull;
    double u = static_cast<double>(z >> 11) * 0x1.0p-53;
    double v = lo + (hi - lo) * u;
    if (t == DType::I64 || t == DType::I32 || t == DType::I1)
      v = std::floor(v);
    x.set(i, v);
  }
  return x;
}

inline std::vector<int64_t> unravel(int64_t i, const Shape &s) {
  std::vector<int64_t> idx(s.size());
  for (size_t d = s.size(); d-- > 0;) {
    idx[d] = s[d] ? i % s[d] : 0;
    i = s[d] ? i / s[d] : 0;
  }
  return idx;
}

// The element of a tensor of shape `in` that numpy broadcasting reads for
// output index `outIdx`.
inline int64_t broadcastSource(const std::vector<int64_t> &outIdx,
                               const Shape &in) {
  size_t off = outIdx.size() - in.size();
  int64_t lin = 0;
  for (size_t d = 0; d < in.size(); ++d)
    lin = lin * in[d] + (in[d] == 1 ? 0 : outIdx[off + d]);
  return lin;
}

// A step of a "fused" call: `op` on `operands` (>= 0: kernel input; < 0:
// step -k-1), its result in `dtype`.
inline ops::FusedStep fusedStep(const char *op, std::vector<int> operands,
                                DType dtype) {
  ops::FusedStep s;
  s.op = op;
  s.operands = std::move(operands);
  s.dtype = dtype;
  return s;
}

struct Call {
  ops::OpCall call;
  Attrs attrs;
  std::vector<ops::FusedStep> steps;

  Call(std::string op, std::vector<Tensor *> ins, std::vector<Tensor *> outs) {
    call.op = std::move(op);
    call.attrs = &attrs;
    for (Tensor *t : ins) {
      call.inputs.push_back(t->view());
      call.present.push_back(true);
    }
    for (Tensor *t : outs)
      call.outputs.push_back(t->view());
  }
  Status check() {
    call.attrs = &attrs;
    call.steps = steps.empty() ? nullptr : &steps;
    return ops::checkKernel(call);
  }
  Status run(cpu::ThreadPool *pool = nullptr) {
    Status s = check();
    if (!s)
      return s;
    cpu::CpuContext ctx{pool};
    return cpu::runKernel(call, ctx);
  }
};

} // namespace ampc::rt::test

#endif // AMPC_TEST_RUNTIME_KERNELTESTUTIL_H
