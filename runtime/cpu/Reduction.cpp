//===- Reduction.cpp - reduce_sum/mean/max, softmax, log_softmax ----------===//
//
// Reductions merge adjacent dimensions that are all reduced or all kept, so
// every case becomes either contiguous rows reduced to one value each (the
// last dimension is reduced) or contiguous vectors accumulated elementwise
// (the last dimension is kept); both vectorize and split across threads by
// output, so no two threads write the same element. Floats accumulate in
// f32 (f64 for f64), integers exactly in int64 (wrapping). Losses
// (Losses.cpp) join the table from here.
//
//===----------------------------------------------------------------------===//
#include "runtime/cpu/KernelHelpers.h"
#include "runtime/ops/ReducePlan.h"

#include <cmath>
#include <limits>

namespace ampc::rt::cpu {
namespace {
using namespace kh;

enum class RKind { Sum, Mean, Max };

template <typename T> T identity(RKind k) {
  if (k != RKind::Max)
    return T(0);
  if constexpr (std::is_floating_point<T>::value)
    return -std::numeric_limits<T>::infinity();
  else
    return std::numeric_limits<T>::min();
}
// max with NaN propagation (once NaN, stays NaN).
template <typename T> T maxT(T acc, T v) {
  if constexpr (std::is_floating_point<T>::value)
    return (v > acc || v != v) ? v : acc;
  else
    return v > acc ? v : acc;
}

template <typename T> T reduceRow(RKind k, const T *x, int64_t n) {
  if (k != RKind::Max) {
    if constexpr (std::is_same<T, int64_t>::value) {
      uint64_t s = 0;
      for (int64_t i = 0; i < n; ++i)
        s += static_cast<uint64_t>(x[i]);
      return static_cast<int64_t>(s);
    } else {
      return sumRow(x, n);
    }
  }
  if constexpr (std::is_floating_point<T>::value) {
    // Lanes keep this vectorizable; NaN is checked for separately.
    constexpr int L = 16;
    T acc[L];
    std::fill(acc, acc + L, -std::numeric_limits<T>::infinity());
    bool nan = false;
    int64_t i = 0;
    for (; i + L <= n; i += L)
      for (int l = 0; l < L; ++l) {
        T v = x[i + l];
        acc[l] = v > acc[l] ? v : acc[l];
        nan |= v != v;
      }
    T m = -std::numeric_limits<T>::infinity();
    for (int l = 0; l < L; ++l)
      m = acc[l] > m ? acc[l] : m;
    for (; i < n; ++i)
      m = maxT(m, x[i]);
    if (nan)
      for (int64_t j = 0; j < n; ++j)
        if (x[j] != x[j])
          return x[j];
    return m;
  } else {
    T m = identity<T>(k);
    for (int64_t i = 0; i < n; ++i)
      m = maxT(m, x[i]);
    return m;
  }
}

template <typename T> T finish(RKind k, T v, int64_t count) {
  if (k != RKind::Mean)
    return v;
  if constexpr (std::is_same<T, int64_t>::value)
    return count == 0 ? 0 : v / count; // truncates toward zero
  else
    return v / static_cast<T>(count);
}

template <typename T>
void runReduceT(const OpCall &call, RKind kind, const CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  std::vector<int64_t> axes = call.attrs->getInts("axes");
  int64_t outN = out.numElements();
  if (outN == 0)
    return;
  if (x.numElements() == 0) { // every output reduces an empty set
    std::vector<T> v(static_cast<size_t>(outN),
                     finish(kind, identity<T>(kind), 0));
    storeAny(v.data(), outN, out, 0);
    return;
  }
  const ReducePlan p = planReduce(x.shape, axes);
  const size_t last = p.last();
  const std::vector<int64_t> &redOffs = p.redOffs;
  if (p.reduced[last]) {
    // Each output reduces redOffs.size() contiguous rows of length L.
    int64_t len = p.dims[last];
    int64_t grain = std::max<int64_t>(
        1, 16384 / std::max<int64_t>(1, len * (int64_t)redOffs.size()));
    parallelFor(ctx, outN, grain, [&](int64_t b, int64_t e) {
      std::vector<T> row(static_cast<size_t>(len)), res(e - b);
      for (int64_t o = b; o < e; ++o) {
        int64_t base = p.keptBase(o);
        T acc = identity<T>(kind);
        for (int64_t r : redOffs) {
          loadAny(x, base + r, len, row.data());
          T v = reduceRow(kind, row.data(), len);
          acc = kind == RKind::Max ? maxT(acc, v) : wrappingAdd(acc, v);
        }
        res[o - b] = finish(kind, acc, p.count);
      }
      storeAny(res.data(), e - b, out, b);
    });
    return;
  }
  // The last dim is kept: accumulate contiguous vectors elementwise, in
  // chunks so there are enough tasks even with one output vector.
  int64_t vec = p.dims[last];
  int64_t prefixes = outN / vec;
  constexpr int64_t kChunk = 2048;
  int64_t chunks = (vec + kChunk - 1) / kChunk;
  parallelFor(ctx, prefixes * chunks, 1, [&](int64_t b, int64_t e) {
    std::vector<T> acc(kChunk), row(kChunk);
    for (int64_t t = b; t < e; ++t) {
      int64_t pre = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, vec - j0);
      int64_t base = p.keptBase(pre) + j0;
      std::fill(acc.begin(), acc.begin() + w, identity<T>(kind));
      for (int64_t r : redOffs) {
        loadAny(x, base + r, w, row.data());
        if (kind == RKind::Max)
          for (int64_t j = 0; j < w; ++j)
            acc[j] = maxT(acc[j], row[j]);
        else
          for (int64_t j = 0; j < w; ++j)
            acc[j] = wrappingAdd(acc[j], row[j]);
      }
      for (int64_t j = 0; j < w; ++j)
        acc[j] = finish(kind, acc[j], p.count);
      storeAny(acc.data(), w, out, pre * vec + j0);
    }
  });
}

template <RKind K> Status runReduce(const OpCall &call, CpuContext &ctx) {
  DType t = call.inputs[0].dtype;
  if (isInt(t))
    runReduceT<int64_t>(call, K, ctx);
  else if (t == DType::F64)
    runReduceT<double>(call, K, ctx);
  else
    runReduceT<float>(call, K, ctx);
  return Status::ok();
}

//===----------------------------------------------------------------------===//
// softmax / log_softmax
//===----------------------------------------------------------------------===//

template <typename T>
void runSoftmaxT(const OpCall &call, bool log, const CpuContext &ctx) {
  const TensorView &x = call.inputs[0], &out = call.outputs[0];
  int64_t axis = call.attrs->getInt("axis");
  int64_t outer = product(x.shape, 0, axis), len = x.shape[axis];
  int64_t inner = product(x.shape, axis + 1, x.shape.size());
  if (x.numElements() == 0)
    return;
  constexpr int64_t kChunk = 256;
  int64_t chunks = (inner + kChunk - 1) / kChunk;
  int64_t grain = std::max<int64_t>(1, 8192 / std::max<int64_t>(1, len));
  parallelFor(ctx, outer * chunks, grain, [&](int64_t b, int64_t e) {
    std::vector<T> buf;
    for (int64_t t = b; t < e; ++t) {
      int64_t o = t / chunks, j0 = (t % chunks) * kChunk;
      int64_t w = std::min(kChunk, inner - j0);
      buf.resize(static_cast<size_t>(len * w));
      int64_t base = o * len * inner + j0;
      loadRows(x, base, len, inner, w, buf.data());
      softmaxColumns(buf.data(), len, w, log);
      storeRows(buf.data(), len, inner, w, out, base);
    }
  });
}

template <bool Log> Status runSoftmax(const OpCall &call, CpuContext &ctx) {
  if (call.inputs[0].dtype == DType::F64)
    runSoftmaxT<double>(call, Log, ctx);
  else
    runSoftmaxT<float>(call, Log, ctx);
  return Status::ok();
}

} // namespace

void addReductionKernels(std::vector<KernelEntry> &out) {
  out.push_back({"reduce_sum", runReduce<RKind::Sum>});
  out.push_back({"reduce_mean", runReduce<RKind::Mean>});
  out.push_back({"reduce_max", runReduce<RKind::Max>});
  out.push_back({"softmax", runSoftmax<false>});
  out.push_back({"log_softmax", runSoftmax<true>});
  addLossKernels(out);
}

} // namespace ampc::rt::cpu
